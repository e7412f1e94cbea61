"""Readings from the files meter systems already make: a handheld's or drive-by's route file, an AMR/AMI head-end's
export, read through a mapping (``import_readings FILE --mapping M``, and the admin's upload).

Design overview:

* **The mapping** (TOML; ``fixtures/readfiles/*.toml`` are worked ones, ``settings.READ_MAPPINGS_DIR`` holds the
  office's own): ``layout`` csv (``[columns]``: our field = the file's header) or fixed (``[fields]``: our field =
  [first, last] character, 1-based; ``width``: every reading line's length; ``record_prefix``: only lines that
  begin with it are readings, the header and trailer records are not); ``[dates] format``; ``[units]`` the unit the
  file reads in (gal, kgal, cf, ccf; blank: the meter's own) and the register's multiplier; ``[read_types]`` and
  ``[flags]``: the file's codes to ours. ``reads = "daily"`` marks an AMI export of daily register reads.
* **Register reads** are rewritten as our rows and recorded by ``meters.services.readings_record``: every rule a
  reading keeps, checked the same way with the same words, all or nothing. A change-out row (read type
  ``change``) records the old meter's final reading and the new meter with its first (``meter_change``), in the
  same transaction. Each reading is also checked against the range expected for it (``rules.expected_range``,
  the same the route file out gives the handheld): one outside it is recorded and marked for a re-read.
* **Flags** (leak, reverse flow, tamper, no flow, register mismatch) are kept as meter alerts on the meter and
  day (``UsageAlert``, once per kind) and announced (``usage_alerts_raised``): the clerk's list, the customer
  for a leak (notices), a backflow follow-up for reverse flow (backflow), a re-read order (fieldwork).
* **Daily reads** are kept one row per meter and month (``DailyRead``), merged with what is on file; each
  complete month's last day is recorded as a register reading, which is what billing reads. Continuous flow is
  looked for in them (``rules.continuous_flow``).
* **Every refusal** names the line, the field (ours, with the file's name for it) and the rule; a file with any
  is refused whole.
"""

from __future__ import annotations

import calendar
import csv
import io
import json
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import F

from core.csvimport import (
    CsvRow,
    ImportErrors,
    ImportResult,
    ImportSource,
    change_reason,
    chunked,
    import_source_read,
)
from core.csvout import csv_writer
from core.db import copy_rows, is_postgres
from core.errors import ApplicationError
from ordinance.selectors import installed_utility

from . import rules
from .models import DailyRead, Installation, Meter, Reading, UsageAlert
from .services import FILE, READINGS_LAYOUT, meter_change, readings_record
from .signals import usage_alerts_raised
from .units import to_gallons

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

READ_FIELDS = ("meter_serial", "read_date", "reading", "read_type", "flags", "multiplier", "no_flow_days",
               "new_meter_serial", "new_meter_reading", "new_meter_size")
ROUTE_FIELDS = ("route_stop", "account_no", "service_address", "meter_serial", "meter_size", "meter_unit",
                "last_read_date", "last_reading", "low", "high")
READ_TYPES = (*Reading.ReadType.values, "change")
FLAGS = {"leak": UsageAlert.Kind.LEAK, "reverse_flow": UsageAlert.Kind.REVERSE_FLOW,
         "tamper": UsageAlert.Kind.TAMPER, "no_flow": UsageAlert.Kind.NO_FLOW,
         "register_mismatch": UsageAlert.Kind.MISMATCH}
# Units a file may read in, as (the family: the meter's unit it converts to, how many of that unit one is).
UNITS = {"gal": ("gal", 1), "kgal": ("gal", 1000), "cf": ("cf", 1), "ccf": ("cf", 100)}
DAILY_SOURCE = "daily"
MAPPED_SOURCE = "import"


@dataclass(frozen=True)
class ReadMapping:
    name: str
    description: str
    layout: str  # "csv" or "fixed"
    reads: str  # "register" or "daily"
    columns: dict[str, str] = field(default_factory=dict)  # csv: ours → the file's header
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)  # fixed: ours → (first, last), 1-based
    width: int | None = None
    record_prefix: str = ""
    delimiter: str = ","
    date_format: str = "%Y-%m-%d"
    unit: str = ""
    multiplier: int = 1
    read_types: dict[str, str] = field(default_factory=dict)
    flags: dict[str, str] = field(default_factory=dict)
    flag_separator: str = ""  # "": each character is a code
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


