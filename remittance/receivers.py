"""Remittance listens to billing: a payment posted may be an online one, whose receipt a worker emails; a bill
issued to an autopay account has its notice before the debit emailed."""

from core.csvimport import chunked

from .models import AutopayDebit, AutopayEnrolment, OnlinePayment
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
