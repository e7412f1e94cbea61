"""Today, and the one guard against the future: nothing is billed, assessed, charged or recorded on a day
that has not come (a date after today is a mistyped year far more often than a plan)."""

from datetime import date

from django.utils import timezone

from .errors import ApplicationError, FieldError


def today() -> date:
    """Today in the utility's time zone (``TIME_ZONE``, America/New_York)."""
    return timezone.localdate()


def refuse_future(day: date, *, field: str = "date", doing: str = "billed, assessed or recorded") -> None:
    """Refuse ``day`` when it is after today, naming the field and today's date."""
    now = today()
    if day > now:
        raise ApplicationError(f"{day} is after today ({now}); nothing is {doing} in the future (check the year)",
                               field=field)


def after_errors(as_of: date, why: str = "", **days: date | None) -> list[FieldError]:
    """A refusal for each of ``days`` (by field; None passes) after ``as_of``, the day the record is made as of:
    what has not happened yet is not recorded. ``why`` says what the clerk should do instead."""
    tail = f"; {why}" if why else ""
    return [FieldError(field, f"{day} is after {as_of}{tail}") for field, day in days.items()
            if day is not None and day > as_of]