def _positions(table: dict, *, fields: tuple[str, ...], where: str, problems: list[str]) -> dict[str, tuple[int, int]]:
    out = {}
    for ours, span in table.items():
        if ours not in fields:
            problems.append(f"{where} {ours}: not a field ({', '.join(fields)})")
        elif (not isinstance(span, list) or len(span) != 2 or not all(isinstance(n, int) for n in span)
              or not 1 <= span[0] <= span[1]):
            problems.append(f"{where} {ours} = {span!r}: [first, last] character positions, 1-based, first ≤ last")
        else:
            out[ours] = (span[0], span[1])
    return out


def mapping_parse(raw: bytes, *, name: str) -> ReadMapping:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ApplicationError(f"the mapping {name} is not valid TOML: {exc}", field="mapping") from None
    problems: list[str] = []
    layout, reads = data.get("layout", "csv"), data.get("reads", "register")
    if layout not in ("csv", "fixed"):
        problems.append(f"layout '{layout}': csv or fixed")
    if reads not in ("register", "daily"):
        problems.append(f"reads '{reads}': register or daily")
    columns = {str(k): str(v) for k, v in data.get("columns", {}).items()}
    problems += [f"[columns] {ours}: not a field ({', '.join(READ_FIELDS)})" for ours in columns
                 if ours not in READ_FIELDS]
    positions = _positions(data.get("fields", {}), fields=READ_FIELDS, where="[fields]", problems=problems)
    given = columns if layout == "csv" else positions
    problems += [f"{'[columns]' if layout == 'csv' else '[fields]'} {ours}: missing; a reading needs it"
                 for ours in ("meter_serial", "read_date", "reading") if ours not in given]
    date_format = data.get("dates", {}).get("format", "%Y-%m-%d")
    if "%" not in date_format:
        problems.append(f"[dates] format '{date_format}': a strftime format such as %m/%d/%Y")
    units = data.get("units", {})
    unit, multiplier = units.get("unit", ""), units.get("multiplier", 1)
    if unit and unit not in UNITS:
        problems.append(f"[units] unit '{unit}': one of {', '.join(UNITS)}, or blank for the meter's own")
    if not isinstance(multiplier, int) or multiplier < 1:
        problems.append(f"[units] multiplier {multiplier!r}: a whole number, 1 or more")
    read_types = {str(k): str(v) for k, v in data.get("read_types", {}).items()}
    problems += [f"[read_types] {theirs} = '{ours}': not a read type ({', '.join(READ_TYPES)})"
                 for theirs, ours in read_types.items() if ours not in READ_TYPES]
    flag_table = dict(data.get("flags", {}))
    separator = str(flag_table.pop("separator", ""))
    flags = {str(k): str(v) for k, v in flag_table.items()}
    problems += [f"[flags] {theirs} = '{ours}': not a flag ({', '.join(FLAGS)})" for theirs, ours in flags.items()
                 if ours not in FLAGS]
    route = data.get("route", {})
    route_columns = {str(k): str(v) for k, v in route.get("columns", {}).items()}
    problems += [f"[route.columns] {ours}: not a route field ({', '.join(ROUTE_FIELDS)})" for ours in route_columns
                 if ours not in ROUTE_FIELDS]
    route_positions = _positions(route.get("fields", {}), fields=ROUTE_FIELDS, where="[route.fields]",
                                 problems=problems)
    width = data.get("width")
    if layout == "fixed" and positions and width is not None and max(last for _, last in positions.values()) > width:
        problems.append(f"width {width}: a field ends after it")
    if problems:
        raise ApplicationError(f"the mapping {name}: " + "; ".join(problems), field="mapping")
    return ReadMapping(name=name, description=str(data.get("description", name)), layout=layout, reads=reads,
                       columns=columns, positions=positions, width=width, record_prefix=str(data.get("record_prefix",
                                                                                                    "")),
                       delimiter=str(data.get("delimiter", ",")), date_format=date_format, unit=unit,
                       multiplier=multiplier, read_types=read_types, flags=flags, flag_separator=separator,
                       route_columns=route_columns, route_positions=route_positions)


# --- reading the file --------------------------------------------------------------------------------------------

