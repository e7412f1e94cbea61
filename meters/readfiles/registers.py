"""Register reads from a mapped file: recorded by ``meters.services.readings_record`` (every rule a reading keeps,
all or nothing), change-outs by ``meter_change``, each reading checked against the range expected for it, the
file's flags kept as alerts (once per episode), and the file's no-read codes kept as missed reads."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING

from django.db import transaction

from core.csvimport import CsvRow, ImportErrors, ImportResult, ImportSource, change_reason, chunked, import_source_read
from core.errors import ApplicationError
from ordinance.selectors import installed_utility

from .. import rules
from ..models import Installation, Meter, Reading, UsageAlert
from ..services import FILE, READINGS_LAYOUT, meter_change, readings_record
from ..units import register_text
from .alerts import alerts_write, episodes_end
from .daily import daily_reads_import
from .mapping import FLAGS, UNITS, ReadMapping, mapping_load
from .missed import missed_problems, missed_record
from .parse import Parsed, _Read, parsed

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

MAPPED_SOURCE = "import"


def readings_import_mapped(*, file: ImportSource, as_of: date, actor: AbstractBaseUser | None, mapping: str,
                           progress: bool = False) -> ImportResult:
    """Import the readings of a file in ``mapping``'s layout (a name or a path), all or nothing — or, where the
    mapping says ``partial``, all but the meters of the lines refused, which are listed."""
    found = mapping_load(mapping)
    source = import_source_read(file, encoding=found.encoding)
    if found.reads in ("daily", "interval"):
        return daily_reads_import(source=source, as_of=as_of, actor=actor, mapping=found)
    errors = ImportErrors(columns=READINGS_LAYOUT.columns)
    file_errors = ImportErrors(columns=READINGS_LAYOUT.columns) if found.partial else errors
    meters: dict = {}
    got = parsed(source.text, found, errors, meters=meters, file_errors=file_errors)
    missed_problems(got.missed, as_of=as_of, errors=errors, mapping=found)
    file_errors.raise_if_any()
    recorded = partial(_recorded, got, mapping=found, meters=meters, as_of=as_of, actor=actor, progress=progress,
                       reason=change_reason(command=f"import_readings --mapping {found.name}", file=source),
                       source_name=source.name)
    if not found.partial:
        return recorded(errors=errors)
    return _partially_recorded(got, errors=errors, recorded=recorded)


def _recorded(got: Parsed, *, mapping: ReadMapping, meters: dict, as_of: date, actor, progress: bool, reason: str,
              source_name: str, errors: ImportErrors, held: frozenset[str] = frozenset()) -> ImportResult:
    """Record the file's reads, change-outs, alerts and missed reads (but the ``held`` meters'), all or nothing."""
    errors.raise_if_any()
    reads = [r for r in got.reads if r.serial not in held]
    plain = [r for r in reads if r.change is None]
    history = history_of({meters[r.serial][0] for r in plain}, before=max(r.read_on for r in plain) + timedelta(1)) \
        if plain else {}
    _as_recorded(plain, mapping=mapping, meters=meters, history=history)
    rollovers = _rollovers(plain, meters=meters, history=history)
    rows = [CsvRow(line=r.line, values={"meter_serial": r.serial, "read_date": r.read_on.isoformat(),
                                        "reading": register_text(r.value, meters[r.serial][3], grouped=False),
                                        "read_type": r.read_type}) for r in plain]
    ranges = _expected(plain, meters=meters, history=history)
    with transaction.atomic():
        result = readings_record(rows=rows, as_of=as_of, actor=actor, source=MAPPED_SOURCE, reason=reason, words=FILE,
                                 progress=progress, errors=errors) if rows else ImportResult()
        changes = _changes_record([r for r in reads if r.change], as_of=as_of, actor=actor)
        alerts_raise(reads, ranges=ranges, meters=meters, rollovers=rollovers)
        missed = missed_record([m for m in got.missed if m.serial not in held], meters=meters, source=source_name)
    return ImportResult(created=result.created + changes, skipped=result.skipped, missed=missed)


def _partially_recorded(got: Parsed, *, errors: ImportErrors, recorded) -> ImportResult:
    """A partial mapping's import: the meters of the lines refused (in reading, then by the reading rules) are held
    with every line of theirs, the rest recorded; the refusals are listed with the result."""
    listed, lines = list(errors.errors), set(errors.bad_lines)
    held = frozenset(got.serials[line] for line in lines if line in got.serials)
    while True:
        attempt = ImportErrors(columns=READINGS_LAYOUT.columns)
        try:
            result = recorded(errors=attempt, held=held)
        except ApplicationError as exc:
            bad = set(attempt.bad_lines) or {e.line for e in exc.errors if e.line is not None}
            more = frozenset(got.serials[line] for line in bad if line in got.serials) - held
            if not more:
                raise
            held, lines = held | more, lines | bad
            listed += attempt.errors or exc.errors
            continue
        return replace(result, held=tuple(sorted(listed, key=lambda e: e.line or 0)), held_lines=len(lines))


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
                         new_unit=installation.meter.unit, new_places=installation.meter.places, as_of=as_of)
        except ApplicationError as exc:
            for error in exc.errors:
                errors.add(line=read.line, field=error.field or "reading", message=error.message)
    errors.raise_if_any()
    return 2 * len(reads)


def history_of(meter_ids, *, before: date) -> dict[int, list[tuple[date, int]]]:
    """Each meter's readings over the two years before ``before``, in date order."""
    history: dict[int, list[tuple[date, int]]] = defaultdict(list)
    for chunk in chunked(sorted(meter_ids)):
        for meter_id, read_on, value in (Reading.objects.filter(meter_id__in=chunk, read_on__lt=before,
                                                                read_on__gte=before - timedelta(days=730))
                                         .order_by("meter_id", "read_on").values_list("meter_id", "read_on", "value")):
            history[meter_id].append((read_on, value))
    return history


