"""Thin Celery wrappers: they take ids and call services."""

from celery import shared_task


@shared_task
def report_file_make(report_file_id: int) -> str:
    """Make a report file asked for on the Reports page; returns its status."""
    from .files import report_file_make as make

    return make(report_file_id=report_file_id).status
