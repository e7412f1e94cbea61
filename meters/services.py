"""Recording meter readings: the one writer behind the CSV import, the API and the admin's reading form.

Design overview
---------------
Every reading is held to the rules of ``meters.rules`` (not in the future, while the meter is installed,
one per meter per date, never lower than the reading before it), checked against what the database knows
about the meter. There are two ways in, and both check with those same functions, so they refuse the same
things in the same words:

* ``readings_record`` — a batch of rows of text, as a CSV file or an API request brings them. All or
  nothing: every bad row is named by line and column and nothing is saved unless every row passes. It
  loads the meters' histories in a handful of queries per 5,000 meters, checks every row in memory, and
  writes the readings and their history rows with COPY on PostgreSQL (a bulk insert of each per 5,000
  rows elsewhere). A row identical to a reading on file (same meter, date and value) is skipped, so a
  file can be sent twice.
* ``reading_record`` / ``reading_change`` / ``reading_delete`` — one reading, as a clerk types it; the
  form asks ``reading_problems`` first, to show each problem on its field.

Both lock the meters they write to (``select_for_update``, in id order) before checking, so no other
reading for those meters can slip in between the check and the write.

A reading that a bill in force used — its start or end reading, on a bill that is not void — is final:
the bill's gallons, the page the customer has and every reprint of its PDF rest on it. It cannot be
changed or deleted; a correction is a new reading and a credit or debit memo on the bill, or a void and a
new bill. The writers here refuse with that advice; on PostgreSQL a trigger on ``meters_reading`` refuses
too (migration ``meters.0003``), whoever writes. Which records hold a reading is asked of
``meters.selectors.reading_held_by``, where billing registers its bills, so this app never imports billing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from itertools import pairwise
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.db.models import OuterRef, ProtectedError, Q, Subquery
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from core.clock import refuse_future
from core.csvimport import (
    CHUNK_SIZE,
    CsvLayout,
    CsvRow,
    ImportErrors,
    ImportResult,
    Progress,
    chunked,
    identifier,
    iso_date,
    one_of,
    progress_bar,
    whole_number,
)
from core.db import copy_rows, is_postgres, lock_in_order, reserve_ids
from core.errors import ApplicationError, Conflict, FieldError

from . import rules
from .models import Installation, Meter, MeterTest, Reading
from .selectors import meter_policy, reading_held_by
from .signals import readings_recorded
from .units import GALLONS_PER_CUBIC_FOOT, register_steps, to_gallons

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

READINGS_LAYOUT = CsvLayout(required=("meter_serial", "read_date", "reading"), optional=("read_type",))
MANUAL_SOURCE = "manual"

_serial = identifier(max_length=Meter._meta.get_field("serial").max_length)
_read_type = one_of(Reading.ReadType.values, default=Reading.ReadType.ACTUAL)
_non_negative = whole_number(minimum=0)


_REGISTER_TEXT = re.compile(r"[0-9]+(?:\.[0-9]{1,3})?")


def register_number(value: str) -> int | Decimal:
    """A register as a file or a request writes it, in the meter's unit: a whole number, or one with up to three
    places for a meter whose register shows them (made steps once the meter is known, ``_rows_check``)."""
    text = value.strip()
    if "." in text and _REGISTER_TEXT.fullmatch(text):
        return Decimal(text)
    return reading_value(value)


def reading_value(value: str) -> int:
    """A register value: a whole number, 0 or more, that a register can show (``rules.REGISTER_MAX``)."""
    number = _non_negative(value)
    problem = rules.register_problem(number)
    if problem:
        raise ValueError(problem)
    return number


@dataclass(frozen=True)
class BatchWords:
    """How a batch's messages name where its readings came from."""

    given_in: str  # "…already has a reading of 1000 on 2026-01-02; the file says 1001"
    as_of_is: str  # "2026-07-01 is after the import date 2026-06-30"
    retry: str  # after a conflict with another writer
    conflict_field: str


FILE = BatchWords(given_in="the file", as_of_is="the import date", retry="import the file again",
                  conflict_field="file")
REQUEST = BatchWords(given_in="the request", as_of_is="today", retry="send the request again",
                     conflict_field="")


# --- a batch: the CSV import and the API ------------------------------------------------------------

@dataclass(slots=True)
class _Row:
    line: int
    serial: str | None
    read_on: date | None
    value: int | None
    read_type: str | None


