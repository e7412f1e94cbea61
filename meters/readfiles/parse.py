"""Reading a meter system's file through its mapping: the records, the file's own controls (header and trailer
counts and totals), numbers as the file writes them, dates, read types and flags. Every refusal names the line,
the field (ours, with the file's name for it) and the rule."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import ROUND_FLOOR, Decimal
from operator import itemgetter

from core.csvimport import ImportErrors, chunked
from core.errors import ApplicationError

from .. import rules
from ..models import Meter
from .mapping import NO_FLAG, NO_READ, READ_FIELDS, READ_TYPES, UNITS, Control, ReadMapping

(SERIAL, DATE, READING, TYPE, FLAG, MULTIPLIER, NO_FLOW, NEW_SERIAL, NEW_READING, NEW_SIZE) = range(len(READ_FIELDS))
PARSE_BATCH = 50_000
# A number as a file may write it once the thousands separators are gone and the decimal mark is a point: ASCII
# digits, at most one point, an optional sign. Never NaN, Infinity or an exponent.
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


@dataclass(slots=True)
class _Read:
    line: int
    serial: str
    read_on: date
    value: int
    read_type: str
    flags: list[str]
    no_flow_days: int = 0
    change: tuple[str, int, str] | None = None  # (new serial, its first reading, its size)
    at: datetime | None = None  # an interval read's time


@dataclass(frozen=True)
class MissedRead:
    """A line whose code says the meter was not read (``no_read``): its meter, day and the file's code."""

    line: int
    serial: str
    read_on: date
    code: str


@dataclass
class Parsed:
    reads: list[_Read]
    missed: list[MissedRead]
    serials: dict[int, str] | None = None  # each reading line's serial (a partial mapping's: what a refusal holds)


def file_number(value: str, mapping: ReadMapping) -> Decimal:
    """A number as the mapping's file writes it (decimal mark, thousands, sign, implied decimals); ValueError naming
    what it is not."""
    text = value.strip()
    if mapping.thousands:
        text = text.replace(mapping.thousands, "")
    if mapping.decimal != ".":
        if "." in text:
            raise ValueError(f"'{value}' is not a number written with the decimal mark {mapping.decimal!r}")
        text = text.replace(mapping.decimal, ".")
    if not NUMBER.fullmatch(text):
        raise ValueError(f"'{value}' is not a number" + ("" if text else ": it is blank"))
    if text[0] in "+-" and not mapping.signed:
        raise ValueError(f"'{value}' carries a sign; this layout's numbers are unsigned ([units] signed)")
    number = Decimal(text)
    if mapping.implied_decimals and "." not in text:
        number = number.scaleb(-mapping.implied_decimals)
    return number


def register_of(value: str, *, mapping: ReadMapping, multiplier: int, meter_unit: str, places: int = 0) -> int:
    """The register in the meter's steps: the file's number × the multiplier, converted where the units are of a
    family (gallons and thousands; cubic feet and hundreds), in 10^-places of the unit for a meter whose register
    shows ``places``; refused where it is not a whole number of steps (unless the mapping drops the fraction)."""
    number = file_number(value, mapping)
    file_unit = mapping.unit
    family, scale = UNITS.get(file_unit or meter_unit, (meter_unit, 1))
    if family != meter_unit:
        raise ValueError(f"the file reads in {file_unit} but the meter registers {meter_unit}; a register cannot be "
                         "converted between gallons and cubic feet")
    register = (number * multiplier * scale).scaleb(places)
    if register < 0:
        raise ValueError(f"'{value}' is below zero: a register never is")
    if register != register.to_integral_value():
        if mapping.drop_fraction:
            register = register.to_integral_value(rounding=ROUND_FLOOR)
        else:
            shown = register.scaleb(-places).normalize()
            raise ValueError(f"'{value}' × {multiplier * scale} is {shown:f} {meter_unit}: more places than the "
                             f"meter's register shows ({places}; [units] fraction)")
    problem = rules.register_problem(int(register))
    if problem:
        raise ValueError(problem)
    return int(register)


def _when(value: str, mapping: ReadMapping) -> datetime:
    try:
        return datetime.strptime(value, mapping.date_format)
    except ValueError:
        what = "a time" if mapping.reads == "interval" else "a date"
        raise ValueError(f"'{value}' is not {what} written {mapping.date_format}") from None


def _flags(value: str, mapping: ReadMapping) -> list[str]:
    if not value:
        return []
    codes = [c for c in (value.split(mapping.flag_separator) if mapping.flag_separator else list(value)) if c.strip()]
    unknown = [c for c in codes if c not in mapping.flags]
    if unknown:
        raise ValueError(f"flag code {', '.join(unknown)} is not in the mapping's [flags] "
                         f"({', '.join(mapping.flags) or 'none'})")
    return [mapping.flags[c] for c in codes if mapping.flags[c] != NO_FLAG]


# --- the records and the file's controls --------------------------------------------------------------------------

