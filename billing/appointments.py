"""When work a fee pays for may be done: a fee's appointment rules, with no database.

Some fees are for work done at the main in the inspector's presence, and the ordinance says when: Old
Westbury's taps are made only "between the hours of 9:00 a.m. and 3:00 p.m., Monday through Friday, except
holidays", the inspector needs "at least 24 hours' notice" (§ 210-17), and "no permit shall extend beyond
15 days". A ``[[fee]]`` carries these as ``params.appointments``; the fee rule builds ``AppointmentRules``
from them and the charge is refused, naming each rule broken, unless its appointment keeps all of them.

Interpretations:
* The hours are the appointment's start, inclusive at both ends (9:00 and 15:00 are allowed, 15:01 is not),
  in the utility's local time (America/New_York), as the clerk writes it.
* "Holidays" are the public holidays of the state the preset names (``holidays = "US-NY"``: New York's,
  from the ``holidays`` package, Lincoln's Birthday and Election Day included); none when not named.
* Notice: the appointment is at least ``notice_hours`` after the notice was given.
* A permit's validity: its last day is at most ``permit_days_max`` days after its first (a permit from the
  1st "extends" to the 16th at most), and the appointment falls within it.
"""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import cache

from core.errors import FieldError

DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class Appointment:
    """When the work is to be done, when notice was given, and the permit it is done under."""

    at: datetime
    noticed_at: datetime
    permit_from: date
    permit_until: date


@cache
def _holidays(region: str, year: int) -> dict[date, str]:
    import holidays

    country, _, subdivision = region.partition("-")
    return dict(holidays.country_holidays(country, subdiv=subdivision or None, years=year))


@dataclass(frozen=True)
class AppointmentRules:
    opens: time
    closes: time
    weekdays: tuple[int, ...]
    holidays: str
    notice_hours: int
    permit_days_max: int
    citation: str
    notice_citation: str

    @classmethod
    def from_params(cls, params: dict, *, citation: str) -> "AppointmentRules":
        opens, closes = params.get("hours", ["00:00", "23:59"])
        return cls(opens=time.fromisoformat(opens), closes=time.fromisoformat(closes),
                   weekdays=tuple(DAY_NAMES.index(day) for day in params.get("weekdays", DAY_NAMES)),
                   holidays=params.get("holidays", ""), notice_hours=int(params.get("notice_hours", 0)),
                   permit_days_max=int(params.get("permit_days_max", 0)),
                   citation=params.get("citation", citation),
                   notice_citation=params.get("notice_citation", params.get("citation", citation)))

    def words(self) -> str:
        days = "–".join((DAY_NAMES[self.weekdays[0]], DAY_NAMES[self.weekdays[-1]])) if self.weekdays else "no day"
        parts = [f"{self.opens:%H:%M}–{self.closes:%H:%M} {days}"]
        if self.holidays:
            parts.append(f"not on {self.holidays} holidays")
        if self.notice_hours:
            parts.append(f"{self.notice_hours} hours' notice")
        if self.permit_days_max:
            parts.append(f"a permit of at most {self.permit_days_max} days")
        return ", ".join(parts)

    def holiday(self, day: date) -> str | None:
        return _holidays(self.holidays, day.year).get(day) if self.holidays else None

    def problems(self, appointment: Appointment, *, what: str) -> list[FieldError]:
        """Every rule the appointment breaks, each on its field; [] when it keeps them all."""
        at, errors = appointment.at, []
        rule = f"({self.citation})"
        if at.weekday() not in self.weekdays:
            errors.append(FieldError(field="at", message=f"{what} is not made on a {at:%A} {rule}: "
                                                         f"only {self.words()}"))
        elif (name := self.holiday(at.date())) is not None:
            errors.append(FieldError(field="at", message=f"{what} is not made on a holiday: {at.date()} is "
                                                         f"{name} {rule}"))
        if not self.opens <= at.time() <= self.closes:
            errors.append(FieldError(field="at", message=f"{what} is made between {self.opens:%H:%M} and "
                                                         f"{self.closes:%H:%M} only; {at:%H:%M} is outside {rule}"))
        if self.notice_hours and at - appointment.noticed_at < timedelta(hours=self.notice_hours):
            given = at - appointment.noticed_at
            hours = max(given.total_seconds(), 0) / 3600
            errors.append(FieldError(field="noticed_at", message=(
                f"the inspector needs at least {self.notice_hours} hours' notice ({self.notice_citation}); notice "
                f"given {appointment.noticed_at:%Y-%m-%d %H:%M} is {hours:.1f} hours before {at:%Y-%m-%d %H:%M}")))
        if appointment.permit_until < appointment.permit_from:
            errors.append(FieldError(field="permit_until", message=f"the permit ends {appointment.permit_until}, "
                                                                   f"before it begins {appointment.permit_from}"))
        elif self.permit_days_max and (appointment.permit_until - appointment.permit_from).days > self.permit_days_max:
            errors.append(FieldError(field="permit_until", message=(
                f"no permit extends beyond {self.permit_days_max} days {rule}: {appointment.permit_from} – "
                f"{appointment.permit_until} is {(appointment.permit_until - appointment.permit_from).days} days")))
        elif not appointment.permit_from <= at.date() <= appointment.permit_until:
            errors.append(FieldError(field="at", message=f"{at.date()} is outside the permit's "
                                                         f"{appointment.permit_from} – {appointment.permit_until}"))
        return errors
