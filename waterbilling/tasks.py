"""Project-wide Celery tasks that belong to no app: a probe, and the nightly job (which runs every app's
steps, so it lives in the composition root)."""

from datetime import date

from celery import shared_task


@shared_task
def ping() -> str:
    """Answer "pong": proves a worker takes tasks from the broker and can report back."""
    return "pong"


class NightlyStopped(Exception):
    """The nightly job stopped at a failed step (recorded on its ``NightlyRun``; beat tries again tomorrow,
    or run ``manage.py nightly --date`` once the cause is fixed)."""


@shared_task
def nightly(run_on: str | None = None) -> dict:
    """Celery beat's nightly job (``manage.py nightly`` runs the same). Raises when a step failed, so the
    task shows as failed; the report is on the run either way."""
    from django.utils import timezone

    from .nightly import nightly_run

    report = nightly_run(as_of=date.fromisoformat(run_on) if run_on else timezone.localdate())
    if report["status"] != "done":
        raise NightlyStopped(f"nightly {report['date']} stopped at step {report.get('failed_step')!r}: "
                             f"{report.get('error')}")
    return report
