"""The nightly job: move on runs left running, bill what is due today, then assess penalties. Every step is
idempotent."""

import logging
from datetime import date

from core.money import fmt_amount

from ..ordinance import sample_rates_refusal
from ..runs.candidates import billing_candidates
from ..runs.lifecycle import billing_run_start, billing_runs_sweep
from .bill_pdfs import bill_pdfs_render_pending
from .penalties import penalties_assess_due

logger = logging.getLogger(__name__)


def nightly_run(*, as_of: date) -> dict:
    report = {"date": as_of.isoformat(), "bills": 0, "billing_exceptions": 0, "penalties": 0,
              "penalty_total": "0.00"}
    # A run left running by a worker (or, run eagerly, a process) that died is handed on or failed first.
    report["runs_swept"] = [run.pk for run in billing_runs_sweep()]
    if billing_candidates(run_on=as_of):
        # Nobody is there at night to accept sample rates: billing waits for a clerk (or the adopted
        # rates), and the rest of the job still runs.
        if refusal := sample_rates_refusal(on=as_of, accept_sample_rates=False):
            logger.warning("nightly %s: billing skipped: %s", as_of, refusal)
            report["billing_skipped"] = refusal
        else:
            # Penalties fall only on bills already past due, so they need not wait for today's run to
            # finish when its chunks go to other workers.
            run = billing_run_start(run_on=as_of)
            run.refresh_from_db()
            report.update(bills=run.bills_created, billing_exceptions=run.exceptions_count, billing_run=run.pk)
    penalties = penalties_assess_due(as_of=as_of)
    report.update(penalties=penalties.posted, penalty_total=fmt_amount(penalties.total))
    report["pdfs_queued"] = bill_pdfs_render_pending()
    return report


NIGHTLY_TASK_NAME = "Nightly billing and penalties"


def nightly_schedule_install() -> bool:
    """Schedule the nightly job at 01:30 in the utility's time zone, once. A schedule a supervisor has
    since edited in the admin (Periodic tasks) is left as it is. Returns True when it was created."""
    from django.conf import settings
    from django_celery_beat.models import CrontabSchedule, PeriodicTask

    if PeriodicTask.objects.filter(name=NIGHTLY_TASK_NAME).exists():
        return False
    crontab, _ = CrontabSchedule.objects.get_or_create(minute="30", hour="1", day_of_week="*", day_of_month="*",
                                                       month_of_year="*", timezone=settings.TIME_ZONE)
    PeriodicTask.objects.create(name=NIGHTLY_TASK_NAME, task="billing.tasks.nightly", crontab=crontab,
                                description="Bills what is due today, then assesses penalties (manage.py nightly).")
    return True
