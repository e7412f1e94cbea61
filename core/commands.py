"""Shared bits for management commands: the --date argument and the utility's 'today'."""

from datetime import date

from django.core.management.base import CommandError

from .clock import refuse_future, today
from .dates import iso_date
from .errors import ApplicationError

__all__ = ["as_of_argument", "parse_as_of", "today"]


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
    if not allow_future:
        try:
            refuse_future(parsed)
        except ApplicationError as exc:
            raise CommandError(f"--date: {exc}") from None
    return parsed
