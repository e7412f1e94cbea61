"""Shared bits for management commands: the --date argument and the utility's 'today'."""

from datetime import date

from django.core.management.base import CommandError
from django.utils import timezone

from .dates import iso_date


def today() -> date:
    """Today in the utility's time zone (America/New_York)."""
    return timezone.localdate()


def as_of_argument(parser) -> None:
    parser.add_argument("--date", default=None, metavar="YYYY-MM-DD",
                        help="the day the command acts as of (default: today, America/New_York)")


def parse_as_of(value: str | None, *, allow_future: bool = False) -> date:
    if value is None:
        return today()
    try:
        parsed = iso_date(value)
    except ValueError as exc:
        raise CommandError(f"--date: {exc}") from None
    if not allow_future and parsed > today():
        raise CommandError(
            f"--date: {parsed} is after today ({today()}); nothing is ever billed, assessed or recorded "
            "in the future (check the year)")
    return parsed
