"""Reads about readings.

What makes a reading final is known above this app: a bill in force rests on its start and end readings.
Apps above meters register what holds readings (``reading_holders_register``, from their
``AppConfig.ready``), so meters asks without importing them.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from django.db import models

from ordinance.selectors import installed_utility, section

from .models import Installation
from .rules import MeterPolicy, years_after

ReadingHolders = Callable[..., list[models.Model]]

_holders: list[ReadingHolders] = []


def reading_holders_register(holders: ReadingHolders) -> None:
    """``holders(reading_id=…)`` lists the records in force that rest on a reading, in a stable order."""
    if holders not in _holders:
        _holders.append(holders)


def reading_held_by(*, reading_id: int) -> list[models.Model]:
    """Every record in force that rests on the reading (for billing: the bills, not void, that used it)."""
    return [held for holders in _holders for held in holders(reading_id=reading_id)]


def meter_policy() -> MeterPolicy:
    """The installed preset's rules for meters; none (any unit, no inspection cycle) before one is installed."""
    utility = installed_utility()
    return section("meters", installed=utility) if utility else MeterPolicy.from_params({})


@dataclass(frozen=True)
class InspectionDue:
    installation: Installation
    due_on: date
    years: int
    citation: str


def meters_due_inspection(*, on: date, years: int | None = None) -> list[InspectionDue]:
    """The meters in service on ``on`` whose installation is ``years`` old or more that day (the preset's
    inspection cycle by default: Old Westbury § 210-30 A, every 10 years from installation), oldest first.

    An installation counts from its own date: a meter rebuilt or replaced is installed again."""
    policy = meter_policy()
    years = years or policy.inspection_years
    if not years:
        return []
    installations = (Installation.objects.filter(installed_on__lte=on).filter(
        models.Q(removed_on__isnull=True) | models.Q(removed_on__gt=on))
        .select_related("meter", "account").order_by("installed_on", "meter__serial"))
    out = []
    for installation in installations:
        due_on = years_after(installation.installed_on, years)
        if due_on > on:
            break
        out.append(InspectionDue(installation=installation, due_on=due_on, years=years,
                                 citation=policy.inspection_citation))
    return out
