"""Void a bill and bill it again at once, its closing reading corrected first when it was wrong.

A bill wrong by its reading is voided and billed again. Done as one step from the bill's page, the clerk types
the corrected reading, and the corrected bill comes out of the same transaction: billed for the same bill date
by the very plan a run uses (``billing.runs.issue.bill_accounts``), issued today and due by the calendar's rule
from today, numbered after the void one, and with no billing run of its own. The corrected reading is the clerk's
review: a bill it makes high is not held again.
"""

from dataclasses import dataclass
from datetime import date

from django.db import transaction
from django.utils import timezone

from core.errors import ApplicationError
from core.money import fmt_dollars
from meters.models import Reading
from meters.services import reading_change

from ..models import Bill, BillingException
from ..runs.issue import bill_accounts, bills_plan
from ..signals import bills_issued
from .adjustments import bill_void_within


@dataclass(frozen=True)
class Rebilled:
    void: Bill
    bill: Bill | None
    held: BillingException | None

    @property
    def words(self) -> str:
        if self.bill is None:
            return (f"Bill {self.void.number} is void; the bill for {self.void.bill_date:%b %-d, %Y} is held: "
                    f"{self.held.detail if self.held else 'nothing to bill'}.")
        return (f"Bill {self.void.number} is void and bill {self.bill.number} replaces it: "
                f"{fmt_dollars(self.bill.total.amount)} (was {fmt_dollars(self.void.total.amount)}), due "
                f"{self.bill.due_date:%b %-d, %Y}.")


def _reading_correct(*, bill: Bill, value: int, as_of: date, actor) -> str:
    """Correct the void bill's closing reading (no bill in force rests on it now); the words for the void's note."""
    end = bill.end_reading
    if end is None:
        raise ApplicationError(f"bill {bill.number} was made from no reading; void it and correct the charges "
                               "with a memo", field="reading")
    if end.value == value:
        return ""
    was = end.value
    reading_change(reading=end, meter=end.meter, read_on=end.read_on, value=value,
                   read_type=Reading.ReadType.ACTUAL, source=end.source,
                   note=f"corrected from {was:,} on rebilling bill {bill.number}", as_of=as_of, actor=actor)
    return f"; the reading of {end.read_on:%b %-d, %Y} corrected from {was:,} to {value:,}"


def _high_usage_accepted(*, bill: Bill, actor) -> None:
    """The clerk typed the reading: a high-usage hold the new bill would get is released as read at once."""
    plan = bills_plan(account_ids=[bill.account_id], run_on=bill.bill_date)
    for exception in plan.new_exceptions:
        if exception.kind == BillingException.Kind.HIGH_USAGE:
            BillingException.objects.update_or_create(
                account_id=bill.account_id, bill_date=bill.bill_date, kind=exception.kind,
                defaults={"detail": f"{exception.detail} (the reading was corrected on rebilling bill {bill.number})",
                          "status": BillingException.Status.RELEASED, "resolved_by": actor,
                          "resolved_at": timezone.now()})


@transaction.atomic(durable=True)
def bill_rebill(*, bill: Bill, reason: str, as_of: date, actor, description: str = "",
                reading: int | None = None) -> Rebilled:
    """Void ``bill`` and bill its date again for its account now, after correcting its closing reading to
    ``reading`` when given. Refused whole (nothing voided) when the bill cannot be voided or the reading breaks
    a rule; a bill still held (a rating problem) leaves the void and its exception for the clerk."""
    bill = Bill.objects.select_related("end_reading__meter").get(pk=bill.pk)
    if bill.final:
        raise ApplicationError(f"bill {bill.number} is a final bill; void it and issue the final bill again from "
                               "the account", field="bill")
    # The bill first: while it is in force its reading is final.
    void = bill_void_within(bill=bill, reason=reason, as_of=as_of, actor=actor, description=description)
    corrected = _reading_correct(bill=bill, value=reading, as_of=as_of, actor=actor) if reading is not None else ""
    if corrected:
        Bill.objects.filter(pk=bill.pk).update(void_reason=f"{reason.strip()}{corrected}")
        void.refresh_from_db()
        _high_usage_accepted(bill=bill, actor=actor)
    result = bill_accounts(account_ids=[bill.account_id], run_on=bill.bill_date, run=None)
    new = [b.pk for b in result.new_bills]
    if new:
        transaction.on_commit(lambda: bills_issued.send(sender=Bill, bill_ids=new))
        return Rebilled(void=void, bill=Bill.objects.get(pk=new[0]), held=None)
    held = (BillingException.objects.filter(account_id=bill.account_id, bill_date=bill.bill_date,
                                            status=BillingException.Status.OPEN).first())
    if held is None:
        raise ApplicationError(f"account {bill.account.account_no} is not billed for {bill.bill_date:%b %-d, %Y} "
                               "again (its book or its readings no longer call for that bill); nothing was voided",
                               field="bill")
    return Rebilled(void=void, bill=None, held=held)
