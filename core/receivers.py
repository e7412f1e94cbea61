"""The one place this app hands work to Celery."""

from .tasks import import_job_run


def import_job_stored_enqueue(sender, *, job_id: int, **kwargs) -> None:
    """Receiver of ``core.signals.import_job_stored``: a worker imports the file (in-process when eager)."""
    import_job_run.delay(job_id)
