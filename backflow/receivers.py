"""Backflow listens to the meters: reverse flow a meter reported opens a follow-up on the premises."""

from .services.compliance import reverse_flow_follow_up


def on_usage_alerts_raised(sender, *, alert_ids, **kwargs) -> None:
    from meters.models import UsageAlert

    for alert in UsageAlert.objects.filter(id__in=list(alert_ids), kind=UsageAlert.Kind.REVERSE_FLOW):
        reverse_flow_follow_up(alert=alert)
