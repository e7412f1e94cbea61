"""Importing meter readings from a CSV file (``manage.py import_readings`` and the admin upload page).

The file is ``meter_serial,read_date,reading[,read_type]``; ``read_type`` is actual (the default when the
column is left off or blank), estimated or final. The file is taken whole or not at all. Each row must:

* name a meter on file, with a date (YYYY-MM-DD) that is not after the import date and on which the meter
  was installed on an account (not before its installation, not after its removal — the removal day
  itself is allowed, for the final reading);
* give a whole, non-negative register value that keeps the meter's readings from going down over time,
  checked against both the readings already recorded and the other rows of the file, earlier and later;
* be the only reading for its meter and date, in the file and in the database. A row identical to a
  reading already recorded (same meter, date and value) is skipped, so importing the same file twice
  changes nothing; the same meter and date with a different value is an error.

Readings are written with ``source="import"``, ``entered_by`` the importing user, and a history row per
reading whose change reason names the file, so the audit trail shows who imported what.

Speed: the referenced meters, their installations, their latest reading before the file's first date
and every reading from that date on are loaded in a handful of queries per 5,000 meters; the rows are
checked in Python and written with one bulk insert (plus one for the history) per 5,000 rows.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from itertools import pairwise
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Subquery
from simple_history.utils import bulk_create_with_history

from waterbilling.csvimport import (
    CHUNK_SIZE,
    CsvLayout,
    CsvRow,
    ImportErrors,
    ImportResult,
    ImportSource,
    change_reason,
    chunked,
    csv_rows,
    import_source_read,
    iso_date_until,
    non_negative_int,
    one_of,
    progress_bar,
    text,
)
from waterbilling.errors import Conflict

from .models import Installation, Meter, Reading

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

READINGS_LAYOUT = CsvLayout(required=("meter_serial", "read_date", "reading"), optional=("read_type",))
IMPORT_SOURCE = "import"

_serial = text(max_length=Meter._meta.get_field("serial").max_length)
_read_type = one_of(Reading.ReadType.values, default=Reading.ReadType.ACTUAL)


@dataclass
class _Row:
    line: int
    serial: str | None
    read_on: date | None
    value: int | None
    read_type: str | None


@dataclass
class _MeterState:
    id: int
    serial: str
    installations: list[tuple[date, date | None]] = field(default_factory=list)
    # Readings already recorded, by date: the latest before the first date the file needs, every one after.
    recorded: dict[date, int] = field(default_factory=dict)


def readings_import(*, file: ImportSource, as_of: date, actor: AbstractBaseUser | None,
                    progress: bool = False) -> ImportResult:
    """Import every reading in ``file``, or none: raises ImportRejected listing every bad row."""
    source = import_source_read(file)
    errors = ImportErrors(columns=READINGS_LAYOUT.columns)
    rows = _rows_parse(csv_rows(text=source.text, layout=READINGS_LAYOUT, errors=errors),
                       as_of=as_of, errors=errors, progress=progress)
    try:
        with transaction.atomic():
            first_dates: dict[str, date] = {}
            for r in rows:
                if r.serial:
                    first_dates[r.serial] = min(first_dates.get(r.serial, as_of), r.read_on or as_of)
            meters = _meters_load(first_dates=first_dates)
            new_rows, skipped = _rows_check(rows, meters=meters, errors=errors)
            errors.raise_if_any()
            readings = [
                Reading(meter_id=meters[r.serial].id, read_on=r.read_on, value=r.value, read_type=r.read_type,
                        source=IMPORT_SOURCE, entered_by=actor)
                for r in new_rows
            ]
            reason = change_reason(command="import_readings", file=source)
            batches = list(chunked(readings))
            for batch in progress_bar(batches, enabled=progress, desc="saving readings", unit=" batches"):
                bulk_create_with_history(batch, Reading, batch_size=CHUNK_SIZE, default_user=actor,
                                         default_change_reason=reason)
    except IntegrityError as exc:
        # Only a reading saved by someone else between our check and our insert can get here.
        raise Conflict("another reading was recorded for one of these meters while the file was being "
                       "imported; nothing was saved — import the file again", field="file") from exc
    return ImportResult(created=len(readings), skipped=skipped)


def _rows_parse(rows: list[CsvRow], *, as_of: date, errors: ImportErrors, progress: bool) -> list[_Row]:
    parsed = []
    read_date = iso_date_until(as_of)
    for row in progress_bar(rows, enabled=progress, desc="checking readings", total=len(rows)):
        parsed.append(_Row(
            line=row.line,
            serial=errors.parse(row, "meter_serial", _serial),
            read_on=errors.parse(row, "read_date", read_date),
            value=errors.parse(row, "reading", non_negative_int),
            read_type=errors.parse(row, "read_type", _read_type),
        ))
    return parsed


def _meters_load(*, first_dates: dict[str, date]) -> dict[str, _MeterState]:
    """The file's meters by serial, each with its installations and the readings the file's rows need.

    ``first_dates`` is each serial's earliest date in the file. Per chunk of meters the readings loaded are
    every one from the chunk's earliest date on, plus each meter's latest reading before that date.
    """
    ids_by_serial: dict[str, int] = {}
    for chunk in chunked(sorted(first_dates)):
        ids_by_serial.update(Meter.objects.filter(serial__in=chunk).order_by().values_list("serial", "id"))
    by_id = {meter_id: _MeterState(id=meter_id, serial=serial) for serial, meter_id in ids_by_serial.items()}
    # Lock the meters in id order, so two imports (or an import and a clerk) never deadlock and no reading
    # for these meters can slip in between the check below and the insert.
    for chunk in chunked(sorted(by_id)):
        since = min(first_dates[by_id[meter_id].serial] for meter_id in chunk)
        earlier = Reading.objects.filter(meter=OuterRef("pk"), read_on__lt=since).order_by("-read_on")
        latest_before = (
            Meter.objects.select_for_update().filter(id__in=chunk).order_by("id")
            .annotate(on=Subquery(earlier.values("read_on")[:1]), value=Subquery(earlier.values("value")[:1]))
            .values_list("id", "on", "value")
        )
        for meter_id, read_on, value in latest_before:
            if read_on is not None:
                by_id[meter_id].recorded[read_on] = value
        since_first = Reading.objects.filter(meter_id__in=chunk, read_on__gte=since).order_by()
        for meter_id, read_on, value in since_first.values_list("meter_id", "read_on", "value"):
            by_id[meter_id].recorded[read_on] = value
        installations = Installation.objects.filter(meter_id__in=chunk).order_by()
        for meter_id, installed_on, removed_on in installations.values_list("meter_id", "installed_on",
                                                                            "removed_on"):
            by_id[meter_id].installations.append((installed_on, removed_on))
    return {state.serial: state for state in by_id.values()}


def _rows_check(rows: list[_Row], *, meters: dict[str, _MeterState],
                errors: ImportErrors) -> tuple[list[_Row], int]:
    """The rules that need the database or other rows; returns the rows to insert and the count skipped."""
    rows_by_meter: dict[str, list[_Row]] = defaultdict(list)
    for row in rows:
        if row.serial is None:
            continue
        if row.serial not in meters:
            errors.add(line=row.line, field="meter_serial",
                       message=f"no meter with serial '{row.serial}' is on file")
        elif row.read_on is not None:
            rows_by_meter[row.serial].append(row)

    new_rows: list[_Row] = []
    skipped = 0
    for serial, meter_rows in rows_by_meter.items():
        meter = meters[serial]
        first_line: dict[date, int] = {}
        candidates: list[_Row] = []
        for row in meter_rows:
            if row.read_on in first_line:
                errors.add(line=row.line, field="read_date",
                           message=f"meter {serial} already has a reading dated {row.read_on} on line "
                                   f"{first_line[row.read_on]} of this file; one reading per meter per date")
                continue
            first_line[row.read_on] = row.line
            problem = _installation_problem(meter, row.read_on)
            if problem:
                errors.add(line=row.line, field="read_date", message=problem)
                continue
            if row.value is None:
                continue
            recorded = meter.recorded.get(row.read_on)
            if recorded == row.value:
                skipped += 1
            elif recorded is not None:
                errors.add(line=row.line, field="reading",
                           message=f"meter {serial} already has a reading of {recorded} on {row.read_on}; "
                                   f"the file says {row.value} (one reading per meter per date)")
            else:
                candidates.append(row)
        _sequence_check(meter, candidates, errors=errors)
        new_rows.extend(candidates)
    return new_rows, skipped


def _installation_problem(meter: _MeterState, read_on: date) -> str | None:
    spans = sorted(meter.installations)
    if any(start <= read_on and (end is None or read_on <= end) for start, end in spans):
        return None
    if not spans:
        return f"meter {meter.serial} has never been installed on an account; install it before reading it"
    if read_on < spans[0][0]:
        return f"{read_on} is before meter {meter.serial} was installed on {spans[0][0]}"
    removed = max(end for _, end in spans if end is not None and end < read_on)
    reinstalled = [start for start, _ in spans if start > read_on]
    if reinstalled:
        return (f"meter {meter.serial} was not installed on {read_on}: removed {removed}, "
                f"installed again {min(reinstalled)}")
    return (f"meter {meter.serial} was removed on {removed} and has no open installation; "
            "a removed meter takes no readings after its removal")


def _sequence_check(meter: _MeterState, candidates: list[_Row], *, errors: ImportErrors) -> None:
    """A meter's register never runs backwards: check each step of recorded and new readings by date."""
    sequence: list[tuple[date, int, _Row | None]] = sorted(
        [(on, value, None) for on, value in meter.recorded.items()]
        + [(row.read_on, row.value, row) for row in candidates],
        key=lambda item: item[0])
    for (before_on, before, before_row), (after_on, after, after_row) in pairwise(sequence):
        if after >= before:
            continue
        if after_row is not None:
            where = f"line {before_row.line}" if before_row else "already recorded"
            errors.add(line=after_row.line, field="reading",
                       message=f"{after} is lower than meter {meter.serial}'s previous reading {before} on "
                               f"{before_on} ({where}); a meter's readings never go down (a replaced meter "
                               "is a new meter with its own serial)")
        elif before_row is not None:
            errors.add(line=before_row.line, field="reading",
                       message=f"{before} is higher than meter {meter.serial}'s later reading {after} "
                               f"already recorded on {after_on}; a meter's readings never go down")