def readings_record(*, rows: list[CsvRow], as_of: date, actor: AbstractBaseUser | None, source: str,
                    reason: str, words: BatchWords = FILE, progress: bool = False,
                    errors: ImportErrors | None = None) -> ImportResult:
    """Record every reading in ``rows`` (columns of ``READINGS_LAYOUT``), or none.

    Raises ImportRejected naming every bad row, with any already in ``errors`` (a file's unreadable rows);
    ``reason`` is the history's change reason for every row written.
    """
    errors = errors if errors is not None else ImportErrors(columns=READINGS_LAYOUT.columns)
    parsed = _rows_parse(rows, as_of=as_of, errors=errors, words=words, progress=progress)
    started = timezone.now()
    try:
        with transaction.atomic():
            first_dates: dict[str, date] = {}
            for r in parsed:
                if r.serial:
                    first_dates[r.serial] = min(first_dates.get(r.serial, as_of), r.read_on or as_of)
            meters = _histories_by_serial(first_dates=first_dates)
            new_rows, skipped = _rows_check(parsed, meters=meters, errors=errors, words=words)
            errors.raise_if_any()
            _readings_write(new_rows, meters=meters, source=source, actor=actor, reason=reason, progress=progress)
            meter_ids = sorted({meters[r.serial].id for r in new_rows})
            if meter_ids:
                transaction.on_commit(lambda: readings_recorded.send(sender=Reading, meter_ids=meter_ids,
                                                                     since=started))
    except IntegrityError as exc:
        # Only a reading saved by someone else between our check and our insert can get here.
        raise Conflict(f"another reading was recorded for one of these meters while {words.given_in} was being "
                       f"saved; nothing was saved — {words.retry}", field=words.conflict_field) from exc
    return ImportResult(created=len(new_rows), skipped=skipped)


_READING_COLUMNS = ("id", "meter_id", "read_on", "value", "read_type", "source", "note", "entered_by_id",
                    "entered_at")


def _readings_write(rows: list[_Row], *, meters: dict[str, rules.MeterHistory], source: str,
                    actor: AbstractBaseUser | None, reason: str, progress: Progress) -> None:
    """Insert the checked ``rows``, each with a "created" history row giving ``actor`` and ``reason``.

    On PostgreSQL the readings and their history are streamed with COPY, ids reserved first so each history
    row names its reading; elsewhere ``bulk_create_with_history`` writes the same rows.
    """
    batches = list(chunked(rows))
    if not is_postgres():
        for batch in progress_bar(batches, enabled=progress, desc="saving readings", unit=" batches"):
            readings = [Reading(meter_id=meters[r.serial].id, read_on=r.read_on, value=r.value,
                                read_type=r.read_type, source=source, entered_by=actor) for r in batch]
            bulk_create_with_history(readings, Reading, batch_size=CHUNK_SIZE, default_user=actor,
                                     default_change_reason=reason)
        return
    historical = Reading.history.model
    user_id = actor.pk if actor is not None else None
    now = timezone.now()
    ids = iter(reserve_ids(Reading, len(rows)))
    for batch in progress_bar(batches, enabled=progress, desc="saving readings", unit=" batches"):
        readings = [(next(ids), meters[r.serial].id, r.read_on, r.value, r.read_type, source, "", user_id, now)
                    for r in batch]
        copy_rows(Reading, _READING_COLUMNS, readings)
        copy_rows(historical, (*_READING_COLUMNS, "history_date", "history_change_reason", "history_type",
                               "history_user_id"),
                  [(*reading, now, reason, "+", user_id) for reading in readings])


def _rows_parse(rows: list[CsvRow], *, as_of: date, errors: ImportErrors, words: BatchWords,
                progress: bool) -> list[_Row]:
    parsed = []
    for row in progress_bar(rows, enabled=progress, desc="checking readings", total=len(rows)):
        serial = errors.parse(row, "meter_serial", _serial)
        read_on = errors.parse(row, "read_date", iso_date)
        if read_on is not None:
            problem = rules.future_problem(read_on=read_on, as_of=as_of, as_of_is=words.as_of_is)
            if problem:
                errors.add(line=row.line, field="read_date", message=problem)
                read_on = None
        parsed.append(_Row(line=row.line, serial=serial, read_on=read_on,
                           value=errors.parse(row, "reading", register_number),
                           read_type=errors.parse(row, "read_type", _read_type)))
    return parsed


