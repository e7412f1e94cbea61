"""Field work listens to the meters: a reading outside the range expected for it is re-read."""

from core.clock import today
from core.errors import ApplicationError

from .services import field_order_create


def on_usage_alerts_raised(sender, *, alert_ids, **kwargs) -> None:
    """A reading outside its expected range opens a re-read order, unless one is open for the account already."""
    from fieldwork.models import FieldOrder
    from meters.models import UsageAlert

    for alert in UsageAlert.objects.filter(id__in=list(alert_ids), kind=UsageAlert.Kind.OUT_OF_RANGE).select_related(
            "account", "meter"):
        if FieldOrder.objects.filter(account=alert.account, kind=FieldOrder.Kind.REREAD,
                                     status=FieldOrder.Status.OPEN).exists():
            continue
        try:
            field_order_create(account=alert.account, kind=FieldOrder.Kind.REREAD, scheduled_on=today(), actor=None,
                               reason=f"meter {alert.meter.serial} on {alert.read_on}: {alert.detail}"[:200])
        except ApplicationError:
            continue  # the account closed meanwhile, or its meter is gone: nothing to re-read