def _as_recorded(reads: list[_Read], *, mapping: ReadMapping, meters: dict, history: dict) -> None:
    """A read that is the reading on file for its meter and day, as the file's resolution shows it (a fixed layout in
    tens of gallons gives 241153 for 2,411,535), is that reading: a route keyed back unchanged records nothing."""
    if mapping.layout != "fixed":
        return  # a CSV layout writes the register whole, to its last place
    for read in reads:
        _pk, unit, _size, places = meters[read.serial]
        step = mapping.multiplier * UNITS.get(mapping.unit or unit, (unit, 1))[1] * 10 ** places
        step //= 10 ** mapping.implied_decimals
        on_file = dict(history.get(meters[read.serial][0], [])).get(read.read_on)
        if step > 1 and on_file is not None and on_file != read.value and on_file - on_file % step == read.value:
            read.value = on_file


def _rollovers(reads: list[_Read], *, meters: dict, history: dict) -> dict[int, int]:
    """Each read below its meter's last reading that fits a rollover of the meter's dials (``rules.rolled_over``)
    is rewritten as the register it stands for; the shown read of each one, by line. One that does not fit is left
    for the reading rules to refuse (a register never runs backwards)."""
    below = [r for r in sorted(reads, key=lambda r: r.read_on) if (rows := history.get(meters[r.serial][0]))
             and (earlier := [v for d, v in rows if d < r.read_on]) and r.value < earlier[-1]]
    if not below:
        return {}
    dials = dict(Meter.objects.filter(id__in=list({meters[r.serial][0] for r in below})).values_list("id", "dials"))
    shown = {}
    for read in below:
        meter_id = meters[read.serial][0]
        last = [v for d, v in history[meter_id] if d < read.read_on][-1]
        register = rules.rolled_over(last, read.value, dials=dials[meter_id])
        if register is not None:
            turn = 10 ** dials[meter_id]
            if register // turn > last // turn:  # a new turn (not one already recorded, counted again)
                shown[read.line] = read.value
            read.value = register
    return shown


def _expected(reads: list[_Read], *, meters: dict, history: dict) -> dict[int, tuple[int, int | None]]:
    """The range each actual reading was expected in (by line), from its meter's ``history`` before it."""
    actual = [r for r in reads if r.read_type == Reading.ReadType.ACTUAL]
    if not actual:
        return {}
    utility = installed_utility()
    factor = utility.high_usage_factor if utility else Decimal(3)
    out = {}
    for read in actual:
        recorded = history.get(meters[read.serial][0], [])
        if (read.read_on, read.value) in recorded:
            continue  # the reading already on file (a file read twice, a route keyed back unchanged)
        earlier = [(d, v) for d, v in recorded if d < read.read_on]
        found = rules.expected_range(earlier, read.read_on, factor=factor)
        if found is not None:
            out[read.line] = found
    return out


def alerts_raise(reads: list[_Read], *, ranges: dict[int, tuple[int, int | None]], meters: dict,
                 rollovers: dict[int, int] | None = None) -> list[int]:
    """The meter alerts of the file's flags (once per episode; an episode the reads show over is ended), of its
    readings outside their expected range, and of its registers recorded as rollovers."""
    rollovers = rollovers or {}
    wanted = []
    seen: dict[int, dict[date, set[str]]] = defaultdict(dict)
    for read in reads:
        meter_id, unit, _size, places = meters[read.serial]
        seen[meter_id].setdefault(read.read_on, set()).update(FLAGS[flag] for flag in read.flags)
        for flag in read.flags:
            days = read.no_flow_days if flag == "no_flow" else 0
            wanted.append((meter_id, read.read_on, FLAGS[flag], days, f"{FLAGS[flag].label}"
                           + (f" ({days} days)" if days else "") + f": line {read.line} of the file"))
        span = ranges.get(read.line)
        if span and (read.value < span[0] or (span[1] is not None and read.value > span[1])):
            high = register_text(span[1], places) if span[1] is not None else "any"
            wanted.append((meter_id, read.read_on, UsageAlert.Kind.OUT_OF_RANGE, 0,
                           f"reading {register_text(read.value, places)} is outside the "
                           f"{register_text(span[0], places)}–{high} expected ({unit}): re-read"))
        if read.line in rollovers:
            wanted.append((meter_id, read.read_on, UsageAlert.Kind.ROLLOVER, 0,
                           f"line {read.line} read {register_text(rollovers[read.line], places)}, below the last "
                           f"reading: the register turned past all nines and is recorded as "
                           f"{register_text(read.value, places)} ({unit}); check the dials"))
    episodes_end(seen)
    return alerts_write(wanted)
