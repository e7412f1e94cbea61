"""Consumption for one bill, from readings, with no database.

From the latest reading in the read window back to the reading used on the previous bill (or, for a
meter with no earlier bill, the first reading of its installation). A meter changed out during the period
contributes from its start reading to its last (final) reading; the new meter from its first reading to
the latest in the window. Cubic feet convert to gallons per meter (7.48052 gal/ft³, whole gallons).
"""

from dataclasses import dataclass
from datetime import date

from meters.units import to_gallons


@dataclass(frozen=True)
class Read:
    id: int
    meter_id: int
    read_on: date
    value: int
    read_type: str


@dataclass(frozen=True)
class Span:
    meter_id: int
    installed_on: date
    removed_on: date | None
    unit: str
    size: str
    places: int = 0  # the register's places after the unit (its readings are kept in those steps)


@dataclass(frozen=True)
class Usage:
    gallons: int
    start: Read
    end: Read
    estimated: bool


@dataclass(frozen=True)
class Problem:
    kind: str  # "no_reading" | "lower_reading"
    detail: str


def usage_for_bill(*, installations: list[Span], readings: dict[int, list[Read]], window: tuple[date, date],
                   previous_end: Read | None, previous_period_end: date | None) -> Usage | Problem:
    """``readings[meter_id]`` sorted by date. ``previous_end`` is the closing reading of the previous bill."""
    window_start, window_end = window
    current = [s for s in installations if s.installed_on <= window_end
               and (s.removed_on is None or s.removed_on > window_end)]
    if not current:
        return Problem("no_reading", f"no meter installed on the account during {window_start} – {window_end}")
    total, estimated = 0, False
    first_start: Read | None = None
    last_end: Read | None = None
    for span in installations:
        if span.installed_on > window_end:
            continue
        if previous_period_end and span.removed_on is not None and span.removed_on <= previous_period_end:
            continue  # removed before the previous bill closed: fully billed already
        reads = [r for r in readings.get(span.meter_id, []) if r.read_on >= span.installed_on
                 and (span.removed_on is None or r.read_on <= span.removed_on)]
        if not reads:
            return Problem("no_reading", f"meter {span.meter_id} has no reading since its installation")
        if previous_end is not None and previous_end.meter_id == span.meter_id:
            start = previous_end
        elif previous_period_end is not None and reads[0].read_on <= previous_period_end:
            start = [r for r in reads if r.read_on <= previous_period_end][-1]
        else:
            start = reads[0]
        in_window = [r for r in reads if window_start <= r.read_on <= window_end]
        if span in current:
            if not in_window or in_window[-1].id == start.id:
                return Problem("no_reading", f"no new reading between {window_start} and {window_end}")
            end = in_window[-1]
        else:
            later = [r for r in reads if r.read_on <= window_end]
            end = later[-1]
        if end.value < start.value:
            return Problem("lower_reading", f"reading {end.value:,} on {end.read_on} is lower than "
                           f"{start.value:,} on {start.read_on} with no meter change")
        total += to_gallons(end.value - start.value, span.unit, span.places)
        estimated = estimated or end.read_type == "estimated"
        if first_start is None or start.read_on < first_start.read_on:
            first_start = start
        if span in current and (last_end is None or end.read_on > last_end.read_on):
            last_end = end
    return Usage(gallons=total, start=first_start, end=last_end, estimated=estimated)
