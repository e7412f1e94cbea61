"""Remittance listens to billing: a payment posted may be an online one, whose receipt a worker emails; a bill
issued to an autopay account has its notice before the debit emailed."""

from .models import AutopayDebit, AutopayEnrolment, OnlinePayment
from .tasks import autopay_notices_task, receipts_send_task


def on_payment_posted(sender, *, payment_ids, **kwargs) -> None:
    if OnlinePayment.objects.filter(payment_id__in=list(payment_ids)).exists() \
            or AutopayDebit.objects.filter(payment_id__in=list(payment_ids)).exists():
        receipts_send_task.delay(list(payment_ids))


def on_bills_issued(sender, *, bill_ids, **kwargs) -> None:
    if AutopayEnrolment.objects.filter(status=AutopayEnrolment.Status.ACTIVE).exists():
        autopay_notices_task.delay(list(bill_ids))