@dataclass
class _Controls:
    """What the file's header and trailer say, and what the file holds, checked at the end."""

    mapping: ReadMapping
    records: int = 0
    total: Decimal = Decimal(0)
    total_known: bool = True
    last_line: int = 0
    seen: dict | None = None  # "header"/"trailer" → (line, the figures it gives)

    def take(self, name: str, control: Control, number: int, figure) -> None:
        """A control record: ``figure(place)`` reads one of its figures."""
        self.seen = self.seen or {}
        said = {}
        for what in ("count", "total"):
            place = getattr(control, what)
            if place is None:
                continue
            raw = figure(place)
            try:
                said[what] = file_number(raw, self.mapping) if what == "total" else int(raw.strip())
            except ValueError:
                said[what] = raw
        self.seen[name] = (number, said)

    def problems(self, errors: ImportErrors) -> None:
        mapping, seen = self.mapping, self.seen or {}
        for name in ("header", "trailer"):
            control: Control | None = getattr(mapping, name)
            if control is None:
                continue
            if name not in seen:
                if control.required:
                    errors.add(line=self.last_line + (1 if name == "trailer" else 0), field=name,
                               message=f"the file has no {name} record (a line beginning {control.prefix!r}): "
                                       + ("it was cut off before its end" if name == "trailer" else
                                          "it is not this layout's file") + "; nothing is saved")
                continue
            line, said = seen[name]
            count = said.get("count")
            if control.count is not None and count != self.records:
                errors.add(line=line, field=f"{name} count", message=(
                    f"says {count} reading records; the file has {self.records}: a truncated or doubled file"
                    if isinstance(count, int) else f"'{count}' is not a count of records"))
            total = said.get("total")
            if control.total is not None and self.total_known and total != self.total:
                errors.add(line=line, field=f"{name} total", message=(
                    f"says the readings add to {total}; they add to {self.total}" if isinstance(total, Decimal)
                    else f"'{total}' is not a number"))
        if not self.records:
            errors.add(line=max(self.last_line, 1), field="file",
                       message=f"has no readings (no line read as a reading in the layout {mapping.name})")

    def count(self, reading: str) -> None:
        self.records += 1
        if self.mapping.header and self.mapping.header.total is not None or (
                self.mapping.trailer and self.mapping.trailer.total is not None):
            try:
                self.total += file_number(reading, self.mapping) if reading.strip() else 0  # a no-read: none
            except ValueError:
                self.total_known = False


def _records(text: str, mapping: ReadMapping, errors: ImportErrors, controls: _Controls):
    """Each reading line as (line number, the text of each of ``READ_FIELDS``, "" where the layout has none); a line
    that cannot be read is an error; the header and trailer records go to ``controls``."""
    kinds = [(name, control) for name in ("header", "trailer") if (control := getattr(mapping, name))]
    if mapping.layout == "fixed":
        spans = [(first - 1, last) if (first, last) != (0, 0) else None
                 for first, last in (mapping.positions.get(ours, (0, 0)) for ours in READ_FIELDS)]
        reading_span = spans[READING]
        prefix, width = mapping.record_prefix, mapping.width
        for number, line in enumerate(text.splitlines(), start=1):
            controls.last_line = number
            control = next(((name, c) for name, c in kinds if line.startswith(c.prefix)), None)
            if control:
                controls.take(*control, number, lambda place, line=line: line[place[0] - 1:place[1]])
                continue
            if not line.strip() or (prefix and not line.startswith(prefix)):
                continue
            controls.count(line[reading_span[0]:reading_span[1]])
            if width is not None and len(line) != width:
                errors.add(line=number, field="", message=f"is {len(line)} characters long; every reading line of "
                                                         f"this layout ({mapping.name}) is {width}")
                continue
            yield number, tuple(line[span[0]:span[1]].strip() if span else "" for span in spans)
        return
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=mapping.delimiter)
    header: list[str] = []
    for values in reader:
        control = next(((name, c) for name, c in kinds if values and values[0].strip() == c.prefix), None)
        if control:
            controls.take(*control, reader.line_num, lambda place, values=values: values[place - 1]
                          if place <= len(values) else "")
            continue
        header = [h.strip() for h in values]
        break
    for ours, theirs in mapping.columns.items():
        if theirs not in header and ours in ("meter_serial", "read_date", "reading"):
            raise ApplicationError(f"the file has no column {theirs} ({ours}, as the mapping {mapping.name} names "
                                   f"it); its header is {mapping.delimiter.join(header) or 'empty'}", field="header")
    # Each of READ_FIELDS by its column's place; a field the file has not is read from a blank put at the end.
    blank = len(header)
    places = [header.index(mapping.columns[ours]) if mapping.columns.get(ours) in header else blank
              for ours in READ_FIELDS]
    width = len(header)
    pick = itemgetter(*places)
    reading_place = places[READING]
    for values in reader:
        number = controls.last_line = reader.line_num
        if not "".join(values).strip():
            continue
        control = next(((name, c) for name, c in kinds if values[0].strip() == c.prefix), None)
        if control:
            controls.take(*control, number, lambda place, values=values: values[place - 1]
                          if place <= len(values) else "")
            continue
        controls.count(values[reading_place] if reading_place < len(values) else "")
        if len(values) != width:
            errors.add(line=number, field="", message=f"has {len(values)} values; the header has {width}")
            continue
        values.append("")
        yield number, pick(values)