def _histories_by_serial(*, first_dates: dict[str, date]) -> dict[str, rules.MeterHistory]:
    """The batch's meters on file, by serial; ``first_dates`` is each serial's earliest date in the batch."""
    ids_by_serial: dict[str, int] = {}
    for chunk in chunked(sorted(first_dates)):
        ids_by_serial.update(Meter.objects.filter(serial__in=chunk).order_by().values_list("serial", "id"))
    histories = _histories_load(first_dates={ids_by_serial[s]: d for s, d in first_dates.items()
                                             if s in ids_by_serial})
    return {history.serial: history for history in histories.values()}


def _rows_check(rows: list[_Row], *, meters: dict[str, rules.MeterHistory], errors: ImportErrors,
                words: BatchWords) -> tuple[list[_Row], int]:
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
            problem = rules.installation_problem(meter, row.read_on)
            if problem:
                errors.add(line=row.line, field="read_date", message=problem)
                continue
            if row.value is None:
                continue
            if meter.places or not isinstance(row.value, int):
                try:
                    row.value = register_steps(Decimal(row.value), meter.places)
                    problem = rules.register_problem(row.value)
                    if problem:
                        raise ValueError(problem)
                except ValueError as exc:
                    errors.add(line=row.line, field="reading", message=(
                        f"'{row.value}' is not a whole number (digits only, no commas or decimals): meter {serial}'s "
                        "register shows no places" if not meter.places else f"meter {serial}: {exc}"))
                    continue
            if meter.recorded.get(row.read_on) == row.value:
                skipped += 1
                continue
            problem = rules.same_date_problem(meter, row.read_on, row.value, given_in=words.given_in)
            if problem:
                errors.add(line=row.line, field="reading", message=problem)
            else:
                candidates.append(row)
        for row, problem in rules.sequence_problems(meter, candidates):
            errors.add(line=row.line, field="reading", message=problem)
        new_rows.extend(candidates)
    return new_rows, skipped


def _histories_load(*, first_dates: dict[int, date],
                    excluding: int | None = None) -> dict[int, rules.MeterHistory]:
    """Each meter's installations and the readings its checks need, locking the meters in id order.

    ``first_dates`` is each meter id's earliest date to check. Per chunk of meters the readings loaded are
    every one from the chunk's earliest date on, plus each meter's latest reading before that date;
    ``excluding`` leaves out one reading (the one being changed).
    """
    readings = Reading.objects.all() if excluding is None else Reading.objects.exclude(pk=excluding)
    histories: dict[int, rules.MeterHistory] = {}
    # Lock the meters in id order, so two writers never deadlock and no reading for these meters can slip
    # in between the checks and the insert.
    for chunk in chunked(sorted(first_dates)):
        since = min(first_dates[meter_id] for meter_id in chunk)
        earlier = readings.filter(meter=OuterRef("pk"), read_on__lt=since).order_by("-read_on")
        latest_before = lock_in_order(
            Meter.objects.filter(id__in=chunk).annotate(on=Subquery(earlier.values("read_on")[:1]),
                                                        value=Subquery(earlier.values("value")[:1])),
            "id", "serial", "on", "value", "places")
        for meter_id, serial, read_on, value, places in latest_before:
            history = histories[meter_id] = rules.MeterHistory(id=meter_id, serial=serial, places=places)
            if read_on is not None:
                history.recorded[read_on] = value
        since_first = readings.filter(meter_id__in=chunk, read_on__gte=since).order_by()
        for meter_id, read_on, value in since_first.values_list("meter_id", "read_on", "value"):
            histories[meter_id].recorded[read_on] = value
        installations = Installation.objects.filter(meter_id__in=chunk).order_by()
        for meter_id, installed_on, removed_on in installations.values_list("meter_id", "installed_on",
                                                                            "removed_on"):
            histories[meter_id].installations.append((installed_on, removed_on))
    return histories


# --- one reading: the admin's form -----------------------------------------------------------------

@dataclass(frozen=True)
class _Typed:
    """A reading typed in a form, shaped for ``rules.sequence_problems``."""

    read_on: date
    value: int
    line: None = None


def reading_final_problem(*, reading: Reading) -> str | None:
    """Why ``reading`` can no longer change — the bills in force that used it — or None while none did."""
    held = reading_held_by(reading_id=reading.pk)
    if not held:
        return None
    return (f"this reading was used by {_records_named(held)} and is final: it cannot be changed or deleted. To "
            "correct it, record a new reading and correct the bill with a credit or debit memo, or void the bill "
            "and bill again")


