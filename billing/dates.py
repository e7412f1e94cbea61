"""Calendar arithmetic shared by the calendars, penalties and termination windows."""

import calendar
from datetime import date


def add_months(day: date, months: int) -> date:
    """Same day-of-month ``months`` later, clamped to the month's end (Jan 31 + 1 month = Feb 28/29)."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def first_of_next_month(day: date) -> date:
    return add_months(day.replace(day=1), 1)


def month_before(first: date) -> tuple[date, date]:
    """The whole calendar month before ``first`` (a 1st of a month): (first day, last day)."""
    start = add_months(first.replace(day=1), -1)
    return start, date(start.year, start.month, calendar.monthrange(start.year, start.month)[1])
