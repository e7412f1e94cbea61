"""Banking days: the days the Federal Reserve settles ACH entries. Pure: no database.

A banking day is a weekday that is not a Federal Reserve holiday. The Reserve Banks close on the eleven federal
holidays on their own dates, and on the Monday after one that falls on a Sunday; a holiday that falls on a Saturday
closes nothing (the Friday before is open, unlike the federal offices). ``holidays.US(observed=False)`` gives the
holidays on their own dates; the Sunday rule is applied here.
"""

from datetime import date, timedelta
from functools import lru_cache

import holidays


@lru_cache(maxsize=64)
def _closed(year: int) -> frozenset[date]:
    closed = set()
    for day in holidays.US(years=[year - 1, year], observed=False):
        if day.weekday() == 6:  # Sunday: the Monday after is closed
            closed.add(day + timedelta(days=1))
        elif day.weekday() < 5:
            closed.add(day)
    return frozenset(d for d in closed if d.year == year)


def fed_holiday_name(day: date) -> str | None:
    """The holiday that closes the Reserve Banks on ``day``, or None."""
    if day not in _closed(day.year):
        return None
    names = holidays.US(years=[day.year - 1, day.year], observed=False)
    return names.get(day) or f"{names.get(day - timedelta(days=1))} (observed)"


def is_banking_day(day: date) -> bool:
    return day.weekday() < 5 and day not in _closed(day.year)


def banking_day_on_or_after(day: date) -> date:
    while not is_banking_day(day):
        day += timedelta(days=1)
    return day


def next_banking_day(day: date) -> date:
    """The first banking day after ``day``."""
    return banking_day_on_or_after(day + timedelta(days=1))


def why_not_banking_day(day: date) -> str:
    """Why the Federal Reserve settles nothing on ``day`` ("" when it does)."""
    if day.weekday() >= 5:
        return f"{day:%A}"
    name = fed_holiday_name(day)
    return f"a Federal Reserve holiday ({name})" if name else ""


def banking_days_after(day: date, count: int) -> date:
    """The ``count``-th banking day after ``day`` (``day`` itself when ``count`` is 0)."""
    for _ in range(count):
        day = next_banking_day(day)
    return day