def _records(text: str, mapping: ReadMapping, errors: ImportErrors):
    """Each reading line as (line number, the text of each of ``READ_FIELDS``, "" where the layout has none); a line
    that cannot be read is an error."""
    if mapping.layout == "fixed":
        spans = [(first - 1, last) if (first, last) != (0, 0) else None
                 for first, last in (mapping.positions.get(ours, (0, 0)) for ours in READ_FIELDS)]
        prefix, width = mapping.record_prefix, mapping.width
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or (prefix and not line.startswith(prefix)):
                continue
            if width is not None and len(line) != width:
                errors.add(line=number, field="", message=f"is {len(line)} characters long; every reading line of "
                                                         f"this layout ({mapping.name}) is {width}")
                continue
            yield number, tuple(line[span[0]:span[1]].strip() if span else "" for span in spans)
        return
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=mapping.delimiter)
    header = [h.strip() for h in next(reader, [])]
    for ours, theirs in mapping.columns.items():
        if theirs not in header and ours in ("meter_serial", "read_date", "reading"):
            raise ApplicationError(f"the file has no column {theirs} ({ours}, as the mapping {mapping.name} names "
                                   f"it); its header is {','.join(header)}", field="header")
    # Each of READ_FIELDS by its column's place; a field the file has not is read from a blank put at the end.
    blank = len(header)
    places = [header.index(mapping.columns[ours]) if mapping.columns.get(ours) in header else blank
              for ours in READ_FIELDS]
    width = len(header)
    pick = itemgetter(*places)
    for number, values in enumerate(reader, start=2):
        if len(values) != width:
            if not "".join(values).strip():
                continue
            errors.add(line=number, field="", message=f"has {len(values)} values; the header has {width}")
            continue
        values.append("")
        yield number, pick(values)


def _date(value: str, mapping: ReadMapping) -> date:
    try:
        return datetime.strptime(value, mapping.date_format).date()
    except ValueError:
        raise ValueError(f"'{value}' is not a date written {mapping.date_format}") from None


def _register(value: str, *, multiplier: int, file_unit: str, meter_unit: str) -> int:
    """The register in the meter's unit: the file's number × the multiplier, converted where the units are of a
    family (gallons and thousands; cubic feet and hundreds); refused where it is not a whole register value."""
    if value.isdigit() and (not file_unit or file_unit == meter_unit):  # the usual case, quickly
        register = int(value) * multiplier
        if register <= rules.REGISTER_MAX:
            return register
    try:
        number = Decimal(value)
    except InvalidOperation:
        raise ValueError(f"'{value}' is not a number") from None
    family, scale = UNITS.get(file_unit or meter_unit, (meter_unit, 1))
    if family != meter_unit:
        raise ValueError(f"the file reads in {file_unit} but the meter registers {meter_unit}; a register cannot be "
                         "converted between gallons and cubic feet")
    register = number * multiplier * scale
    if register < 0 or register != register.to_integral_value():
        raise ValueError(f"'{value}' × {multiplier * scale} is {register}: not a whole register value")
    problem = rules.register_problem(int(register))
    if problem:
        raise ValueError(problem)
    return int(register)


def _flags(value: str, mapping: ReadMapping) -> list[str]:
    if not value:
        return []
    codes = [c for c in (value.split(mapping.flag_separator) if mapping.flag_separator else list(value)) if c.strip()]
    unknown = [c for c in codes if c not in mapping.flags]
    if unknown:
        raise ValueError(f"flag code {', '.join(unknown)} is not in the mapping's [flags] "
                         f"({', '.join(mapping.flags) or 'none'})")
    return [mapping.flags[c] for c in codes]


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


def _units(serials) -> dict[str, tuple[int, str, str]]:
    found = {}
    for chunk in chunked(sorted(serials)):
        for serial, pk, unit, size in Meter.objects.filter(serial__in=chunk).values_list("serial", "id", "unit",
                                                                                          "size"):
            found[serial] = (pk, unit, size)
    return found


(SERIAL, DATE, READING, TYPE, FLAG, MULTIPLIER, NO_FLOW, NEW_SERIAL, NEW_READING, NEW_SIZE) = range(len(READ_FIELDS))


def _parsed(text: str, mapping: ReadMapping, errors: ImportErrors,
            meters: dict | None = None) -> list[_Read]:
    """The file's reads; ``meters`` (filled here when given) gets each serial's (id, unit, size). Read a batch of
    lines at a time, their meters looked up together, so that a file of millions of lines is never held twice."""
    meters = meters if meters is not None else {}
    out: list[_Read] = []
    batch: list = []
    dates: dict[str, date] = {}
    for record in _records(text, mapping, errors):
        batch.append(record)
        if len(batch) == PARSE_BATCH:
            _batch_parsed(batch, mapping, errors, meters, dates, out)
            batch = []
    _batch_parsed(batch, mapping, errors, meters, dates, out)
    return out


PARSE_BATCH = 50_000


