"""Today, and the one guard against the future: nothing is billed, assessed, charged or recorded on a day
that has not come (a date after today is a mistyped year far more often than a plan)."""

from datetime import date

from django.utils import timezone

from .errors import ApplicationError


def today() -> date:
    """Today in the utility's time zone (``TIME_ZONE``, America/New_York)."""
    return timezone.localdate()


def refuse_future(day: date, *, field: str = "date", doing: str = "billed, assessed or recorded") -> None:
    """Refuse ``day`` when it is after today, naming the field and today's date."""
    now = today()
    if day > now:
        raise ApplicationError(f"{day} is after today ({now}); nothing is {doing} in the future (check the year)",
                               field=field)
