"""The rules every meter reading is held to, whoever records it: the CSV import, the API or a clerk's form.

Pure functions over plain data, no ORM: ``MeterHistory`` is what the database knows about one meter (its
installations and the readings on file around the dates being checked), and each rule answers with the
problem in words a clerk understands, or ``None``. The batch writer checks a whole file in memory with
them and the single-reading writer checks one reading with them, so both refuse the same things with the
same words (``meters.services``).

* A reading is a whole number a meter register can show: at most 10 digits (``REGISTER_MAX``).
* A reading is not dated after the day it is recorded (the import date, or today).
* It is dated while the meter was installed on an account: not before its installation, not after its
  removal — the removal day itself is allowed, for the final reading.
* One reading per meter per date.
* A meter's register never runs backwards: by date, each reading is at least the one before it and at
  most the one after it. A replaced meter is a new meter with its own serial.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from itertools import pairwise
from typing import Protocol

from ordinance.keys import Key, ListOf, Text, Whole

# The most a meter register shows: 10 digits, 9,999,999,999. Water meter registers have 4 to 9 wheels (a
# large meter's in cubic feet, a small one's in gallons), so 10 digits takes every real reading and refuses a
# reading typed with extra digits, whose gallons would be more than a bill can hold. One bound for every
# meter rather than the meter's ``dials``: that field is 6 on every meter the accounts import creates (its
# file has no dial count) while many gallon registers show 7 or more, so it is not a fact about the register
# that a reading could be refused on.
REGISTER_DIGITS = 10
REGISTER_MAX = 10 ** REGISTER_DIGITS - 1


@dataclass
class MeterHistory:
    id: int
    serial: str
    installations: list[tuple[date, date | None]] = field(default_factory=list)
    places: int = 0  # the register's places after the unit: its readings are kept in those steps
    # Readings already recorded, by date: the latest before the first date checked, and every one after.
    recorded: dict[date, int] = field(default_factory=dict)


class NewReading(Protocol):
    """A reading to be recorded; ``line`` is its line in a file, None for one typed in a form."""

    line: int | None
    read_on: date
    value: int


def register_problem(value: int) -> str | None:
    if value > REGISTER_MAX:
        return f"{value} is more than a meter register holds ({REGISTER_DIGITS} digits: at most {REGISTER_MAX:,})"
    return None


def future_problem(*, read_on: date, as_of: date, as_of_is: str) -> str | None:
    """``as_of_is`` names the day readings are recorded as of: "the import date", "today"."""
    if read_on > as_of:
        return f"{read_on} is after {as_of_is} {as_of}; nothing is recorded in the future"
    return None


def installation_problem(meter: MeterHistory, read_on: date) -> str | None:
    spans = sorted(meter.installations)
    if any(start <= read_on and (end is None or read_on <= end) for start, end in spans):
        return None
    if not spans:
        return f"meter {meter.serial} has never been installed on an account; install it before reading it"
    if read_on < spans[0][0]:
        return f"{read_on} is before meter {meter.serial} was installed on {spans[0][0]}"
    removed = max(end for _, end in spans if end is not None and end < read_on)
    reinstalled = [start for start, _ in spans if start > read_on]
    if reinstalled:
        return (f"meter {meter.serial} was not installed on {read_on}: removed {removed}, "
                f"installed again {min(reinstalled)}")
    return (f"meter {meter.serial} was removed on {removed} and has no open installation; "
            "a removed meter takes no readings after its removal")


def same_date_problem(meter: MeterHistory, read_on: date, value: int, *, given_in: str) -> str | None:
    """Another reading is on file for the meter and date; ``given_in`` names where ``value`` came from."""
    recorded = meter.recorded.get(read_on)
    if recorded is None:
        return None
    return (f"meter {meter.serial} already has a reading of {recorded} on {read_on}; {given_in} says {value} "
            "(one reading per meter per date)")


def sequence_problems(meter: MeterHistory, new: Sequence[NewReading]) -> list[tuple[NewReading, str]]:
    """Each new reading that makes the meter's register run backwards, with why.

    The recorded and new readings are put in date order and every step is checked: a new reading lower
    than the one before it, or higher than a recorded one after it, is named.
    """
    sequence: list[tuple[date, int, NewReading | None]] = sorted(
        [(on, value, None) for on, value in meter.recorded.items()] + [(r.read_on, r.value, r) for r in new],
        key=lambda item: item[0])
    problems: list[tuple[NewReading, str]] = []
    for (before_on, before, before_new), (after_on, after, after_new) in pairwise(sequence):
        if after >= before:
            continue
        if after_new is not None:
            where = f"line {before_new.line}" if before_new is not None else "already recorded"
            problems.append((after_new, f"{after} is lower than meter {meter.serial}'s previous reading {before} "
                                        f"on {before_on} ({where}); a meter's readings never go down (a "
                                        "replaced meter is a new meter with its own serial)"))
        elif before_new is not None:
            problems.append((before_new, f"{before} is higher than meter {meter.serial}'s later reading {after} "
                                         f"already recorded on {after_on}; a meter's readings never go down"))
    return problems


# --- the preset's rules for meters (``[meters]``, a section of the installed ordinance) ---------------------

@dataclass(frozen=True)
class MeterPolicy:
    """What the installed preset says of meters. ``units``: the register units a meter may have (empty:
    any); ``inspection_years``: a meter is inspected, rebuilt or replaced this many years after its
    installation (none: no such rule); ``estimate_*``: how a meter that failed to register is estimated."""

    units: tuple[str, ...] = ()
    units_citation: str = ""
    inspection_years: int | None = None
    inspection_citation: str = ""
    estimate_citation: str = ""
    estimate_lookback_days: int = 365

    @classmethod
    def from_params(cls, params: dict) -> MeterPolicy:
        years = params.get("inspection_years")
        return cls(units=tuple(params.get("units", ())), units_citation=params.get("units_citation", ""),
                   inspection_years=int(years) if years else None,
                   inspection_citation=params.get("inspection_citation", ""),
                   estimate_citation=params.get("estimate_citation", ""),
                   estimate_lookback_days=int(params.get("estimate_lookback_days", 365)))


def meter_policy_from(params: dict) -> MeterPolicy:
    """``[meters]`` as read at install and at run time; a unit other than gal or cf is refused naming it."""
    unknown = set(params.get("units", [])) - set(UNIT_WORDS)
    if unknown:
        raise ValueError(f"units: {', '.join(sorted(unknown))} is not gal or cf")
    return MeterPolicy.from_params(params)


METER_KEYS = {
    "units": Key("the register units a meter may have: gal, cf (any by default)", ListOf(Text(("gal", "cf")))),
    "units_citation": Key("the section", Text()),
    "inspection_years": Key("a meter is inspected, rebuilt or replaced this many years after its installation",
                            Whole(1, 100, unit="years")),
    "inspection_citation": Key("the section", Text()),
    "estimate_citation": Key("the section on estimating a meter that failed to register", Text()),
    "estimate_lookback_days": Key("the days of earlier use an estimate averages (365 by default)",
                                  Whole(1, 3660, unit="days")),
}


UNIT_WORDS = {"gal": "gallons", "cf": "cubic feet"}


def unit_problem(policy: MeterPolicy, unit: str) -> str | None:
    """A meter registering in ``unit`` where the preset allows other units only."""
    if not policy.units or unit in policy.units:
        return None
    allowed = " or ".join(UNIT_WORDS.get(u, u) for u in policy.units)
    return (f"a meter registering in {UNIT_WORDS.get(unit, unit)} is refused: meters here register in {allowed}"
            + (f" ({policy.units_citation})" if policy.units_citation else ""))


def years_after(day: date, years: int) -> date:
    """The same day ``years`` later; Feb 29 becomes Feb 28 in a year without one."""
    try:
        return day.replace(year=day.year + years)
    except ValueError:
        return day.replace(year=day.year + years, day=28)


@dataclass(frozen=True)
class Estimate:
    gallons: int
    basis: str


def estimate_from_history(*, intervals: Sequence[tuple[date, date, int]], since: date, until: date,
                          citation: str) -> Estimate | None:
    """An equitable estimate of the gallons used from ``since`` to ``until`` from earlier consumption:
    ``intervals`` are (from, to, gallons) between actual readings. The account's average per day over them,
    times the days, half-up to the gallon; None when there is no earlier consumption to go by."""
    days = sum((end - start).days for start, end, _ in intervals)
    if days <= 0 or until <= since:
        return None
    gallons = sum(g for _, _, g in intervals)
    period = (until - since).days
    estimated = (Decimal(gallons) * period / days).quantize(Decimal(1), ROUND_HALF_UP)
    first, last = min(s for s, _, _ in intervals), max(e for _, e, _ in intervals)
    basis = (f"Estimated{f' ({citation})' if citation else ''}: {period} days at the account's average of "
             f"{Decimal(gallons) / days:,.1f} gal/day, {gallons:,} gal in {days} days from {first} to {last}")
    return Estimate(gallons=int(estimated), basis=basis[:200])


def use_between(readings: Sequence[tuple[date, int]], start: date, end: date) -> int | None:
    """The register's advance from ``start`` to ``end`` read off a meter's dated ``readings`` (in date order), each
    end placed on the straight line between the readings either side of it (use is taken as even between two
    readings); None when the readings do not reach both ends."""
    def at(day: date) -> Decimal | None:
        for (d0, v0), (d1, v1) in pairwise(readings):
            if d0 <= day <= d1:
                return Decimal(v0) if d1 == d0 else Decimal(v0) + Decimal(v1 - v0) * (day - d0).days / (d1 - d0).days
        return None

    first, last = at(start), at(end)
    if first is None or last is None or end <= start:
        return None
    return int((last - first).quantize(Decimal(1), ROUND_HALF_UP))


# A read is expected no lower than this share of the use the meter's year foretells (a lower one is a misread more
# often than a thrifty month), and no higher than the office's high-use factor times it (the bill hold's).
EXPECTED_LOW_SHARE = Decimal("0.25")
# Continuous flow: the account's floor is its lowest day over this many days before the ones looked at.
FLOOR_DAYS = 30


def rolled_over(last: int, shown: int, *, dials: int) -> int | None:
    """The register a read ``shown`` below the ``last`` stands for when the meter's ``dials`` wheels turned past all
    nines since (recorded on: the register kept as if it had more wheels, so use is always the difference), or None
    when it cannot be a rollover: the read has more digits than the wheels, or the use it implies is more than half
    a turn of the register (a misread, or a dial count to correct on the meter). A read after a turn already
    recorded counts it the same way."""
    turn = 10 ** dials
    if shown >= turn or dials < 1:
        return None
    register = shown + last // turn * turn
    if register < last:
        register += turn
    return register if register - last <= turn // 2 else None


def expected_range(earlier: Sequence[tuple[date, int]], read_on: date, *,
                   factor: Decimal) -> tuple[int, int | None] | None:
    """The register range a read ``read_on`` is expected in, from the meter's ``earlier`` readings (date order): the
    last reading plus the use its year's average day foretells, from ``EXPECTED_LOW_SHARE`` of it to ``factor``
    times it; with no use to go by, from the last reading up, with no top. None with no reading before."""
    if not earlier or earlier[-1][0] >= read_on:
        return None
    last_on, last = earlier[-1]
    year = [(d, v) for d, v in earlier if d >= last_on - timedelta(days=365)]
    first_on, first = year[0]
    if last_on <= first_on or last <= first:
        return last, None
    foretold = Decimal(last - first) / (last_on - first_on).days * (read_on - last_on).days
    low = last + int((foretold * EXPECTED_LOW_SHARE).to_integral_value(ROUND_HALF_UP))
    high = last + int((foretold * Decimal(factor)).to_integral_value(ROUND_HALF_UP))
    return low, max(high, low)


def continuous_flow(gallons: Sequence[int | None], *, days: int, margin: int) -> str:
    """Why the last ``days`` of daily use (``gallons``, the ``FLOOR_DAYS`` before them first) look like water running
    all the time, or "": every one of them read and above the account's floor. The floor comes from the days before:
    a meter that stood still on some of them (a day at zero) has a floor of zero, so a steady small leak (15 gal a
    day) that keeps it from ever standing still is found; a meter that never stood still has its lowest day there
    plus the larger of ``margin`` and that lowest day again (a large leak on a house in use every day)."""
    before, window = gallons[:-days], gallons[-days:]
    known = [g for g in before if g is not None]
    if len(window) < days or any(g is None for g in window) or not known:
        return ""
    base = min(known)
    floor = base + max(margin, base) if base else 0
    if (min(window) < floor) if base else (min(window) <= 0):
        return ""
    if not base:
        return (f"{days} days in a row with water through the meter every day (the lowest {min(window):,} gal), where "
                f"in the {len(before)} days before it stood still on some: a small leak?")
    return (f"{days} days without a day under {floor:,} gal (the account's lowest day in the {len(before)} before: "
            f"{base:,} gal); the lowest {min(window):,} gal: water running all the time?")


def use_over(gallons: int, days: int, *, past_gallons: int, past_days: int, factor: Decimal) -> str:
    """Why a use of ``gallons`` over ``days`` is over ``factor``× the average of the earlier ``past_gallons`` over
    ``past_days`` (the bill hold's rule, and the usage alert's), or "" when it is not."""
    days = max(days, 1)
    if not past_days or not past_gallons or gallons * past_days <= factor * past_gallons * days:
        return ""
    return (f"{gallons:,} gal in {days} days ({gallons / days:,.0f} gal/day) is over "
            f"{Decimal(factor).normalize():f}× the average of {past_gallons / past_days:,.0f} gal/day")
