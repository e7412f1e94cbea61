"""Dates: the one way a date is written in a file, a request or on the command line (YYYY-MM-DD, from
1900), and the calendar arithmetic shared by calendars, penalties and notice windows."""

import calendar
import re
from datetime import date
from functools import lru_cache

from django.utils import dateformat, formats, translation

from .limits import DATE_FLOOR

ENGLISH = frozenset({None, "en", "en-us"})  # no translation active (a command, a worker) is English

_ISO_DATE = re.compile(r"(\d{4})-\d{2}-\d{2}", re.ASCII)


def iso_date(value: str) -> date:
    """A date written YYYY-MM-DD, in ASCII digits, on or after ``DATE_FLOOR`` (1900-01-01).

    ``date.fromisoformat`` alone also takes 20261102 and 2026-W45-1, and the year 0026; each of those is a
    slip, not a date anyone meant.
    """
    if not value:
        raise ValueError("is required (a date, YYYY-MM-DD)")
    return _iso_date(value)


@lru_cache(maxsize=4096)  # a file's dates repeat (one read date per route); a refusal is not cached
def _iso_date(value: str) -> date:
    match = _ISO_DATE.fullmatch(value)
    if match is None:
        raise ValueError(f"'{value}' is not a date; use YYYY-MM-DD")
    if int(match.group(1)) < DATE_FLOOR.year:
        raise ValueError(f"'{value}': the year {match.group(1)} is before {DATE_FLOOR.year}; check the year")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'{value}' is not a date; use YYYY-MM-DD") from None


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


def fmt_day(day: date) -> str:
    """A date for people, as a bill, the portal and a notice print it: ``Feb 1, 2026`` (in Spanish, for a
    Spanish-speaking customer's bill: ``1 feb 2026``; ``waterbilling/formats``)."""
    if translation.get_language() in ENGLISH:
        return f"{day:%b} {day.day}, {day:%Y}"
    return dateformat.format(day, formats.get_format("DATE_FORMAT"))


def fmt_time(moment) -> str:
    """A time of day for people: ``10:00 AM`` (in Spanish: ``10:00``, the 24-hour clock)."""
    if translation.get_language() in ENGLISH:
        return f"{moment:%-I:%M %p}"
    return dateformat.time_format(moment, formats.get_format("TIME_FORMAT"))


def fmt_month(day: date, *, year: str = "short") -> str:
    """A month for a chart's axis, ``Feb ’26``, or with the ``year="full"``: ``Feb 2026``."""
    if translation.get_language() in ENGLISH:
        return f"{day:%b} ’{day:%y}" if year == "short" else f"{day:%b} {day:%Y}"
    return dateformat.format(day, "b ’y" if year == "short" else "b Y")


def fmt_long_day(day: date) -> str:
    """A date written out, as an email says it: ``February 1, 2026``."""
    if translation.get_language() in ENGLISH:
        return f"{day:%B} {day.day}, {day:%Y}"
    return dateformat.format(day, r"j \d\e F \d\e Y")  # 1 de febrero de 2026
