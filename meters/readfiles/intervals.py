"""Interval reads (``reads = "interval"``): an AMI head-end's hourly (or finer) register reads.

Each meter's reads become its daily reads — each day's last read is the day's register, with the day's flags — and
go the daily reads' way (kept by month, the month's end recorded for billing). Continuous flow is looked for hour by
hour, which daily reads cannot see: water through the meter in every interval for 24 hours, no interval at zero, is
continuous flow (a running toilet, a leak after the meter) — one alert per episode; an interval at zero after it
ends the episode. A gap in the reads (an interval longer than an hour) starts the count again.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta

from ..models import UsageAlert
from ..units import to_gallons
from .alerts import alerts_write, episodes_close, open_episodes
from .parse import _Read

HOURS = 24
LONGEST_INTERVAL = timedelta(hours=1)


def intervals_as_days(reads: list[_Read]) -> list[_Read]:
    """Each meter's last read of each day, carrying every flag of that day; the reads' own order kept otherwise."""
    last: dict[tuple[str, date], _Read] = {}
    flags: dict[tuple[str, date], list[str]] = {}
    for read in reads:
        key = (read.serial, read.read_on)
        seen = flags.setdefault(key, [])
        seen += [f for f in read.flags if f not in seen]
        if key not in last or read.at > last[key].at:
            last[key] = read
    return [replace(read, flags=list(flags[key])) for key, read in last.items()]


def running_since(series: list[tuple[datetime, int]]) -> tuple[datetime | None, datetime | None, int]:
    """Over a meter's (time, register) reads in time order: when the last run of 24 hours with water in every
    interval reached 24 hours (or None), the last interval at zero (or None), and the lowest interval of that run."""
    found = zero = None
    start, lowest = (series[0][0] if series else None), None
    for (before_at, before), (at, register) in zip(series, series[1:], strict=False):
        use = register - before
        if at - before_at > LONGEST_INTERVAL or use <= 0:
            start, lowest = at, None
            if use <= 0:
                zero = at
            continue
        lowest = use if lowest is None else min(lowest, use)
        if at - start >= timedelta(hours=HOURS):
            found = at
    return found, zero, lowest or 0


def interval_flow_raise(reads: list[_Read], *, meters: dict) -> list[int]:
    """Continuous flow hour by hour, once per episode (``alerts``); an interval at zero after an open one ends it."""
    series: dict[int, list[tuple[datetime, int]]] = {}
    for read in sorted(reads, key=lambda r: (r.serial, r.at)):
        series.setdefault(meters[read.serial][0], []).append((read.at, read.value))
    units = {pk: (unit, places) for pk, unit, _size, places in meters.values()}
    episodes = {meter_id: alert for (meter_id, _), alert in
                open_episodes(series, {UsageAlert.Kind.CONTINUOUS}).items()}
    wanted, ended = [], []
    for meter_id, reads_of in series.items():
        found, zero, lowest = running_since(reads_of)
        episode = episodes.get(meter_id)
        if episode is not None and zero is not None and (found is None or zero > found):
            ended.append((episode, f"an interval at zero at {zero:%Y-%m-%d %H:%M}"))
            continue
        if found is not None:
            wanted.append((meter_id, found.date(), UsageAlert.Kind.CONTINUOUS, 0,
                           f"{HOURS} hours with water through the meter in every interval, none at zero (the lowest "
                           f"{to_gallons(lowest, *units[meter_id]):,} gal), to {found:%Y-%m-%d %H:%M}: a leak?"))
    episodes_close(ended)
    return alerts_write(wanted)