def _batch_parsed(records: list, mapping: ReadMapping, errors: ImportErrors, meters: dict, dates: dict,
                  out: list) -> None:
    meters.update(_units({values[SERIAL].strip() for _, values in records} - meters.keys()))
    read_types, named, flags_of = mapping.read_types, mapping.named, _flags
    plain_unit, scale, top = mapping.unit, mapping.multiplier, rules.REGISTER_MAX
    for line, values in records:
        serial = values[SERIAL].strip()
        if serial not in meters:
            errors.add(line=line, field=named("meter_serial"),
                       message=f"no meter with serial '{serial}' is on file" if serial else "is blank")
            continue
        _, unit, size = meters[serial]
        raw_date = values[DATE].strip()
        read_on = dates.get(raw_date)
        if read_on is None:
            try:
                read_on = dates[raw_date] = _date(raw_date, mapping)
            except ValueError as exc:
                errors.add(line=line, field=named("read_date"), message=str(exc))
                continue
        reading = values[READING].strip()
        multiplier = scale
        if values[MULTIPLIER]:
            try:
                multiplier = int(values[MULTIPLIER]) * scale
            except ValueError:
                errors.add(line=line, field=named("multiplier"),
                           message=f"'{values[MULTIPLIER]}' is not a whole number")
                continue
        if reading.isdigit() and not plain_unit and int(reading) * multiplier <= top:  # the usual case, quickly
            value = int(reading) * multiplier
        else:
            try:
                value = _register(reading, multiplier=multiplier, file_unit=plain_unit, meter_unit=unit)
            except ValueError as exc:
                errors.add(line=line, field=named("reading"), message=str(exc))
                continue
        code = values[TYPE].strip()
        read_type = read_types.get(code, code or "actual")
        if read_type not in READ_TYPES:
            errors.add(line=line, field=named("read_type"),
                       message=f"code '{code}' is not in the mapping's [read_types] ({', '.join(read_types)})")
            continue
        try:
            flags = flags_of(values[FLAG].strip(), mapping) if values[FLAG] else []
            no_flow = int(values[NO_FLOW]) if values[NO_FLOW].strip() else 0
        except ValueError as exc:
            errors.add(line=line, field=named("flags"), message=str(exc))
            continue
        if no_flow and "no_flow" not in flags:
            flags.append("no_flow")
        read = _Read(line, serial, read_on, value, read_type, flags, no_flow)
        if read_type == "change":
            if not values[NEW_SERIAL] or not values[NEW_READING]:
                errors.add(line=line, field=named("new_meter_serial"),
                           message="a change-out needs the new meter's serial and first reading")
                continue
            try:
                read.change = (values[NEW_SERIAL], _register(values[NEW_READING], multiplier=multiplier,
                                                             file_unit=mapping.unit, meter_unit=unit),
                               values[NEW_SIZE] or size)
            except ValueError as exc:
                errors.add(line=line, field=named("new_meter_reading"), message=str(exc))
                continue
        out.append(read)


# --- register reads ----------------------------------------------------------------------------------------------

def readings_import_mapped(*, file: ImportSource, as_of: date, actor: AbstractBaseUser | None, mapping: str,
                           progress: bool = False) -> ImportResult:
    """Import the readings of a file in ``mapping``'s layout (a name or a path), all or nothing."""
    found = mapping_load(mapping)
    if found.reads == "daily":
        return daily_reads_import(file=file, as_of=as_of, actor=actor, mapping=found)
    source = import_source_read(file)
    errors = ImportErrors(columns=READINGS_LAYOUT.columns)
    reads = _parsed(source.text, found, errors)
    errors.raise_if_any()
    reason = change_reason(command=f"import_readings --mapping {found.name}", file=source)
    plain = [r for r in reads if r.change is None]
    rows = [CsvRow(line=r.line, values={"meter_serial": r.serial, "read_date": r.read_on.isoformat(),
                                        "reading": str(r.value), "read_type": r.read_type}) for r in plain]
    ranges = _expected(plain)
    with transaction.atomic():
        result = readings_record(rows=rows, as_of=as_of, actor=actor, source=MAPPED_SOURCE, reason=reason, words=FILE,
                                 progress=progress, errors=errors)
        changes = _changes_record([r for r in reads if r.change], as_of=as_of, actor=actor)
        _alerts_raise(reads, ranges=ranges)
    return ImportResult(created=result.created + changes, skipped=result.skipped)


