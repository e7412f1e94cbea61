"""Thin Celery wrappers for remittance."""

from celery import shared_task


@shared_task(acks_late=True)
def receipts_send_task(payment_ids: list[int]) -> int:
    from .services import receipts_send

    return receipts_send(payment_ids)


@shared_task(acks_late=True)
def autopay_notices_task(bill_ids: list[int]) -> int:
    from .autopay import autopay_notices_send

    return autopay_notices_send(bill_ids)
