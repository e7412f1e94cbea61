"""Held bills: a clerk releases a high-usage reading as read."""


from django.db import transaction
from django.utils import timezone

from core.errors import ApplicationError

from ..models import BillingException


@transaction.atomic(durable=True)
def billing_exception_release(*, exception: BillingException, actor) -> BillingException:
    """A clerk accepts a held high-usage reading as read: the next run bills it."""
    exception = BillingException.objects.select_for_update().get(pk=exception.pk)
    if exception.kind != BillingException.Kind.HIGH_USAGE:
        raise ApplicationError("only a bill held for high usage can be released as read; for a missing or "
                               "lower reading, enter a corrected or estimated reading", field="kind")
    if exception.status != BillingException.Status.OPEN:
        raise ApplicationError(f"this exception is already {exception.get_status_display().lower()}",
                               field="status")
    exception.status = BillingException.Status.RELEASED
    exception.resolved_by = actor
    exception.resolved_at = timezone.now()
    exception.save(update_fields=["status", "resolved_by", "resolved_at"])
    return exception
