"""Thin Celery wrappers: they take ids and call the conversion's services."""

from celery import shared_task


@shared_task(acks_late=True)
def conversion_job_run(job_id: int) -> None:
    from .jobs import conversion_job_run as run

    run(job_id)