def _records_named(records: list) -> str:
    """"bill 2026-02-1-0001", "bills 2026-02-1-0001, 2026-08-1-0001": records named by kind, in order."""
    by_kind: dict = defaultdict(list)
    for record in records:
        by_kind[record._meta].append(str(record))
    return " and ".join(f"{meta.verbose_name if len(names) == 1 else meta.verbose_name_plural} {', '.join(names)}"
                        for meta, names in by_kind.items())


def reading_problems(*, meter: Meter, read_on: date, value: int, read_type: str, as_of: date,
                     reading: Reading | None = None) -> list[FieldError]:
    """Every rule the reading breaks, each on its field (``read_on``, ``value``, ``read_type``); [] if none.

    ``reading`` is the reading being changed, None for a new one. Locks the meter, so inside the caller's
    transaction the answer holds until the save.
    """
    if reading is not None and reading.pk is not None:
        problem = reading_final_problem(reading=reading)
        if problem:
            return [FieldError(field="", message=problem)]
    problems: list[FieldError] = []
    try:
        _read_type(read_type)
    except ValueError as exc:
        problems.append(FieldError(field="read_type", message=str(exc)))
    try:
        reading_value(str(value))
    except ValueError as exc:
        problems.append(FieldError(field="value", message=str(exc)))
    problem = rules.future_problem(read_on=read_on, as_of=as_of, as_of_is="today")
    if problem:
        return [*problems, FieldError(field="read_on", message=problem)]
    history = _histories_load(first_dates={meter.pk: read_on},
                              excluding=reading.pk if reading is not None else None)[meter.pk]
    problem = rules.installation_problem(history, read_on) or rules.same_date_problem(
        history, read_on, value, given_in="this reading")
    if problem:
        return [*problems, FieldError(field="read_on", message=problem)]
    if not problems:
        problems += [FieldError(field="value", message=message)
                     for _, message in rules.sequence_problems(history, [_Typed(read_on=read_on, value=value)])]
    return problems


@transaction.atomic
def reading_record(*, meter: Meter, read_on: date, value: int, read_type: str, as_of: date,
                   actor: AbstractBaseUser | None, source: str = MANUAL_SOURCE, note: str = "") -> Reading:
    """Record one reading, or raise ApplicationError naming every rule it breaks."""
    problems = reading_problems(meter=meter, read_on=read_on, value=value, read_type=read_type, as_of=as_of)
    if problems:
        raise ApplicationError(errors=problems)
    reading = Reading(meter=meter, read_on=read_on, value=value, read_type=read_type, source=source, note=note,
                      entered_by=actor)
    reading._history_user = actor
    reading.save()
    return reading


@transaction.atomic
def reading_change(*, reading: Reading, meter: Meter, read_on: date, value: int, read_type: str, source: str,
                   note: str, as_of: date, actor: AbstractBaseUser | None) -> Reading:
    """Correct a reading no bill in force has used, or raise ApplicationError saying why not."""
    # The meter first (reading_problems locks it), then the reading: the order every writer locks in.
    problems = reading_problems(meter=meter, read_on=read_on, value=value, read_type=read_type, as_of=as_of,
                                reading=reading)
    if problems:
        raise ApplicationError(errors=problems)
    current = Reading.objects.select_for_update().get(pk=reading.pk)
    current.meter, current.read_on, current.value, current.read_type = meter, read_on, value, read_type
    current.source, current.note, current.entered_by = source, note, actor
    current._history_user = actor
    current.save()
    return current


@transaction.atomic
def reading_delete(*, reading: Reading, actor: AbstractBaseUser | None) -> None:
    """Delete a reading no bill has used (a void bill still keeps its readings), or raise ApplicationError."""
    current = Reading.objects.select_for_update().get(pk=reading.pk)
    problem = reading_final_problem(reading=current)
    if problem:
        raise ApplicationError(problem)
    current._history_user = actor
    try:
        current.delete()
    except ProtectedError as exc:
        kept_by = ", ".join(sorted(str(obj) for obj in exc.protected_objects))
        raise ApplicationError(f"void bill {kept_by} still shows this reading (a void bill keeps the readings "
                               "it was made from); correct the reading instead of deleting it") from exc


# --- meter tests at the customer's request -----------------------------------------------------------