# --- the reads ------------------------------------------------------------------------------------------------------

def meters_of(serials) -> dict[str, tuple[int, str, str, int]]:
    """Each serial's meter on file as (id, unit, size, the register's places)."""
    found = {}
    for chunk in chunked(sorted(serials)):
        for serial, pk, unit, size, places in Meter.objects.filter(serial__in=chunk).values_list(
                "serial", "id", "unit", "size", "places"):
            found[serial] = (pk, unit, size, places)
    return found


def parsed(text: str, mapping: ReadMapping, errors: ImportErrors, meters: dict | None = None,
           file_errors: ImportErrors | None = None) -> Parsed:
    """The file's reads and missed reads; ``meters`` (filled here when given) gets each serial's (id, unit, size).
    Read a batch of lines at a time, their meters looked up together, so that a file of millions of lines is never
    held twice. The file's controls are checked once it is read."""
    meters = meters if meters is not None else {}
    out = Parsed(reads=[], missed=[])
    batch: list = []
    dates: dict[str, datetime] = {}
    controls = _Controls(mapping)
    if mapping.partial:
        out.serials = {}
    for record in _records(text, mapping, errors, controls):
        batch.append(record)
        if len(batch) == PARSE_BATCH:
            _batch_parsed(batch, mapping, errors, meters, dates, out)
            batch = []
    _batch_parsed(batch, mapping, errors, meters, dates, out)
    controls.problems(file_errors if file_errors is not None else errors)
    return out


def _batch_parsed(records: list, mapping: ReadMapping, errors: ImportErrors, meters: dict, dates: dict,
                  out: Parsed) -> None:
    meters.update(meters_of({values[SERIAL].strip() for _, values in records} - meters.keys()))
    read_types, named, flags_of = mapping.read_types, mapping.named, _flags
    plain, scale, top = mapping.plain_numbers, mapping.multiplier, rules.REGISTER_MAX
    interval = mapping.reads == "interval"
    for line, values in records:
        serial = values[SERIAL].strip()
        if out.serials is not None:
            out.serials[line] = serial
        if serial not in meters:
            errors.add(line=line, field=named("meter_serial"),
                       message=f"no meter with serial '{serial}' is on file" if serial else "is blank")
            continue
        _, unit, size, places = meters[serial]
        raw_date = values[DATE].strip()
        when = dates.get(raw_date)
        if when is None:
            try:
                when = dates[raw_date] = _when(raw_date, mapping)
            except ValueError as exc:
                errors.add(line=line, field=named("read_date"), message=str(exc))
                continue
        read_on = when.date()
        code = values[TYPE].strip()
        read_type = read_types.get(code, code or "actual")
        if read_type not in READ_TYPES:
            errors.add(line=line, field=named("read_type"),
                       message=f"code '{code}' is not in the mapping's [read_types] ({', '.join(read_types)})")
            continue
        if read_type == NO_READ:
            out.missed.append(MissedRead(line=line, serial=serial, read_on=read_on, code=code))
            continue
        reading = values[READING].strip()
        multiplier = scale
        if values[MULTIPLIER]:
            own = values[MULTIPLIER].strip()
            if not (own.isascii() and own.isdigit() and int(own) >= 1):
                errors.add(line=line, field=named("multiplier"),
                           message=f"'{values[MULTIPLIER]}' is not a whole number, 1 or more")
                continue
            multiplier = int(own) * scale
        value = int(reading) * multiplier * 10 ** places \
            if plain and reading.isascii() and reading.isdigit() else top + 1  # the usual case, quickly
        if value > top:
            try:
                value = register_of(reading, mapping=mapping, multiplier=multiplier, meter_unit=unit, places=places)
            except ValueError as exc:
                errors.add(line=line, field=named("reading"), message=str(exc))
                continue
        try:
            flags = flags_of(values[FLAG].strip(), mapping) if values[FLAG] else []
            no_flow = int(values[NO_FLOW]) if values[NO_FLOW].strip() else 0
        except ValueError as exc:
            errors.add(line=line, field=named("flags"), message=str(exc))
            continue
        if no_flow and "no_flow" not in flags:
            flags.append("no_flow")
        read = _Read(line, serial, read_on, value, read_type, flags, no_flow, at=when if interval else None)
        if read_type == "change":
            if not values[NEW_SERIAL] or not values[NEW_READING]:
                errors.add(line=line, field=named("new_meter_serial"),
                           message="a change-out needs the new meter's serial and first reading")
                continue
            try:
                read.change = (values[NEW_SERIAL], register_of(values[NEW_READING], mapping=mapping,
                                                               multiplier=multiplier, meter_unit=unit, places=places),
                               values[NEW_SIZE] or size)
            except ValueError as exc:
                errors.add(line=line, field=named("new_meter_reading"), message=str(exc))
                continue
        out.reads.append(read)
