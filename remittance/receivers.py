"""Remittance listens to billing: a payment posted may be an online one, whose receipt a worker emails."""

from .models import OnlinePayment
from .tasks import receipts_send_task


def on_payment_posted(sender, *, payment_ids, **kwargs) -> None:
    if OnlinePayment.objects.filter(payment_id__in=list(payment_ids)).exists():
        receipts_send_task.delay(list(payment_ids))