def _changes_record(reads: list[_Read], *, as_of: date, actor) -> int:
    errors = ImportErrors(columns=READINGS_LAYOUT.columns)
    for read in reads:
        installation = Installation.objects.filter(meter__serial=read.serial, removed_on__isnull=True).first()
        if installation is None:
            errors.add(line=read.line, field="meter_serial", message=f"meter {read.serial} is not installed on an "
                                                                     "account: there is nothing to change out")
            continue
        new_serial, start_value, size = read.change
        try:
            meter_change(installation=installation, changed_on=read.read_on, final_value=read.value,
                         new_serial=new_serial, new_size=size, start_value=start_value, actor=actor,
                         new_unit=installation.meter.unit, as_of=as_of)
        except ApplicationError as exc:
            for error in exc.errors:
                errors.add(line=read.line, field=error.field or "reading", message=error.message)
    errors.raise_if_any()
    return 2 * len(reads)


def _history(meter_ids, *, before: date) -> dict[int, list[tuple[date, int]]]:
    """Each meter's readings over the two years before ``before``, in date order."""
    history: dict[int, list[tuple[date, int]]] = defaultdict(list)
    for chunk in chunked(sorted(meter_ids)):
        for meter_id, read_on, value in (Reading.objects.filter(meter_id__in=chunk, read_on__lt=before,
                                                                read_on__gte=before - timedelta(days=730))
                                         .order_by("meter_id", "read_on").values_list("meter_id", "read_on", "value")):
            history[meter_id].append((read_on, value))
    return history


def _expected(reads: list[_Read]) -> dict[int, tuple[int, int | None]]:
    """The range each actual reading was expected in (by line), from its meter's history before it."""
    actual = [r for r in reads if r.read_type == Reading.ReadType.ACTUAL]
    if not actual:
        return {}
    utility = installed_utility()
    factor = utility.high_usage_factor if utility else Decimal(3)
    meters = _units({r.serial for r in actual})
    history = _history({meters[r.serial][0] for r in actual}, before=max(r.read_on for r in actual))
    out = {}
    for read in actual:
        earlier = [(d, v) for d, v in history.get(meters[read.serial][0], []) if d < read.read_on]
        found = rules.expected_range(earlier, read.read_on, factor=factor)
        if found is not None:
            out[read.line] = found
    return out


def _spans(meter_ids) -> dict[int, list[tuple[date, date | None, int]]]:
    """Each meter's installations, as (installed on, removed on, account)."""
    spans = defaultdict(list)
    for chunk in chunked(sorted(meter_ids)):
        for meter_id, account_id, start, end in Installation.objects.filter(meter_id__in=chunk).values_list(
                "meter_id", "account_id", "installed_on", "removed_on"):
            spans[meter_id].append((start, end, account_id))
    return spans


def _accounts_on(meter_ids, days) -> dict[tuple[int, date], int]:
    """The account each meter was installed on, on each of ``days``."""
    spans = _spans(meter_ids)
    out = {}
    for meter_id, day in days:
        found = None
        for start, end, account_id in spans[meter_id]:
            if start <= day and (end is None or day <= end):
                found = account_id
                break
        out[(meter_id, day)] = found
    return out


def _alerts_raise(reads: list[_Read], *, ranges: dict[int, tuple[int, int | None]]) -> list[int]:
    """The meter alerts of the file's flags and of its readings outside their expected range, once each."""
    meters = _units({r.serial for r in reads})
    wanted = []
    for read in reads:
        meter_id, unit, _size = meters[read.serial]
        for flag in read.flags:
            days = read.no_flow_days if flag == "no_flow" else 0
            wanted.append((meter_id, read.read_on, FLAGS[flag], days, f"{FLAGS[flag].label}"
                           + (f" ({days} days)" if days else "") + f": line {read.line} of the file"))
        span = ranges.get(read.line)
        if span and (read.value < span[0] or (span[1] is not None and read.value > span[1])):
            high = f"{span[1]:,}" if span[1] is not None else "any"
            wanted.append((meter_id, read.read_on, UsageAlert.Kind.OUT_OF_RANGE, 0,
                           f"reading {read.value:,} is outside the {span[0]:,}–{high} expected ({unit}): re-read"))
    return _alerts_write(wanted)


