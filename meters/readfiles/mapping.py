"""A read-file mapping: how one meter system's file reads (``fixtures/readfiles/*.toml``; ``READ_MAPPINGS_DIR``).

``MAPPING`` is its one registry: every key with its kind and meaning. ``mapping_parse`` checks a mapping against it
(a key not declared is refused naming the table, the key and the nearest known one; every value by its kind), then
as a whole (the fields a reading needs, positions inside the width, route fields clear of the reading's), and
builds the ``ReadMapping`` the readers use. ``docs/readings.md`` is written from the same registry
(``meters.readfiles.doc``).
"""

from __future__ import annotations

import codecs
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from core.errors import ApplicationError
from ordinance.keys import Flag, Key, Kind, MapOf, Shape, Text, Whole, problems

from ..models import Reading, UsageAlert

READ_FIELD_MEANINGS = {
    "meter_serial": "the meter's serial, as on the meter record",
    "read_date": "the day read, written as `[dates] format` says",
    "reading": "the register read, a number in the file's unit (`[units]`)",
    "read_type": "the file's code for the kind of read (`[read_types]`); blank is an actual read",
    "flags": "the file's event codes (`[flags]`): each becomes a meter alert",
    "multiplier": "this record's own register multiplier (a whole number), times `[units] multiplier`",
    "no_flow_days": "the days the endpoint saw no flow (a whole number); more than 0 raises a no-flow alert",
    "new_meter_serial": "a change-out's new meter (read type `change`)",
    "new_meter_reading": "a change-out's new meter's first reading, in the file's unit",
    "new_meter_size": "a change-out's new meter's size; blank: the old meter's",
}
READ_FIELDS = tuple(READ_FIELD_MEANINGS)
ROUTE_FIELD_MEANINGS = {
    "route_stop": "the stop's place in the route",
    "account_no": "the account the meter serves",
    "service_address": "the service address",
    "meter_serial": "the meter's serial (where the reading record has it)",
    "meter_size": "the meter's size",
    "meter_unit": "the unit the meter registers (gal or cf)",
    "last_read_date": "the last reading's day (where the reading record has the read date)",
    "last_reading": "the last reading, in the file's unit (where the reading record has the reading)",
    "low": "the lowest register expected today, in the file's unit (rounded up)",
    "high": "the highest register expected today, in the file's unit (rounded down)",
}
ROUTE_FIELDS = tuple(ROUTE_FIELD_MEANINGS)
# A route field that is the reading record's own field: written where the reading is, so the file comes back.
ROUTE_READ_FIELDS = {"meter_serial": "meter_serial", "last_read_date": "read_date", "last_reading": "reading"}
NO_READ = "no_read"
READ_TYPES = (*Reading.ReadType.values, "change", NO_READ)
FLAGS = {"leak": UsageAlert.Kind.LEAK, "reverse_flow": UsageAlert.Kind.REVERSE_FLOW,
         "tamper": UsageAlert.Kind.TAMPER, "no_flow": UsageAlert.Kind.NO_FLOW,
         "register_mismatch": UsageAlert.Kind.MISMATCH}
NO_FLAG = "none"
# Units a file may read in, as (the family: the meter's unit it converts to, how many of that unit one is).
UNITS = {"gal": ("gal", 1), "kgal": ("gal", 1000), "cf": ("cf", 1), "ccf": ("cf", 100)}
ENCODINGS = ("utf-8", "latin-1", "cp1252", "utf-16")


@dataclass(frozen=True)
class Span(Kind):
    """[first, last] character positions, 1-based."""

    words = "[first, last] character positions, 1-based, first ≤ last"

    def problem(self, value):
        if (not isinstance(value, list) or len(value) != 2 or not all(type(n) is int for n in value)
                or not 1 <= value[0] <= value[1]):
            return f"({value!r}) is not {self.words}"
        return None


@dataclass(frozen=True)
class Place(Kind):
    """Where a control record keeps a figure: [first, last] in a fixed layout, the value's number in a CSV one."""

    words = "[first, last] character positions (fixed), or the value's place on the line, 1 for the first (CSV)"

    def problem(self, value):
        if type(value) is int:
            return None if 1 <= value <= 1000 else f"is not {self.words}"
        return Span().problem(value)


@dataclass(frozen=True)
class DateFormat(Kind):
    words = "a strftime format such as %m/%d/%Y"

    def problem(self, value):
        return None if isinstance(value, str) and "%" in value else f"is not {self.words}"


@dataclass(frozen=True)
class OneCharacter(Kind):
    choices: tuple[str, ...] = ()
    words_for: str = "one character"

    @property
    def words(self) -> str:
        return ", ".join(repr(c) for c in self.choices) if self.choices else self.words_for

    def problem(self, value):
        if not isinstance(value, str) or (self.choices and value not in self.choices) or (
                not self.choices and len(value) != 1):
            return f"is not {self.words}"
        return None