@transaction.atomic(durable=True)
def meter_test_request(*, meter: Meter, requested_on: date, actor: AbstractBaseUser | None,
                       note: str = "") -> MeterTest:
    """Record a customer's written request to test the meter now serving their account."""
    refuse_future(requested_on, field="requested_on", doing="requested")
    installation = (Installation.objects.filter(meter=meter, installed_on__lte=requested_on)
                    .filter(Q(removed_on__isnull=True) | Q(removed_on__gte=requested_on)).first())
    if installation is None:
        raise ApplicationError(f"meter {meter.serial} serves no account on {requested_on}; a test is requested "
                               "for the meter supplying the customer's premises", field="meter")
    return MeterTest.objects.create(meter=meter, account_id=installation.account_id, requested_on=requested_on,
                                    note=(note or "").strip(), requested_by=actor)


@transaction.atomic(durable=True)
def meter_test_result_record(*, test: MeterTest, tested_on: date, actual_gallons: Decimal,
                             registered_gallons: Decimal, actor: AbstractBaseUser | None) -> MeterTest:
    """Record what the test found: the gallons that actually passed and what the register showed. Every
    refusal is named, and nothing changes unless all pass."""
    test = MeterTest.objects.select_for_update().get(pk=test.pk)
    errors: list[FieldError] = []
    if test.settled_on is not None:
        errors.append(FieldError(field="tested_on", message=f"the test was settled on {test.settled_on}; its "
                                                            "result is final"))
    try:
        refuse_future(tested_on, field="tested_on", doing="tested")
    except ApplicationError as exc:
        errors.extend(exc.errors)
    if tested_on < test.requested_on:
        errors.append(FieldError(field="tested_on", message=f"{tested_on} is before the request "
                                                            f"({test.requested_on})"))
    if actual_gallons <= 0:
        errors.append(FieldError(field="actual_gallons", message="the gallons that passed must be more than zero"))
    if registered_gallons < 0:
        errors.append(FieldError(field="registered_gallons", message="cannot be negative"))
    if errors:
        raise ApplicationError(errors=errors)
    test.tested_on, test.actual_gallons, test.registered_gallons = tested_on, actual_gallons, registered_gallons
    test._history_user = actor
    test.save(update_fields=["tested_on", "actual_gallons", "registered_gallons"])
    return test


# --- a meter that failed to register -------------------------------------------------------------------

def account_consumption_intervals(*, account_id: int, since: date, until: date) -> list[tuple[date, date, int]]:
    """(from, to, gallons) between consecutive actual readings of each meter installed on the account,
    within ``since``–``until``; estimated readings are not a basis for another estimate."""
    spans = Installation.objects.filter(account_id=account_id, installed_on__lte=until).select_related("meter")
    intervals = []
    for span in spans:
        reads = list(Reading.objects.filter(meter=span.meter, read_on__gte=max(since, span.installed_on),
                                            read_on__lte=min(until, span.removed_on or until))
                     .exclude(read_type=Reading.ReadType.ESTIMATED).order_by("read_on")
                     .values_list("read_on", "value"))
        for (start_on, start), (end_on, end) in pairwise(reads):
            if end >= start:
                intervals.append((start_on, end_on, to_gallons(end - start, span.meter.unit, span.meter.places)))
    return intervals


@transaction.atomic(durable=True)
def reading_estimate_record(*, meter: Meter, read_on: date, as_of: date,
                            actor: AbstractBaseUser | None) -> Reading:
    """Record an estimated reading for a meter that failed to register: from its last reading, the account's
    previous consumption per day (over the preset's look-back, § 169-22 "any previous consumption which may
    appear … an equitable adjustment"), times the days since; the reading's note says the basis."""
    policy = meter_policy()
    installation = (Installation.objects.filter(meter=meter, installed_on__lte=read_on)
                    .filter(Q(removed_on__isnull=True) | Q(removed_on__gte=read_on)).first())
    if installation is None:
        raise ApplicationError(f"meter {meter.serial} was not installed on {read_on}", field="read_on")
    last = Reading.objects.filter(meter=meter, read_on__lt=read_on).order_by("-read_on").first()
    if last is None:
        raise ApplicationError(f"meter {meter.serial} has no reading before {read_on} to estimate from",
                               field="read_on")
    estimate = rules.estimate_from_history(
        intervals=account_consumption_intervals(account_id=installation.account_id,
                                                since=last.read_on - timedelta(days=policy.estimate_lookback_days),
                                                until=last.read_on),
        since=last.read_on, until=read_on, citation=policy.estimate_citation)
    if estimate is None:
        raise ApplicationError(f"account has no actual consumption in the {policy.estimate_lookback_days} days "
                               f"before {last.read_on} to estimate from; enter the estimate by hand with its basis",
                               field="read_on")
    register = (estimate.gallons if meter.unit == Meter.Unit.GALLONS else
                int((Decimal(estimate.gallons) / GALLONS_PER_CUBIC_FOOT).quantize(Decimal(1), ROUND_HALF_UP)))
    return reading_record(meter=meter, read_on=read_on, value=last.value + register,
                          read_type=Reading.ReadType.ESTIMATED, as_of=as_of, actor=actor, source="estimate",
                          note=estimate.basis)