def _alerts_write(wanted: list[tuple]) -> list[int]:
    """Write the alerts (meter id, day, kind, days, detail) not already on file, on the account the meter was on,
    with the register reading of that day where there is one; the new ones are announced on commit."""
    if not wanted:
        return []
    meter_ids, days = {w[0] for w in wanted}, {w[1] for w in wanted}
    accounts = _accounts_on(meter_ids, {(w[0], w[1]) for w in wanted})
    readings, existing = {}, set()
    for chunk in chunked(sorted(meter_ids)):
        for pk, meter_id, read_on in Reading.objects.filter(meter_id__in=chunk, read_on__in=days).values_list(
                "id", "meter_id", "read_on"):
            readings[(meter_id, read_on)] = pk
        existing |= set(UsageAlert.objects.filter(meter_id__in=chunk, read_on__in=days).values_list(
            "meter_id", "read_on", "kind"))
    made = {(meter_id, day, kind): UsageAlert(meter_id=meter_id, read_on=day, kind=kind, days=days_,
                                              detail=detail[:300], account_id=accounts[(meter_id, day)],
                                              reading_id=readings.get((meter_id, day)))
            for meter_id, day, kind, days_, detail in wanted
            if accounts.get((meter_id, day)) and (meter_id, day, kind) not in existing}
    UsageAlert.objects.bulk_create(made.values(), ignore_conflicts=True)
    ids = []
    for chunk in chunked(sorted({key[0] for key in made})):
        ids += [pk for pk, *key in UsageAlert.objects.filter(meter_id__in=chunk, read_on__in=days).values_list(
            "id", "meter_id", "read_on", "kind") if tuple(key) in made]
    if ids:
        transaction.on_commit(lambda: usage_alerts_raised.send(sender=UsageAlert, alert_ids=ids))
    return ids


# --- daily reads -------------------------------------------------------------------------------------------------

def daily_reads_import(*, file: ImportSource, as_of: date, actor: AbstractBaseUser | None,
                       mapping: ReadMapping) -> ImportResult:
    """Merge a file of daily register reads into each meter's month rows, all or nothing; record each complete
    month's last day as the meter's register reading; look for continuous flow."""
    source = import_source_read(file)
    errors = ImportErrors(columns=READINGS_LAYOUT.columns)
    meters: dict = {}
    reads = _parsed(source.text, mapping, errors, meters=meters)
    spans = _spans({m[0] for m in meters.values()})
    by_meter: dict[int, dict[date, _Read]] = defaultdict(dict)
    for read in reads:
        meter_id = meters[read.serial][0]
        if read.read_on > as_of:
            errors.add(line=read.line, field=mapping.named("read_date"),
                       message=f"{read.read_on} is after the import date {as_of}; nothing is recorded in the future")
        elif not any(start <= read.read_on and (end is None or read.read_on <= end)
                     for start, end, _account in spans[meter_id]):
            errors.add(line=read.line, field=mapping.named("read_date"),
                       message=f"meter {read.serial} was not installed on an account on {read.read_on}")
        elif read.read_on in by_meter[meter_id]:
            errors.add(line=read.line, field=mapping.named("read_date"),
                       message=f"meter {read.serial} has another read dated {read.read_on} on line "
                               f"{by_meter[meter_id][read.read_on].line}; one read per meter per day")
        else:
            by_meter[meter_id][read.read_on] = read
    months = {(meter_id, day.replace(day=1)) for meter_id, days in by_meter.items() for day in days}
    # With the month before each, so that a register running backwards across the turn of a month is seen.
    months |= {(meter_id, (month - timedelta(days=1)).replace(day=1)) for meter_id, month in months}
    with transaction.atomic():
        stored = _months_load(months)
        merged, created, skipped = _merge(by_meter, stored, errors, mapping)
        errors.raise_if_any()
        _months_write(merged, stored)
        ends = _month_ends(by_meter)
        rows = [CsvRow(line=read.line, values={"meter_serial": read.serial, "read_date": read.read_on.isoformat(),
                                               "reading": str(read.value), "read_type": "actual"}) for read in ends]
        readings_record(rows=rows, as_of=as_of, actor=actor, source=DAILY_SOURCE, words=FILE, errors=errors,
                        reason=change_reason(command=f"import_readings --mapping {mapping.name}", file=source))
        _alerts_raise([r for days in by_meter.values() for r in days.values() if r.flags], ranges={})
        through = max((d for days in by_meter.values() for d in days), default=as_of)
        in_hand = None
        if through - timedelta(days=settings.CONTINUOUS_FLOW_DAYS + rules.FLOOR_DAYS) >= min(
                (month for _, month in months), default=through):  # the months loaded reach back far enough
            in_hand = {**stored, **merged}
        continuous_flow_raise(list(by_meter), through=through, months=in_hand)
    return ImportResult(created=created, skipped=skipped)


