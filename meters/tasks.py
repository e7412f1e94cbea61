from celery import shared_task
from django.utils.dateparse import parse_datetime

from .models import Reading
from .usage import usage_alerts_raise


@shared_task
def usage_alerts_task(meter_ids: list[int], since: str) -> int:
    """The usage alerts of the readings recorded for these meters since ``since``."""
    ids = Reading.objects.filter(meter_id__in=meter_ids, entered_at__gte=parse_datetime(since)).values_list(
        "id", flat=True)
    return len(usage_alerts_raise(list(ids)))
