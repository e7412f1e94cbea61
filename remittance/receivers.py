"""Remittance listens to billing: a payment posted may be an online one, whose receipt a worker emails; a bill
issued to an autopay account has its notice before the debit emailed. And to accounts: an account closed ends its
autopay, so nothing is debited for a service that has ended (office policy: the final bill is paid by the
customer, who is told how)."""

from django.db import transaction

from core.csvimport import chunked
from core.dates import fmt_day

from .autopay import autopay_cancel
from .models import AutopayDebit, AutopayEnrolment, OnlinePayment
from .signals import autopay_ended
from .tasks import autopay_notices_task, receipts_send_task


def on_payment_posted(sender, *, payment_ids, **kwargs) -> None:
    """Online and autopay payments get a receipt by email; a lockbox file of 400,000 checks is asked in chunks."""
    ours = [pk for chunk in chunked(list(payment_ids))
            for model in (OnlinePayment, AutopayDebit)
            for pk in model.objects.filter(payment_id__in=chunk).values_list("payment_id", flat=True)]
    if ours:
        receipts_send_task.delay(sorted(ours))


def on_bills_issued(sender, *, bill_ids, **kwargs) -> None:
    if AutopayEnrolment.objects.filter(status=AutopayEnrolment.Status.ACTIVE).exists():
        autopay_notices_task.delay(list(bill_ids))


def on_account_closed(sender, *, account_id, closed_on, **kwargs) -> None:
    for enrolment in AutopayEnrolment.objects.filter(account_id=account_id, status=AutopayEnrolment.Status.ACTIVE):
        why = f"account closed on {fmt_day(closed_on)}: autopay ended"
        with transaction.atomic():
            autopay_cancel(enrolment=enrolment, why=why)
            facts = {"enrolment_id": enrolment.pk, "why": why}
            transaction.on_commit(lambda facts=facts: autopay_ended.send(sender=AutopayEnrolment, **facts))
