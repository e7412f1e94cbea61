"""Backflow fines computed from dates and pipe sizes. Pure: no database.

The ``per_day_pipe`` scheme (``[backflow.fine]``: its daily maximum, its grace days and its citation), as
Lansing § 141-11 B words it: a user who fails to provide a certification required by § 141-10 "shall be subject to
a fine [that] shall not exceed twenty-five dollars ($25.) for each day beyond the 180th day following the
date of the original notice to the user ... multiplied by the number of inches of diameter of the largest
pipe supplying public water to such user's premises."

* Day N is the original notice's date + N days; the days counted are day 181 through the date the fine is
  computed as of. Notice 2026-01-01: day 180 is 2026-06-30, and on 2026-07-15 the user is 15 days beyond
  it (Jul 1–15).
* The amount is days × the daily rate × the inches, rounded once, half-up, to the cent. The daily rate is
  at most $25.00 ("shall not exceed"); $25.00 unless a lower one is given.
* The fine is tracked here, not imposed: whoever posts it decides, and ``as_of`` is the last day the
  certification was still missing.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from core.dates import fmt_day
from core.money import ZERO, cents, fmt_dollars


@dataclass(frozen=True)
class FineComputation:
    """A fine and how it was worked out: ``days_beyond`` × ``per_day`` × ``inches`` = ``amount``."""

    days_beyond: int
    per_day: Decimal
    inches: Decimal
    amount: Decimal
    citation: str
    words: str


def _decimal(value, *, name: str) -> Decimal:
    if isinstance(value, float) or isinstance(value, bool) or not isinstance(value, Decimal | int | str):
        raise TypeError(f"{name} must be a Decimal (or an int or a string), not {type(value).__name__}")
    return Decimal(value)


def _inches(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return f"{text} inch" if value == 1 else f"{text} inches"


def pipe_fine(*, maximum: Decimal, grace_days: int, citation: str, notice_on: date, as_of: date,
              largest_pipe_inches: Decimal, per_day: Decimal | None = None) -> FineComputation:
    """The fine on ``as_of`` for a certification still missing after the original notice of ``notice_on``, for
    premises whose largest supply pipe is ``largest_pipe_inches`` in diameter: each day beyond the
    ``grace_days``-th after the notice, at ``per_day`` (at most, and by default, ``maximum``) a day and an
    inch (the preset's ``[backflow.fine]``: ``per_day``, ``after_days``, ``citation``)."""
    inches = _decimal(largest_pipe_inches, name="largest_pipe_inches")
    rate = _decimal(maximum if per_day is None else per_day, name="per_day")
    if inches <= 0:
        raise ValueError(f"the largest pipe's diameter must be more than 0 inches, not {inches} "
                         f"({citation})")
    if not ZERO <= rate <= maximum:
        raise ValueError(f"the fine is at most {fmt_dollars(maximum)} a day, not "
                         f"{fmt_dollars(rate)} ({citation})")
    if as_of < notice_on:
        raise ValueError(f"the fine is computed on or after the original notice of {fmt_day(notice_on)}, "
                         f"not on {fmt_day(as_of)} ({citation})")
    last_free_day = notice_on + timedelta(days=grace_days)
    days = max(0, (as_of - last_free_day).days)
    amount = cents(days * rate * inches)
    if days == 0:
        words = (f"no fine: {fmt_day(as_of)} is not beyond the {_ordinal(grace_days)} day after the notice of "
                 f"{fmt_day(notice_on)} (day {grace_days} is {fmt_day(last_free_day)}); the fine runs from "
                 f"{fmt_day(last_free_day + timedelta(days=1))} ({citation})")
    else:
        first = last_free_day + timedelta(days=1)
        span = fmt_day(first) if days == 1 else f"{fmt_day(first)} – {fmt_day(as_of)}"
        words = (f"{days} day{'s' if days != 1 else ''} beyond the {_ordinal(grace_days)} day after the notice of "
                 f"{fmt_day(notice_on)} ({span}) × {fmt_dollars(rate)} a day × {_inches(inches)} (the largest "
                 f"supply pipe) = {fmt_dollars(amount)} ({citation})")
    return FineComputation(days_beyond=days, per_day=cents(rate), inches=inches, amount=amount,
                           citation=citation, words=words)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"