def _months_load(months) -> dict[tuple[int, date], list]:
    stored = {}
    by_month = defaultdict(list)
    for meter_id, month in months:
        by_month[month].append(meter_id)
    for month, meter_ids in by_month.items():
        for chunk in chunked(sorted(meter_ids)):
            for meter_id, values in DailyRead.objects.filter(month=month, meter_id__in=chunk).values_list(
                    "meter_id", "values"):
                stored[(meter_id, month)] = values
    return stored


def _merge(by_meter, stored, errors: ImportErrors, mapping: ReadMapping):
    """Each month's values with the file's days put in; a register that would run backwards is an error."""
    merged: dict[tuple[int, date], list] = {}
    created = skipped = 0
    month_of: dict[date, date] = {}
    for meter_id, days in by_meter.items():
        for day in sorted(days):
            month = month_of.get(day) or month_of.setdefault(day, day.replace(day=1))
            key = (meter_id, month)
            if key not in merged:
                merged[key] = list(stored.get(key) or [None] * 31)
            values, read = merged[key], days[day]
            if values[day.day - 1] == read.value:
                skipped += 1
                continue
            if values[day.day - 1] is not None:
                errors.add(line=read.line, field=mapping.named("reading"),
                           message=f"meter {read.serial} already has {values[day.day - 1]} on {day}; the file says "
                                   f"{read.value}")
                continue
            values[day.day - 1] = read.value
            created += 1
    # The register never runs backwards, day by day, across the months on file and in the file.
    months_of = defaultdict(dict)
    for (meter_id, month), values in [*stored.items(), *merged.items()]:
        months_of[meter_id][month] = values
    for meter_id in by_meter:
        before = None
        for month in sorted(months_of[meter_id]):
            for i, value in enumerate(months_of[meter_id][month]):
                if value is None:
                    continue
                if before is not None and value < before:
                    read = by_meter[meter_id].get(month + timedelta(days=i))
                    if read is not None:
                        errors.add(line=read.line, field=mapping.named("reading"),
                                   message=f"{value} is less than {before}, the day before's: a register never runs "
                                           "backwards")
                before = value
    return merged, created, skipped


def _months_write(merged, stored) -> None:
    old = [key for key in merged if key in stored]
    for chunk in chunked(old):
        for month in {m for _, m in chunk}:
            DailyRead.objects.filter(month=month, meter_id__in=[m for m, mo in chunk if mo == month]).delete()
    if is_postgres():
        copy_rows(DailyRead, ("meter_id", "month", "values"),
                  ((meter_id, month, json.dumps(values)) for (meter_id, month), values in merged.items()))
    else:
        DailyRead.objects.bulk_create([DailyRead(meter_id=meter_id, month=month, values=values)
                                       for (meter_id, month), values in merged.items()], batch_size=2000)


def _month_ends(by_meter) -> list[_Read]:
    """The file's reads of a month's last day: billing's register readings."""
    return [read for days in by_meter.values() for day, read in days.items()
            if day.day == calendar.monthrange(day.year, day.month)[1]]


def daily_use(meter_ids, *, since: date, until: date,
              months: dict[tuple[int, date], list] | None = None) -> dict[int, list[tuple[date, int | None]]]:
    """Each meter's use, in its unit, on each day from ``since`` to ``until`` (the register's advance from the day
    before); None where a day or the day before has no read. ``months``: the month rows already in hand (by meter
    and month), else they are read."""
    base = since - timedelta(days=1)
    count = (until - base).days + 1
    wanted, day = set(), base.replace(day=1)
    while day <= until:
        wanted.add(day)
        day = (day.replace(day=28) + timedelta(days=4)).replace(day=1)
    if months is None:
        months = {}
        for chunk in chunked(sorted(meter_ids)):
            for meter_id, month, values in DailyRead.objects.filter(meter_id__in=chunk, month__in=wanted).values_list(
                    "meter_id", "month", "values"):
                months[(meter_id, month)] = values
    offsets = {month: (month - base).days for month in wanted}
    registers: dict[int, list] = {meter_id: [None] * count for meter_id in meter_ids}
    for (meter_id, month), values in months.items():
        if month not in offsets or meter_id not in registers:
            continue
        offset, flat = offsets[month], registers[meter_id]
        first, last = max(0, -offset), min(len(values), count - offset)
        if first < last:
            flat[offset + first:offset + last] = values[first:last]
    days = [base + timedelta(days=i) for i in range(1, count)]
    return {meter_id: list(zip(days, [b - a if a is not None and b is not None else None
                                      for a, b in zip(flat, flat[1:], strict=False)], strict=True))
            for meter_id, flat in registers.items()}