@transaction.atomic
def meter_test_settled(*, test: MeterTest, on: date, outcome: str) -> MeterTest:
    """Mark a tested meter test settled with what it cost the customer (billing settles it); once only."""
    test = MeterTest.objects.select_for_update().get(pk=test.pk)
    if test.tested_on is None:
        raise ApplicationError("the meter has not been tested yet; record the test's result first", field="tested_on")
    if test.settled_on is not None:
        raise ApplicationError(f"the test was settled on {test.settled_on}: {test.outcome}", field="settled_on")
    test.settled_on, test.outcome = on, outcome
    test.save(update_fields=["settled_on", "outcome"])
    return test


@dataclass(frozen=True)
class MeterChange:
    final: Reading
    new_meter: Meter
    start: Reading


@transaction.atomic
def meter_change(*, installation: Installation, changed_on: date, final_value: int, new_serial: str, new_size: str,
                 start_value: int, actor: AbstractBaseUser | None, new_unit: str = Meter.Unit.GALLONS,
                 new_places: int = 0,
                 as_of: date | None = None) -> MeterChange:
    """The field changed a meter: the old meter's final reading and its removal, the new meter installed on the
    account the same day with its first reading. Each refusal names its field (the final reading breaks the rules
    any reading must keep); nothing is written unless all pass."""
    as_of = as_of or changed_on
    installation = Installation.objects.select_for_update().select_related("meter").get(pk=installation.pk)
    errors: list[FieldError] = []
    try:
        refuse_future(changed_on, field="done_on", doing="recorded")
    except ApplicationError as exc:
        errors.extend(exc.errors)
    if installation.removed_on is not None:
        errors.append(FieldError(field="meter", message=f"meter {installation.meter.serial} was removed on "
                                                        f"{installation.removed_on}"))
    elif changed_on < installation.installed_on:
        errors.append(FieldError(field="done_on", message=f"{changed_on} is before meter {installation.meter.serial} "
                                                          f"was installed ({installation.installed_on})"))
    new_serial = (new_serial or "").strip()
    if not new_serial:
        errors.append(FieldError(field="new_serial", message="the new meter's serial number is needed"))
    elif Meter.objects.filter(serial=new_serial).exists():
        errors.append(FieldError(field="new_serial", message=f"a meter {new_serial} is already on file"))
    if new_size not in dict(Meter._meta.get_field("size").choices):
        errors.append(FieldError(field="new_size", message=f"'{new_size}' is not a meter size"))
    if new_unit not in Meter.Unit.values:
        errors.append(FieldError(field="new_unit", message=f"'{new_unit}' is not gal or cf"))
    if start_value < 0:
        errors.append(FieldError(field="start_value", message="is 0 or more"))
    if not errors:
        errors.extend(FieldError(field="final_value", message=p.message) for p in reading_problems(
            meter=installation.meter, read_on=changed_on, value=final_value, read_type=Reading.ReadType.ACTUAL,
            as_of=as_of))
    if errors:
        raise ApplicationError(errors=errors)
    old = installation.meter
    final = Reading(meter=old, read_on=changed_on, value=final_value, source="meter change",
                    note=f"final reading: replaced by meter {new_serial}", entered_by=actor)
    final._history_user = actor
    final.save()
    installation.removed_on = changed_on
    installation._history_user = actor
    installation.save(update_fields=["removed_on"])
    meter = Meter(serial=new_serial, size=new_size, unit=new_unit, places=new_places)
    meter._history_user = actor
    meter.save()
    placed = Installation(meter=meter, account_id=installation.account_id, installed_on=changed_on)
    placed._history_user = actor
    placed.save()
    start = Reading(meter=meter, read_on=changed_on, value=start_value, source="install",
                    note=f"first reading: replaces meter {old.serial}", entered_by=actor)
    start._history_user = actor
    start.save()
    return MeterChange(final=final, new_meter=meter, start=start)