def _spans(fields: dict[str, str]) -> Shape:
    return Shape(keys={name: Key(meaning, Span()) for name, meaning in fields.items()})


def _columns(fields: dict[str, str]) -> Shape:
    return Shape(keys={name: Key(meaning, Text(blank=False)) for name, meaning in fields.items()})


CONTROL = Shape(keys={
    "prefix": Key("the record's first characters (fixed) or first value (CSV): a line that begins with them is this "
                  "record, not a reading", Text(blank=False), required=True),
    "count": Key("where the record says how many reading records the file has; a file with another number is "
                 "refused (a truncated or doubled file)", Place()),
    "total": Key("where the record says the sum of the readings as written; a file whose readings add to another "
                 "sum is refused", Place()),
    "required": Key("the file is refused without this record (a file cut off before its trailer); default true",
                    Flag()),
})

MAPPING = Shape(keys={
    "description": Key("what the mapping reads, shown on the upload page's layout list", Text()),
    "layout": Key("csv: a header line and delimited values; fixed: each field at its character positions; "
                  "default csv", Text(choices=("csv", "fixed"))),
    "reads": Key("register: each line is a register read (a handheld, a drive-by, a head-end's billing read); "
                 "daily: an AMI head-end's daily register reads, kept by month; interval: its hourly (or finer) "
                 "register reads, read_date a time (`[dates] format` with %H:%M) — each day's last read is kept as "
                 "the day's, and continuous flow is looked for hour by hour; default register",
                 Text(choices=("register", "daily", "interval"))),
    "encoding": Key("the file's character set; default utf-8 (a byte-order mark is read either way)",
                    Text(choices=ENCODINGS)),
    "delimiter": Key("csv: the character between values; default a comma", OneCharacter()),
    "width": Key("fixed: every reading line's length; a line of another length is refused", Whole(low=1, high=2000)),
    "record_prefix": Key("fixed: only lines that begin with it are readings (the header and trailer are not)",
                         Text()),
    "partial": Key("true: a line refused holds only its own meter (every line of that meter in the file) — the rest "
                   "is imported and the held lines are listed with why; the file's own controls (count, total, an "
                   "empty file) still refuse it whole. false (default): a file with any refusal saves nothing",
                   Flag()),
    "columns": Key("csv: our field = the file's header for it", _columns(READ_FIELD_MEANINGS)),
    "fields": Key("fixed: our field = [first, last] character, 1-based", _spans(READ_FIELD_MEANINGS)),
    "dates": Key("how the file writes a day", Shape(keys={
        "format": Key("a strftime format (%Y-%m-%d, %m/%d/%Y, %Y%m%d, %m%d%Y …); default %Y-%m-%d", DateFormat())})),
    "units": Key("how the file writes a register", Shape(keys={
        "unit": Key("the unit the file reads in — gal, kgal (thousands of gallons), cf (cubic feet), ccf (hundreds "
                    "of cubic feet) — converted to the meter's unit within its family; blank: the meter's own",
                    Text(choices=("", *UNITS))),
        "multiplier": Key("the register = the number × this (a register read in tens: 10); default 1",
                          Whole(low=1, high=1_000_000)),
        "decimal": Key("the decimal mark: \".\" (default) or \",\" (50082,16)", OneCharacter(choices=(".", ","))),
        "thousands": Key("the thousands separator the file may put in a number: \"\" (none, default), \",\", "
                         "\".\", \" \" or \"'\"", OneCharacter(choices=("", ",", ".", " ", "'"))),
        "signed": Key("true: a number may carry a leading + or - (a register below zero is still refused); "
                      "false (default): a sign is refused", Flag()),
        "fraction": Key("what to do with a register read to places finer than the meter's unit (a head-end's "
                        "50082,16 cf on a meter that registers whole cubic feet): refuse (default) the line, or drop "
                        "the fraction as the register's wheels do — registers are cumulative, so what is dropped from "
                        "one read is counted in the next and no use is lost", Text(choices=("refuse", "drop"))),
        "implied_decimals": Key("fixed: the places a number without a decimal mark has (0005008216 with 2 is "
                                "50082.16); default 0", Whole(low=0, high=4)),
    })),
    "read_types": Key(f"the file's code = ours: {', '.join(READ_TYPES)}. {NO_READ}: the reader could not read the "
                      "meter; nothing is recorded, and the code with its line is kept for the clerk as a missed "
                      "read (the bill goes to the run's exceptions or to the estimate rule)",
                      MapOf(Text(choices=READ_TYPES), key_words="a code of the file's")),
    "flags": Key(f"the file's event code = ours: {', '.join(FLAGS)}, or {NO_FLAG} (a code that means no event, "
                 "such as OK); `separator` is the character between codes in the field (left out: each character "
                 "is a code)", MapOf(Text(choices=(*FLAGS, NO_FLAG)), key_words="a code of the file's")),
    "header": Key("the file's header record, where the layout has one", CONTROL),
    "trailer": Key("the file's trailer record, where the layout has one", CONTROL),
    "route": Key("the route going out to the handheld (`route_file`)", Shape(keys={
        "columns": Key("csv: our route field = the header it is written under (the reading's own fields are "
                       "written under the mapping's [columns] names)", _columns(ROUTE_FIELD_MEANINGS)),
        "fields": Key("fixed: our route field = [first, last] character, clear of the reading record's fields",
                      _spans(ROUTE_FIELD_MEANINGS)),
    })),
})