def continuous_flow_raise(meter_ids, *, through: date, months: dict | None = None) -> list[int]:
    """Continuous flow in the daily reads up to ``through``: ``rules.continuous_flow`` over each meter's last days,
    once while an alert of it is open. ``months``: the month rows in hand (``daily_use``)."""
    days = settings.CONTINUOUS_FLOW_DAYS
    since = through - timedelta(days=days + rules.FLOOR_DAYS - 1)
    uses = daily_use(meter_ids, since=since, until=through, months=months)
    units = dict(Meter.objects.filter(id__in=list(meter_ids)).values_list("id", "unit")) if len(meter_ids) < 5000 \
        else {pk: unit for chunk in chunked(sorted(meter_ids))
              for pk, unit in Meter.objects.filter(id__in=chunk).values_list("id", "unit")}
    open_alerts = set()
    for chunk in chunked(sorted(meter_ids)):
        open_alerts |= set(UsageAlert.objects.filter(meter_id__in=chunk, kind=UsageAlert.Kind.CONTINUOUS,
                                                     resolved_at__isnull=True).values_list("meter_id", flat=True))
    wanted = []
    for meter_id, series in uses.items():
        if meter_id in open_alerts:
            continue
        gallons = [None if use is None else to_gallons(use, units[meter_id]) for _, use in series]
        found = rules.continuous_flow(gallons, days=days, margin=settings.CONTINUOUS_FLOW_MARGIN_GALLONS)
        if found:
            wanted.append((meter_id, through, UsageAlert.Kind.CONTINUOUS, days, found))
    return _alerts_write(wanted)


# --- the route file out ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RouteStop:
    route_stop: int | None
    account_no: str
    service_address: str
    meter_serial: str
    meter_size: str
    meter_unit: str
    last_read_date: date | None
    last_reading: int | None
    low: int | None
    high: int | None


def route_stops(*, book: int, on: date) -> list[RouteStop]:
    """The book's meters in route order, each with its last reading and the range expected for a read ``on``."""
    utility = installed_utility()
    factor = utility.high_usage_factor if utility else Decimal(3)
    installations = list(Installation.objects.filter(account__book=book, installed_on__lte=on)
                         .filter(removed_on__isnull=True).select_related("meter", "account__premises")
                         .order_by(F("account__premises__route_order").asc(nulls_last=True),
                                   "account__premises__service_address", "account__account_no"))
    history = _history({i.meter_id for i in installations}, before=on + timedelta(days=1))
    stops = []
    for installation in installations:
        earlier = history.get(installation.meter_id, [])
        last_on, last = earlier[-1] if earlier else (None, None)
        span = rules.expected_range(earlier, on, factor=factor)
        account = installation.account
        stops.append(RouteStop(route_stop=account.premises.route_order, account_no=account.account_no,
                               service_address=account.premises.service_address, meter_serial=installation.meter.serial,
                               meter_size=installation.meter.size, meter_unit=installation.meter.unit,
                               last_read_date=last_on, last_reading=last, low=span[0] if span else None,
                               high=span[1] if span else None))
    return stops


def route_file(stops: list[RouteStop], mapping: ReadMapping) -> str:
    """The stops in the mapping's ``[route]`` layout (its date format): CSV with a header, or fixed-width lines."""
    def text(stop: RouteStop, ours: str) -> str:
        value = getattr(stop, ours)
        if value is None:
            return ""
        return value.strftime(mapping.date_format) if isinstance(value, date) else str(value)

    if mapping.route_positions:
        width = max(last for _, last in mapping.route_positions.values())
        lines = []
        for stop in stops:
            line = [" "] * width
            for ours, (first, last) in mapping.route_positions.items():
                value = text(stop, ours)[: last - first + 1]
                # Numbers right-aligned with zeros, words left-aligned with spaces, as handhelds read them.
                padded = value.rjust(last - first + 1, "0") if value.isdigit() else value.ljust(last - first + 1)
                line[first - 1:last] = list(padded)
            lines.append("".join(line))
        return "\n".join(lines) + "\n"
    columns = mapping.route_columns or {ours: ours for ours in ROUTE_FIELDS}
    out = io.StringIO()
    writer = csv_writer(out, delimiter=mapping.delimiter, lineterminator="\n")
    writer.writerow(columns.values())
    for stop in stops:
        writer.writerow([text(stop, ours) for ours in columns])
    return out.getvalue()
