"""Corrections to issued bills: credit and debit memos with a reason and the clerk; voiding keeps the bill."""

from datetime import date
from decimal import Decimal

from django.db import transaction
from django.utils import timezone
from djmoney.money import Money

from waterbilling.errors import ApplicationError

from ..models import Adjustment, Bill, LedgerEntry


@transaction.atomic
def adjustment_create(*, bill: Bill, kind: str, amount: Decimal, reason: str, as_of: date, actor) -> Adjustment:
    if kind not in Adjustment.Kind.values:
        raise ApplicationError(f"'{kind}' is not credit or debit", field="kind")
    if amount <= 0:
        raise ApplicationError("must be more than zero; the kind says which way it goes", field="amount")
    if not reason.strip():
        raise ApplicationError("a correction needs a reason", field="reason")
    if as_of > timezone.localdate():
        raise ApplicationError(f"{as_of} is after today", field="adjusted_on")
    if bill.status == Bill.Status.VOID:
        raise ApplicationError(f"bill {bill.number} is void", field="bill")
    adjustment = Adjustment.objects.create(account_id=bill.account_id, bill=bill, kind=kind,
                                           amount=Money(amount, "USD"), adjusted_on=as_of, reason=reason,
                                           created_by=actor)
    sign = -1 if kind == Adjustment.Kind.CREDIT else 1
    LedgerEntry.objects.create(account_id=bill.account_id, bill=bill, kind=kind, posted_on=as_of,
                               amount=Money(sign * amount, "USD"), adjustment=adjustment,
                               description=f"{adjustment.get_kind_display()} on {bill.number}: {reason}"[:200])
    return adjustment


@transaction.atomic
def bill_void(*, bill: Bill, reason: str, as_of: date, actor) -> Bill:
    """Void a bill: the record stays, a reversing entry takes its charges off the account, and the period
    can be billed again by the next run."""
    bill = Bill.objects.select_for_update().get(pk=bill.pk)
    if bill.status == Bill.Status.VOID:
        raise ApplicationError(f"bill {bill.number} is already void", field="status")
    if not reason.strip():
        raise ApplicationError("voiding a bill needs a reason", field="reason")
    Bill.objects.filter(pk=bill.pk).update(status=Bill.Status.VOID, voided_at=timezone.now(), voided_by=actor,
                                           void_reason=reason)
    LedgerEntry.objects.create(account_id=bill.account_id, bill=bill, kind=LedgerEntry.Kind.VOID, posted_on=as_of,
                               amount=Money(-bill.total.amount, "USD"),
                               description=f"Void {bill.number}: {reason}"[:200])
    bill.refresh_from_db()
    return bill
