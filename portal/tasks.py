"""Thin Celery wrappers for the portal."""

from celery import shared_task


@shared_task(acks_late=True)
def bills_issued_notify_task(bill_ids: list[int]) -> int:
    from .notify import bills_issued_notify

    return bills_issued_notify(bill_ids)


def bills_issued_notify_receiver(sender, *, bill_ids: list[int], **kwargs) -> None:
    """Paperless customers hear about new bills from a worker, not from the billing run; where the office has
    them wait (``Utility.bill_emails_wait``), the clerk sends them from the run's page instead."""
    from ordinance.selectors import installed_utility

    if getattr(installed_utility(), "bill_emails_wait", False):
        return
    bills_issued_notify_task.delay(list(bill_ids))
