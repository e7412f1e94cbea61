"""Backflow fines and fees carried to the bill: a fine accrued by the day under the preset's rule (quoted, then
charged at most once per day), and the test fee demanded of an owner who did not test."""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.db import transaction

from accounts.models import Account
from billing.services.charges import charge_add
from core.clock import refuse_future
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import ZERO, cents, fmt_dollars

from ..fines import pipe_fine
from ..models import ComplianceNotice, NoticeCharge
from ..policy import backflow_policy

# --- Fines and fees to the bill -----------------------------------------------------------------------------

@dataclass(frozen=True)
class FineLine:
    notice: ComplianceNotice
    first_day: date | None
    last_day: date | None
    days: int
    per_day: Decimal
    inches: Decimal | None
    amount: Decimal
    citation: str
    computation: str

    def as_dict(self) -> dict:
        return {"notice": self.notice.pk, "days": self.days, "per_day": f"{self.per_day:.2f}",
                "inches": f"{self.inches.normalize():f}" if self.inches is not None else None,
                "amount": f"{self.amount:.2f}", "citation": self.citation}


def _charged_through(notice: ComplianceNotice) -> date | None:
    last = notice.charges.exclude(last_day__isnull=True).order_by("-last_day").first()
    return last.last_day if last else None


def fine_lines(*, account: Account, as_of: date, uncharged_only: bool = False) -> list[FineLine]:
    """The fine accrued on ``as_of`` for each of the account's open notices that carry one. With
    ``uncharged_only``, only the days not yet charged."""
    policy = backflow_policy()
    fine = policy.fine
    if fine is None:
        return []
    out = []
    for notice in account.backflow_notices.filter(kind__in=fine.on_kinds, served_on__lte=as_of).order_by("served_on"):
        end = min(as_of, notice.cured_on - timedelta(days=1)) if notice.cured_on else as_of
        if end < notice.served_on:
            continue
        rule = policy.notices.get(notice.kind)
        if rule is not None and rule.days > 0 and notice.deadline is None:
            continue  # the time to comply is not known yet (a mailed notice's receipt is not recorded)
        if fine.scheme == "per_day_pipe":
            computed = pipe_fine(maximum=fine.per_day, grace_days=fine.after_days, citation=fine.citation,
                                 notice_on=notice.served_on, as_of=end, largest_pipe_inches=notice.largest_pipe_inches)
            first = notice.served_on + timedelta(days=fine.after_days + 1)
            days, per_day, inches = computed.days_beyond, computed.per_day, computed.inches
        else:
            if notice.per_day is None:
                continue
            first = notice.served_on + timedelta(days=1)
            days, per_day, inches = max((end - notice.served_on).days, 0), notice.per_day, None
        # A fine never accrues inside the notice's time to comply (Washingtonville § 169-33: 120 days to install;
        # § 169-37: "for each day the violation continues after notice"): its first day is after the deadline.
        grace_end = notice.deadline or notice.served_on
        if first <= grace_end:
            first = grace_end + timedelta(days=1)
            days = max((end - grace_end).days, 0)
        if uncharged_only:
            through = _charged_through(notice)
            if through is not None and through >= first:
                first = through + timedelta(days=1)
                days = max((end - through).days, 0)
        if days <= 0:
            continue
        amount = cents(per_day * days * (inches if inches is not None else 1))
        computation = (f"{days} days × {fmt_dollars(per_day)}" + (f" × {inches.normalize():f} in" if inches else "")
                       + f" = {fmt_dollars(amount)} ({fmt_day(first)}–{fmt_day(first + timedelta(days=days - 1))})")
        out.append(FineLine(notice=notice, first_day=first, last_day=first + timedelta(days=days - 1), days=days,
                            per_day=per_day, inches=inches, amount=amount, citation=fine.citation,
                            computation=computation))
    return out


def fine_quote(*, account: Account, as_of: date) -> dict:
    """``backflow fine --json``: the fine accrued on the date for the account's open notices."""
    lines = fine_lines(account=account, as_of=as_of)
    return {"account_no": account.account_no, "as_of": as_of.isoformat(),
            "amount": f"{sum((line.amount for line in lines), ZERO):.2f}", "lines": [line.as_dict() for line in lines]}


