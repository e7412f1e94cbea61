"""Penalty schemes: when a late charge falls due and how much it is, with no database.

A preset names its scheme (``[penalty]`` in the preset file); ``penalty_scheme_for`` builds it. A scheme
answers ``dates(bill)`` — the days a charge is assessed on a bill, up to a date — and ``amount(...)`` — the
charge on one of those days given the bill's unpaid principal (and, for schemes that compound, its unpaid
total). The assessment service replays the ledger to get those balances as they stood on each day.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from .dates import add_months
from .money import ZERO, percent_of


@dataclass(frozen=True)
class PenaltyDue:
    on: date
    percent: Decimal
    description: str
    citation: str
    on_total: bool = False  # charged on the unpaid total including earlier interest/penalties


class FirstThenMonthly:
    """Mineola § 45.29 E: 5% of unpaid principal on the day after the due date, then 1% on each monthly
    anniversary of that day ("each month or fraction of a month thereafter")."""

    name = "first_then_monthly"

    def __init__(self, params: dict):
        self.first = Decimal(params["first_percent"])
        self.monthly = Decimal(params["monthly_percent"])
        self.citation = params["citation"]
        self.description = params.get("description", "Late payment penalty")
        self.words = params.get("words", "")

    def dates(self, *, bill_date: date, due_date: date, through: date) -> list[PenaltyDue]:
        start = due_date + timedelta(days=1)
        out = []
        if start <= through:
            out.append(PenaltyDue(start, self.first, f"{self.description}: {self.first}% (first month)",
                                  self.citation))
        k = 1
        while (day := add_months(start, k)) <= through:
            out.append(PenaltyDue(day, self.monthly, f"{self.description}: {self.monthly}% (month {k + 1})",
                                  self.citation))
            k += 1
        return out

    def amount(self, due: PenaltyDue, *, unpaid_principal: Decimal, unpaid_total: Decimal) -> Decimal:
        base = unpaid_total if due.on_total else unpaid_principal
        return percent_of(base, due.percent) if base > ZERO else ZERO

    def late_amount(self, principal: Decimal) -> Decimal:
        """What the bill comes to the day after its due date, for the bill's 'if paid late' line."""
        return principal + percent_of(principal, self.first)


class OneTime:
    """A single penalty of a percentage of the unpaid principal ``days_after_due`` days after the due date
    (South Farmingdale § 4.2: 10% once when over 30 days delinquent; Lansing § 141-17: 15% once)."""

    name = "one_time"

    def __init__(self, params: dict):
        self.percent = Decimal(params["percent"])
        self.days_after_due = int(params.get("days_after_due", 1))
        self.citation = params["citation"]
        self.description = params.get("description", "Late payment penalty")
        self.words = params.get("words", "")

    def dates(self, *, bill_date: date, due_date: date, through: date) -> list[PenaltyDue]:
        day = due_date + timedelta(days=self.days_after_due)
        return [PenaltyDue(day, self.percent, f"{self.description}: {self.percent}%", self.citation)] \
            if day <= through else []

    def amount(self, due: PenaltyDue, *, unpaid_principal: Decimal, unpaid_total: Decimal) -> Decimal:
        return percent_of(unpaid_principal, due.percent) if unpaid_principal > ZERO else ZERO

    def late_amount(self, principal: Decimal) -> Decimal:
        return principal + percent_of(principal, self.percent)


class NoPenalty:
    name = "none"

    def __init__(self, params: dict):
        self.citation = params.get("citation", "")
        self.words = params.get("words", "")

    def dates(self, *, bill_date: date, due_date: date, through: date) -> list[PenaltyDue]:
        return []

    def amount(self, due: PenaltyDue, *, unpaid_principal: Decimal, unpaid_total: Decimal) -> Decimal:
        return ZERO

    def late_amount(self, principal: Decimal) -> Decimal:
        return principal


PENALTY_SCHEMES = {cls.name: cls for cls in (FirstThenMonthly, OneTime, NoPenalty)}


def penalty_scheme_for(scheme: str, params: dict):
    try:
        return PENALTY_SCHEMES[scheme](params)
    except KeyError as exc:
        raise ValueError(f"unknown penalty scheme '{scheme}'; known: {', '.join(PENALTY_SCHEMES)}") from exc
