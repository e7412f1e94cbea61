"""The keys of a settings file, each with its kind and its meaning: one registry that checks a file and writes its doc.

A table is a ``Shape``: its keys, each a ``Key`` (what it means, its ``Kind``, whether it is required), and, where a
table names a strategy (``scheme = …``), the registry whose class adds its own keys (``KEYS`` on the class). A kind
judges a value by its meaning, not only its type: a price is never negative, NaN or beyond what a bill can hold; a
percentage is at most 100; a month is 1 to 12; a key that is not declared is refused, naming the table, the key, the
keys that are known and the nearest of them ("did you mean up_to_gallons?").

``problems(shape, value, where)`` lists every refusal of a table at once, each naming its table, key and value; the
readers that build the typed rules run only on a table with none. ``shape_rows`` lays a shape out for a doc, so the
doc and the check cannot disagree. The preset's tables (``ordinance.sections``) and the conversion's mapping file
(``conversion.legacy``) are held to their shapes here.
"""

import datetime
import difflib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any


class Kind:
    """What a value must be; ``problem`` says why it is not (or None)."""

    words = "a value"

    def problem(self, value) -> str | None:
        return None


@dataclass(frozen=True)
class Text(Kind):
    choices: tuple[str, ...] = ()
    blank: bool = True

    @property
    def words(self) -> str:
        return f"one of {', '.join(self.choices)}" if self.choices else "text"

    def problem(self, value):
        if not isinstance(value, str):
            return f"is not text ({self.words})"
        if self.choices and value not in self.choices:
            return f"is not one of {', '.join(self.choices)}"
        if not self.blank and not value.strip():
            return "is blank"
        return None


@dataclass(frozen=True)
class Flag(Kind):
    words = "true or false"

    def problem(self, value):
        return None if isinstance(value, bool) else "is not true or false"


@dataclass(frozen=True)
class Whole(Kind):
    low: int = 0
    high: int = 10**9
    unit: str = ""
    why: str = ""

    @property
    def words(self) -> str:
        return f"a whole number{' of ' + self.unit if self.unit else ''} from {self.low:,} to {self.high:,}"

    def problem(self, value):
        if isinstance(value, bool) or not isinstance(value, int):
            return f"is not {self.words}"
        if not self.low <= value <= self.high:
            return f"is not {self.words}" + (f" ({self.why})" if self.why else "")
        return None


@dataclass(frozen=True)
class Number(Kind):
    """A decimal number written as a string ("5.10"), or a whole number; never NaN or Infinity."""

    low: Decimal = Decimal(0)
    high: Decimal = Decimal(10**6)
    places: int | None = None
    above_low: bool = False  # the low bound itself is refused (a rate over 0)
    what: str = "a number"
    why: str = ""

    @property
    def words(self) -> str:
        low = f"over {self.low:,}" if self.above_low else f"from {self.low:,}"
        places = f", to {self.places} decimal places at most" if self.places is not None else ""
        return f"{self.what} {low} to {self.high:,}{places}"

    def problem(self, value):
        if isinstance(value, float) and not math.isfinite(value):
            return f"is not a number ({self.words})"
        if isinstance(value, float):
            # TOML reads 5.1 as binary floating point (5.0999…): money and rates are written as text, "5.10".
            return f"is written without quotes; write it as text, \"{value}\", so it is read exactly"
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            return f"is not {self.words}"
        try:
            number = Decimal(str(value).strip())
        except InvalidOperation:
            return f"is not {self.words}"
        if not number.is_finite():
            return f"is not a number ({self.words})"
        if number < self.low or (self.above_low and number == self.low) or number > self.high:
            return f"is not {self.words}" + (f" ({self.why})" if self.why else "")
        if self.places is not None and number != number.quantize(Decimal(1).scaleb(-self.places)):
            return f"has more than {self.places} decimal places ({self.words})"
        return None


