"""Daily register reads from an AMI head-end: merged into each meter's month rows (``DailyRead``), all or nothing;
each complete month's last day recorded as the meter's register reading (what billing reads); the day's flags kept
as alerts once per episode; continuous flow looked for (``rules.continuous_flow``)."""

from __future__ import annotations

import calendar
import json
from collections import defaultdict
from datetime import date, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction

from core.csvimport import CsvRow, ImportErrors, ImportFile, ImportResult, change_reason, chunked
from core.db import copy_rows, is_postgres

from .. import rules
from ..models import DailyRead, Meter, UsageAlert
from ..services import FILE, READINGS_LAYOUT, readings_record
from ..units import register_text, to_gallons
from .alerts import alerts_write, episodes_close, open_episodes, spans_of
from .intervals import interval_flow_raise, intervals_as_days
from .mapping import FLAGS, ReadMapping
from .missed import missed_problems, missed_record
from .parse import _Read, parsed

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

DAILY_SOURCE = "daily"


def daily_reads_import(*, source: ImportFile, as_of: date, actor: AbstractBaseUser | None,
                       mapping: ReadMapping) -> ImportResult:
    """Merge a file of daily register reads into each meter's month rows, all or nothing; record each complete
    month's last day as the meter's register reading; look for continuous flow."""
    errors = ImportErrors(columns=READINGS_LAYOUT.columns)
    meters: dict = {}
    got = parsed(source.text, mapping, errors, meters=meters)
    missed_problems(got.missed, as_of=as_of, errors=errors, mapping=mapping)
    intervals = got.reads if mapping.reads == "interval" else None
    reads = intervals_as_days(intervals) if intervals is not None else got.reads
    spans = spans_of({m[0] for m in meters.values()})
    by_meter: dict[int, dict[date, _Read]] = defaultdict(dict)
    for read in reads:
        meter_id = meters[read.serial][0]
        if read.read_on > as_of:
            errors.add(line=read.line, field=mapping.named("read_date"),
                       message=f"{read.read_on} is after the import date {as_of}; nothing is recorded in the future")
        elif not any(start <= read.read_on and (end is None or read.read_on <= end)
                     for start, end, _account in spans.get(meter_id, [])):
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
                                               "reading": register_text(read.value, meters[read.serial][3],
                                                                        grouped=False),
                                               "read_type": "actual"}) for read in ends]
        readings_record(rows=rows, as_of=as_of, actor=actor, source=DAILY_SOURCE, words=FILE, errors=errors,
                        reason=change_reason(command=f"import_readings --mapping {mapping.name}", file=source))
        _flags_raise(by_meter)
        through = max((d for days in by_meter.values() for d in days), default=as_of)
        in_hand = None
        if through - timedelta(days=settings.CONTINUOUS_FLOW_DAYS + rules.FLOOR_DAYS) >= min(
                (month for _, month in months), default=through):  # the months loaded reach back far enough
            in_hand = {**stored, **merged}
        if intervals is not None:
            interval_flow_raise(intervals, meters=meters)
        else:
            continuous_flow_raise(list(by_meter), through=through, months=in_hand)
        missed = missed_record(got.missed, meters=meters, source=source.name)
    return ImportResult(created=created, skipped=skipped, missed=missed)


def _flags_raise(by_meter: dict[int, dict[date, _Read]]) -> list[int]:
    """The days' flags as alerts, once per episode; an episode a day without its flag shows over is ended."""
    from .alerts import episodes_end

    seen = {meter_id: {day: {FLAGS[f] for f in read.flags} for day, read in days.items()}
            for meter_id, days in by_meter.items()}
    episodes_end(seen)
    return alerts_write([(meter_id, day, FLAGS[flag], read.no_flow_days if flag == "no_flow" else 0,
                          f"{FLAGS[flag].label}: line {read.line} of the file")
                         for meter_id, days in by_meter.items() for day, read in sorted(days.items())
                         for flag in read.flags])


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
            # Interval reads: a later file's later hours of a day move the day's register on.
            stored_value = values[day.day - 1]
            if stored_value is not None and not (mapping.reads == "interval" and read.value > stored_value):
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
    """Continuous flow in the daily reads up to ``through``: ``rules.continuous_flow`` over each meter's last days.
    One alert per episode: while one is open, a day of use moves it on and a day the meter stood still ends it.
    ``months``: the month rows in hand (``daily_use``)."""
    days = settings.CONTINUOUS_FLOW_DAYS
    since = through - timedelta(days=days + rules.FLOOR_DAYS - 1)
    uses = daily_use(meter_ids, since=since, until=through, months=months)
    units = {pk: (unit, places) for chunk in chunked(sorted(meter_ids))
             for pk, unit, places in Meter.objects.filter(id__in=chunk).values_list("id", "unit", "places")}
    episodes = {meter_id: alert for (meter_id, _), alert in
                open_episodes(meter_ids, {UsageAlert.Kind.CONTINUOUS}).items()}
    wanted, ended = [], []
    for meter_id, series in uses.items():
        episode = episodes.get(meter_id)
        if episode is not None:
            still = [day for day, use in series if day > episode.seen_through and use == 0]
            if still:
                ended.append((episode, f"the meter stood still on {min(still)}"))
            elif series and series[-1][1]:
                wanted.append((meter_id, through, UsageAlert.Kind.CONTINUOUS, days, ""))
            continue
        gallons = [None if use is None else to_gallons(use, *units[meter_id]) for _, use in series]
        found = rules.continuous_flow(gallons, days=days, margin=settings.CONTINUOUS_FLOW_MARGIN_GALLONS)
        if found:
            wanted.append((meter_id, through, UsageAlert.Kind.CONTINUOUS, days, found))
    episodes_close(ended)
    return alerts_write(wanted)

