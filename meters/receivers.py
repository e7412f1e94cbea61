"""The one module of meters that enqueues its tasks (connected in ``apps.ready``)."""

from .tasks import usage_alerts_task


def on_readings_recorded(sender, *, meter_ids, since, **kwargs) -> None:
    """Readings recorded: a worker looks for the usage alerts they call for."""
    usage_alerts_task.delay(list(meter_ids), since.isoformat())