def amount(high: str = "1000000", *, low: str = "0", why: str = "") -> Number:
    """Dollars and cents: no negative charge unless ``low`` says it is a credit."""
    return Number(low=Decimal(low), high=Decimal(high), places=2, what="an amount of dollars", why=why)


def rate(high: str = "10000", *, why: str = "") -> Number:
    return Number(high=Decimal(high), places=6, what="a rate in dollars", why=why)


def percent(*, why: str = "") -> Number:
    return Number(high=Decimal(100), places=4, above_low=True, what="a percentage", why=why)


@dataclass(frozen=True)
class Day(Kind):
    words = "a date (YYYY-MM-DD)"

    def problem(self, value):
        if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
            return None
        if isinstance(value, str):
            try:
                datetime.date.fromisoformat(value)
                return None
            except ValueError:
                pass
        return "is not a date (YYYY-MM-DD)"


@dataclass(frozen=True)
class ListOf(Kind):
    item: Kind
    empty: bool = True

    @property
    def words(self) -> str:
        return f"a list, each {self.item.words}"

    def problem(self, value):
        if not isinstance(value, list):
            return f"is not a list ({self.words})"
        if not value and not self.empty:
            return "is an empty list"
        for n, item in enumerate(value, 1):
            why = self.item.problem(item)
            if why:
                return f"item {n} ({item!r}) {why}"
        return None


@dataclass(frozen=True)
class Open(Kind):
    """A value its own reader checks whole (an OWRS rate document)."""

    words: str = "a table its reader checks"

    def problem(self, value):
        return None


@dataclass(frozen=True)
class Key:
    meaning: str
    kind: Any = Kind()  # a Kind, a Shape (a sub-table), a Tables (an array of sub-tables) or a MapOf
    required: bool = False


@dataclass(frozen=True)
class Shape:
    """A table: its keys; the strategy registry its ``scheme_key`` names, whose class adds ``KEYS``; and the checks
    of the table as a whole (block bounds in order) that run once its keys are sound."""

    keys: dict[str, Key] = field(default_factory=dict)
    schemes: Any = None
    scheme_key: str = "scheme"
    default_scheme: str | None = None
    checks: tuple[Callable[[dict, str], list[str]], ...] = ()

    def keys_for(self, value: dict) -> dict[str, Key]:
        if self.schemes is None:
            return self.keys
        name = value.get(self.scheme_key, self.default_scheme)
        return {**self.keys, **getattr(self.schemes.class_of(name), "KEYS", {})}


@dataclass(frozen=True)
class Tables:
    """An array of tables (``[[name]]``), each of the shape; ``checks`` judge the array whole (dates in order)."""

    shape: Shape
    checks: tuple[Callable[[list, str], list[str]], ...] = ()


@dataclass(frozen=True)
class MapOf:
    """A table whose keys are names the file chooses (categories, meter sizes), each value of one kind."""

    value: Any
    key_words: str = "a name"
    key_check: Callable[[str], str | None] | None = None


def _near(key: str, known) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _shown(value) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) else ("a table" if isinstance(value, dict) else "a list")
    return text if len(text) <= 60 else text[:57] + "…"


def problems(kind, value, where: str) -> list[str]:
    """Every refusal of ``value`` held to ``kind``; ``where`` names the table ("[rate_schedule.per_bill.other]")."""
    if isinstance(kind, Shape):
        return _table_problems(kind, value, where)
    if isinstance(kind, Tables):
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            return [f"{where} must be an array of tables ([[…]])"]
        found = []
        for n, item in enumerate(value, 1):
            found += _table_problems(kind.shape, item, f"{where[:-1]} #{n}]")
        if not found:
            for check in kind.checks:
                found += check(value, where)
        return found
    if isinstance(kind, MapOf):
        if not isinstance(value, dict):
            return [f"{where} must be a table ({kind.key_words} = …)"]
        found = []
        for key, item in value.items():
            why = kind.key_check(key) if kind.key_check else None
            if why:
                found.append(f"{where} {key}: {why}")
            found += _value_problems(kind.value, item, where, key)
        return found
    why = kind.problem(value)
    return [f"{where} {why}"] if why else []


