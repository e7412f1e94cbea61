"""The tables of a preset, each read by the app that owns it.

An app registers the reader of its own table from its ``AppConfig.ready`` (``section_register``): the reader turns
the table as installed into the app's typed rule, refusing with an ``ApplicationError`` that names the table and key.
The install runs every reader before it writes anything, and the app reads its section at run time through the same
reader (``ordinance.selectors.section``): what was checked is what is applied.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import ApplicationError


@dataclass(frozen=True)
class Table:
    """A preset table: who reads it, what it says, and what each of its keys means (for ``docs/presets.md``)."""

    name: str
    reader: Callable[[Any], Any]
    owner: str
    meaning: str
    keys: dict[str, str] = field(default_factory=dict)
    is_list: bool = False  # ``[[note]]``: an array of tables
    required: bool = False
    schemes: Any = None  # the registry of strategies its ``scheme`` names, if any
    empty: Any = None  # what the reader is given when a preset has no such table
    stored: bool = True  # False: the owning app keeps the table's dated rows itself (rate schedules, fees)

    def read(self, params):
        try:
            return self.reader(params)
        except ApplicationError:
            raise
        except KeyError as exc:
            raise ApplicationError(f"[{self.name}] needs {exc.args[0]}", field=self.name) from None
        except (TypeError, ValueError, ArithmeticError, AttributeError) as exc:
            raise ApplicationError(f"[{self.name}] has a value not of its kind ({exc})", field=self.name) from None


TABLES: dict[str, Table] = {}


def section_register(name: str, reader: Callable[[Any], Any], *, owner: str, meaning: str,
                     keys: dict[str, str] | None = None, is_list: bool = False, required: bool = False,
                     schemes=None, stored: bool = True) -> None:
    """Register the reader of table ``name`` (once; the same reader again is ignored)."""
    table = Table(name=name, reader=reader, owner=owner, meaning=meaning, keys=dict(keys or {}), is_list=is_list,
                  required=required, schemes=schemes, empty=[] if is_list else {}, stored=stored)
    known = TABLES.get(name)
    if known is not None and known.reader is not reader:
        raise ValueError(f"two readers of [{name}]: {known.owner} and {owner}")
    TABLES[name] = table


def table(name: str) -> Table:
    try:
        return TABLES[name]
    except KeyError:
        raise ApplicationError(f"no app reads a table [{name}]; known: {', '.join(sorted(TABLES))}",
                               field="preset") from None
