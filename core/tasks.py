"""Thin Celery wrappers: ids in, one service call."""

from celery import shared_task


@shared_task(acks_late=True)
def import_job_run(job_id: int) -> None:
    from .services import import_job_run as run

    run(job_id=job_id)