def file_problems(shape: Shape, data: dict, *, noun: str) -> list[str]:
    """Every refusal of a whole settings file whose top-level tables are ``shape``'s keys: each table named as the
    file writes it ("[columns] acct: …"), a table the file should not have named with the known ones."""
    found = []
    for name, value in data.items():
        spec = shape.keys.get(name)
        if spec is None:
            found.append(f"[{name}] is not a table of {noun}; known tables: {', '.join(sorted(shape.keys))}"
                         + _near(name, shape.keys))
        else:
            found += problems(spec.kind, value, f"[{name}]")
    return found


def _value_problems(kind, value, where: str, key: str) -> list[str]:
    if isinstance(kind, (Shape, Tables, MapOf)):
        return problems(kind, value, f"{where[:-1]}.{key}]")
    why = kind.problem(value)
    return [f"{where} {key} = {_shown(value)} {why}"] if why else []


def _table_problems(shape: Shape, value, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where} must be a table"]
    if shape.schemes is not None:
        name = value.get(shape.scheme_key, shape.default_scheme)
        if name is None:
            return [f"{where} needs {shape.scheme_key} (one of {', '.join(shape.schemes.names())})"]
        if name not in shape.schemes.names():
            return [f"{where} {shape.scheme_key} = {_shown(name)} is not one of {', '.join(shape.schemes.names())}"
                    + _near(str(name), shape.schemes.names())]
    keys = shape.keys_for(value)
    found = []
    for key, item in value.items():
        if key not in keys:
            found.append(f"{where} {key} is not a key of this table; known keys: {', '.join(sorted(keys))}"
                         + _near(key, keys))
            continue
        found += _value_problems(keys[key].kind, item, where, key)
    found += [f"{where} needs {key} ({spec.meaning})" for key, spec in keys.items()
              if spec.required and key not in value]
    if not found:
        for check in shape.checks:
            found += check(value, where)
    return found


def shape_rows(kind, prefix: str = "") -> list[tuple[str, str, str]]:
    """(key, kind in words, meaning) of every key of a shape and its sub-tables, dotted from ``prefix``."""
    rows = []
    if isinstance(kind, Tables):
        kind = kind.shape
    if isinstance(kind, MapOf):
        return shape_rows(kind.value, f"{prefix}<{kind.key_words}>.") if isinstance(
            kind.value, (Shape, Tables, MapOf)) else rows
    for key, spec in kind.keys.items():
        name = prefix + key
        sub = spec.kind
        rows.append((name, kind_words(sub), spec.meaning + (" (required)" if spec.required else "")))
        if isinstance(sub, (Shape, Tables)):
            rows += shape_rows(sub, f"{name}.")
        elif isinstance(sub, MapOf) and isinstance(sub.value, (Shape, Tables, MapOf)):
            rows += shape_rows(sub.value, f"{name}.<{sub.key_words}>.")
    return rows


def kind_words(kind) -> str:
    if isinstance(kind, Shape):
        return "a table" + (f" naming its {kind.scheme_key}" if kind.schemes is not None else "")
    if isinstance(kind, Tables):
        return "an array of tables"
    if isinstance(kind, MapOf):
        value = kind_words(kind.value)
        return f"a table of {kind.key_words} = {value}"
    return kind.words


def doc_table(kind, prefix: str = "") -> list[str]:
    """The markdown table of a shape's keys."""
    rows = shape_rows(kind, prefix)
    if not rows:
        return []
    out = ["| key | value | meaning |", "|---|---|---|"]
    out += [f"| `{key}` | {words} | {meaning} |".replace("\n", " ") for key, words, meaning in rows]
    return out