@transaction.atomic(durable=True)
def fine_post(*, account: Account, as_of: date, actor, amount: Decimal | None = None) -> list[NoticeCharge]:
    """Charge the days of fine not yet charged as pending charges for the next bill, each with its computation
    and citation; posting again the same day charges nothing more.

    Where the section sets only a maximum ("shall not exceed", Lansing § 141-11 B), the computed fine is that
    maximum, proposed: without ``amount`` the clerk accepts it, and an ``amount`` the clerk enters is charged
    instead, refused above the maximum (or when the days of more than one notice are waiting: an entered fine is
    for one notice at a time). Elsewhere the daily fine was imposed on the notice and no amount is taken."""
    refuse_future(as_of, doing="charged")
    policy = backflow_policy()
    fine = policy.fine
    lines = fine_lines(account=account, as_of=as_of, uncharged_only=True)
    if fine is not None and lines:
        maximum = sum((line.amount for line in lines), ZERO)
        if fine.amount_entered and amount is not None:
            if amount <= ZERO or amount != cents(amount):
                raise ApplicationError(f"{amount} is not an amount of dollars and cents above $0.00", field="amount")
            if amount > maximum:
                raise ApplicationError(f"{fmt_dollars(amount)} is more than the maximum of {fmt_dollars(maximum)} "
                                       f"{fine.citation} allows ({lines[0].computation})", field="amount")
            if len(lines) > 1:
                raise ApplicationError("the days of more than one notice are waiting; an entered fine is charged for "
                                       "one notice at a time", field="amount")
        elif amount is not None:
            raise ApplicationError(f"the daily fine was imposed on the notice ({fine.citation}); no amount is entered "
                                   "here", field="amount")
    posted = []
    for line in lines:
        charged = amount if amount is not None else line.amount
        computation = line.computation if charged == line.amount else (
            f"{fmt_dollars(charged)} as entered, at most {line.computation}")
        charge = charge_add(account=account, code=fine.fee_code, as_of=as_of, actor=actor, amount=charged,
                            kind="fine", note=f"backflow notice {line.notice.pk}: {computation}")
        charge.description = f"{charge.description}: {computation}"[:200]
        # Days × the daily rate; a figure the clerk entered below the maximum is its own line (1 × the amount).
        charge.quantity, charge.rate = ((Decimal(line.days), line.per_day * (line.inches or 1))
                                        if charged == line.amount else (Decimal(1), charged))
        charge.save(update_fields=["description", "quantity", "rate"])
        posted.append(NoticeCharge.objects.create(notice=line.notice, charge=charge, first_day=line.first_day,
                                                  last_day=line.last_day, computation=computation))
    return posted


def _next_bill_month(day: date, month: int) -> date:
    candidate = date(day.year, month, 1)
    return candidate if candidate >= day else date(day.year + 1, month, 1)


@transaction.atomic
def demand_fees_post(*, as_of: date, actor=None) -> list[NoticeCharge]:
    """Old Westbury: a test fee unpaid 30 days after its demand goes on the account's next bill dated in
    November (the "November water assessment"), once."""
    policy = backflow_policy()
    demand = policy.demand
    if demand is None:
        return []
    posted = []
    for notice in ComplianceNotice.objects.filter(kind="demand", cured_on__isnull=True,
                                                  served_on__lte=as_of - timedelta(days=demand.days + 1),
                                                  charges__isnull=True).select_related("account"):
        unpaid_from = notice.served_on + timedelta(days=demand.days + 1)
        november = _next_bill_month(unpaid_from, demand.bill_month)
        computation = (f"test fee demanded {fmt_day(notice.served_on)}, unpaid 30 days after: added to the "
                       f"November water assessment ({demand.citation})")
        charge = charge_add(account=notice.account, code=demand.fee_code, as_of=unpaid_from, actor=actor,
                            earliest_bill_on=november, note=f"backflow notice {notice.pk}: {computation}")
        posted.append(NoticeCharge.objects.create(notice=notice, charge=charge, computation=computation))
    return posted