@dataclass(frozen=True)
class Control:
    """A header or trailer record: its prefix, and where it keeps the count and the total (or None)."""

    prefix: str
    count: int | tuple[int, int] | None = None
    total: int | tuple[int, int] | None = None
    required: bool = True


@dataclass(frozen=True)
class ReadMapping:
    name: str
    description: str
    layout: str  # "csv" or "fixed"
    reads: str  # "register", "daily" or "interval"
    columns: dict[str, str] = field(default_factory=dict)  # csv: ours → the file's header
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)  # fixed: ours → (first, last), 1-based
    width: int | None = None
    record_prefix: str = ""
    delimiter: str = ","
    encoding: str = "utf-8"
    partial: bool = False
    date_format: str = "%Y-%m-%d"
    unit: str = ""
    multiplier: int = 1
    decimal: str = "."
    thousands: str = ""
    signed: bool = False
    drop_fraction: bool = False
    implied_decimals: int = 0
    read_types: dict[str, str] = field(default_factory=dict)
    flags: dict[str, str] = field(default_factory=dict)
    flag_separator: str = ""  # "": each character is a code
    header: Control | None = None
    trailer: Control | None = None
    route_columns: dict[str, str] = field(default_factory=dict)
    route_positions: dict[str, tuple[int, int]] = field(default_factory=dict)

    def named(self, ours: str) -> str:
        """Our field with the file's name for it: "reading (READ_VALUE)", "reading (characters 14–22)"."""
        if ours in self.columns:
            return f"{ours} ({self.columns[ours]})"
        if ours in self.positions:
            first, last = self.positions[ours]
            return f"{ours} (characters {first}–{last})"
        return ours

    @property
    def plain_numbers(self) -> bool:
        """A reading of digits alone is the register × the multiplier, in the meter's unit (the quick path)."""
        return not self.unit and not self.implied_decimals

    def code_for(self, read_type: str) -> str:
        """The file's code for one of our read types ("" where the mapping has none: blank is actual)."""
        return next((code for code, ours in self.read_types.items() if ours == read_type), "")


def mappings_dir() -> Path:
    return Path(settings.READ_MAPPINGS_DIR)


def mappings_available() -> list[tuple[str, str]]:
    """The mappings in ``READ_MAPPINGS_DIR``, as (name, its description)."""
    found = []
    for path in sorted(mappings_dir().glob("*.toml")):
        try:
            found.append((path.stem, mapping_load(path.stem).description))
        except ApplicationError:
            continue
    return found


def mapping_load(name_or_path: str | Path) -> ReadMapping:
    """A mapping by its name in ``READ_MAPPINGS_DIR`` or by its path, refused naming what is wrong in it."""
    path = Path(name_or_path)
    if not path.suffix:
        path = mappings_dir() / f"{name_or_path}.toml"
    try:
        raw = path.read_bytes()
    except OSError as exc:
        known = ", ".join(p.stem for p in sorted(mappings_dir().glob("*.toml")))
        raise ApplicationError(f"cannot read the mapping {name_or_path}: {exc.strerror} (the mappings here: {known})",
                               field="mapping") from None
    return mapping_parse(raw, name=path.stem)


def _pair(value) -> tuple[int, int] | int | None:
    return tuple(value) if isinstance(value, list) else value


