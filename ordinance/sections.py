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

from .keys import Key, Shape, Tables


@dataclass(frozen=True)
class Table:
    """A preset table: who reads it, what it says, and each of its keys with its kind and meaning (``shape``: what
``preset_check`` holds the table to and ``docs/presets.md`` lists)."""

    name: str
    reader: Callable[[Any], Any]
    owner: str
    meaning: str
    keys: dict[str, Key] = field(default_factory=dict)
    is_list: bool = False  # ``[[note]]``: an array of tables
    required: bool = False
    schemes: Any = None  # the registry of strategies its ``scheme`` names, if any
    empty: Any = None  # what the reader is given when a preset has no such table
    stored: bool = True  # False: the owning app keeps the table's dated rows itself (rate schedules, fees)
    shape: Shape | Tables = field(default_factory=Shape)

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
                     keys: dict[str, Key] | None = None, is_list: bool = False, required: bool = False,
                     schemes=None, scheme_key: str | None = "scheme", default_scheme: str | None = None,
                     checks: tuple = (), list_checks: tuple = (), stored: bool = True) -> None:
    """Register the reader of table ``name`` (once; the same reader again is ignored). ``keys`` are every key the
    table may hold (a scheme's own keys are on its class, ``KEYS``); ``checks`` judge the table whole, and
    ``list_checks`` an array of such tables."""
    # A table whose strategy is chosen from its keys (a fee's rule) has no scheme key to hold it to.
    shape = Shape(dict(keys or {}), schemes=schemes if scheme_key else None, scheme_key=scheme_key or "",
                  default_scheme=default_scheme,
                  checks=tuple(checks))
    table = Table(name=name, reader=reader, owner=owner, meaning=meaning, keys=dict(keys or {}), is_list=is_list,
                  required=required, schemes=schemes, empty=[] if is_list else {}, stored=stored,
                  shape=Tables(shape, tuple(list_checks)) if is_list else shape)
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