def _control(table: dict | None) -> Control | None:
    if table is None:
        return None
    return Control(prefix=table["prefix"], count=_pair(table.get("count")), total=_pair(table.get("total")),
                   required=table.get("required", True))


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _whole_problems(data: dict, layout: str) -> list[str]:
    """The mapping as a whole, once every key is sound."""
    found = []
    given = data.get("columns", {}) if layout == "csv" else data.get("fields", {})
    table = "[columns]" if layout == "csv" else "[fields]"
    found += [f"{table} {ours}: missing; a reading needs it" for ours in ("meter_serial", "read_date", "reading")
              if ours not in given]
    width = data.get("width")
    positions = {k: tuple(v) for k, v in data.get("fields", {}).items()}
    route = {k: tuple(v) for k, v in data.get("route", {}).get("fields", {}).items()}
    if layout == "fixed" and width is not None:
        found += [f"[fields] {ours} = {list(span)} ends after the width {width}" for ours, span in positions.items()
                  if span[1] > width]
        found += [f"[route.fields] {ours} = {list(span)} ends after the width {width}" for ours, span in route.items()
                  if span[1] > width]
    for ours, span in route.items():
        read_field = ROUTE_READ_FIELDS.get(ours)
        if read_field in positions and positions[read_field] != span:
            found.append(f"[route.fields] {ours} = {list(span)}: the reading record has {read_field} at "
                         f"{list(positions[read_field])}; a route field that is the reading's own is written where "
                         "the reading is, so the file comes back as it went out")
        elif read_field is None:
            found += [f"[route.fields] {ours} = {list(span)} overlaps [fields] {other} = {list(theirs)}: the route's "
                      "own fields are written clear of the reading record's" for other, theirs in positions.items()
                      if _overlap(span, theirs)]
    for name in ("header", "trailer"):
        control = data.get(name)
        if control is None:
            continue
        for what in ("count", "total"):
            place = control.get(what)
            if place is not None and isinstance(place, int) != (layout == "csv"):
                found.append(f"[{name}] {what} = {place!r}: a {layout} layout gives "
                             + ("the value's place on the line (1 for the first)" if layout == "csv"
                                else "[first, last] character positions"))
    if data.get("units", {}).get("implied_decimals") and layout != "fixed":
        found.append("[units] implied_decimals: only a fixed layout writes numbers without their decimal mark")
    units = data.get("units", {})
    if units.get("thousands") and units.get("thousands") == units.get("decimal", "."):
        found.append(f"[units] thousands = {units['thousands']!r} is the decimal mark too")
    if layout == "csv" and units.get("thousands") == data.get("delimiter", ","):
        found.append(f"[units] thousands = {units['thousands']!r} is the delimiter: quote such numbers in the file "
                     "and the value is read whole, but the mapping cannot tell them apart")
    return found


def mapping_parse(raw: bytes, *, name: str) -> ReadMapping:
    """``raw`` TOML checked against ``MAPPING`` key by key and as a whole, every refusal at once."""
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ApplicationError(f"the mapping {name} is not valid TOML: {exc}", field="mapping") from None
    flag_table = dict(data.get("flags", {})) if isinstance(data.get("flags"), dict) else data.get("flags")
    separator = flag_table.pop("separator", "") if isinstance(flag_table, dict) else ""
    found = []
    for key, value in data.items():
        spec = MAPPING.keys.get(key)
        where = f"[{key}]"
        if spec is None:
            found += problems(MAPPING, {key: value}, "the mapping:")
        elif key == "flags":
            found += problems(spec.kind, flag_table, where)
            if not isinstance(separator, str) or len(separator) > 1:
                found.append(f"[flags] separator = {separator!r} is not one character (left out: each character "
                             "is a code)")
        elif isinstance(spec.kind, (Shape, MapOf)):
            found += problems(spec.kind, value, where)
        else:
            why = spec.kind.problem(value)
            if why:
                found.append(f"{key} = {value!r} {why}")
    layout = data.get("layout", "csv")
    if not found:
        found += _whole_problems(data, layout)
    if found:
        raise ApplicationError(f"the mapping {name}: " + "; ".join(found), field="mapping")
    units, route = data.get("units", {}), data.get("route", {})
    encoding = codecs.lookup(data.get("encoding", "utf-8")).name
    return ReadMapping(
        name=name, description=str(data.get("description", name)), layout=layout, reads=data.get("reads", "register"),
        columns=dict(data.get("columns", {})), positions={k: tuple(v) for k, v in data.get("fields", {}).items()},
        width=data.get("width"), record_prefix=data.get("record_prefix", ""), delimiter=data.get("delimiter", ","),
        encoding=encoding, partial=data.get("partial", False), date_format=data.get("dates", {}).get("format",
                                                                                                      "%Y-%m-%d"),
        unit=units.get("unit", ""), multiplier=units.get("multiplier", 1), decimal=units.get("decimal", "."),
        thousands=units.get("thousands", ""), signed=units.get("signed", False),
        drop_fraction=units.get("fraction", "refuse") == "drop",
        implied_decimals=units.get("implied_decimals", 0), read_types=dict(data.get("read_types", {})),
        flags=dict(flag_table or {}), flag_separator=separator, header=_control(data.get("header")),
        trailer=_control(data.get("trailer")), route_columns=dict(route.get("columns", {})),
        route_positions={k: tuple(v) for k, v in route.get("fields", {}).items()})
