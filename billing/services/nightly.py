"""Billing's steps of the nightly job: bill what is due, assess penalties, render bill PDFs.

Each is a plain service that can run again for the same date without changing the books, and returns its
counts. The job that runs them in order and records them is ``waterbilling.nightly``; billing does not
know what runs before or after them.
"""

import logging
from datetime import date

from django.conf import settings

from core.errors import ApplicationError
from core.money import fmt_amount

from ..ledger.standing import refresh_standings, standings_sample_check
from ..models import BillingRun
from ..ordinance import sample_rates_refusal
from ..runs.candidates import billing_candidates
from ..runs.lifecycle import billing_run_start, billing_run_wait, billing_runs_sweep
from .bill_pdfs import bill_pdfs_render_pending
from .penalties import penalties_assess_due

logger = logging.getLogger(__name__)


def nightly_bill(*, as_of: date) -> dict:
    """Move on runs left running, then bill the accounts due on ``as_of`` and wait for the run (its chunks
    may go to other workers) up to ``NIGHTLY_RUN_WAIT_SECONDS``; count what it issued.

    Nobody is there at night to accept sample rates: billing then waits for a clerk (or the adopted rates)
    and says why, and the job goes on. A run still going when the wait is over is left to the workers
    (and said so); penalties fall only on bills already past due, so they need not wait for it. A run
    that failed fails the step with its error.
    """
    counts = {"bills": 0, "billing_exceptions": 0}
    # A run left running by a worker (or, run eagerly, a process) that died is handed on or failed first.
    counts["runs_swept"] = [run.pk for run in billing_runs_sweep()]
    if not billing_candidates(run_on=as_of):
        return counts
    if refusal := sample_rates_refusal(on=as_of, accept_sample_rates=False):
        logger.warning("nightly %s: billing skipped: %s", as_of, refusal)
        counts["billing_skipped"] = refusal
        return counts
    started = billing_run_start(run_on=as_of)
    run = billing_run_wait(run_id=started.pk, seconds=settings.NIGHTLY_RUN_WAIT_SECONDS)
    if run.status == BillingRun.Status.FAILED:
        raise ApplicationError(f"billing run {run.pk} for {as_of} failed: {run.error}; retry it on its admin page "
                               "once the cause is fixed", field="billing_run")
    counts.update(bills=run.bills_created, billing_exceptions=run.exceptions_count, billing_run=run.pk)
    if run.status == BillingRun.Status.RUNNING:
        counts["billing_unfinished"] = (
            f"billing run {run.pk} was still running after {settings.NIGHTLY_RUN_WAIT_SECONDS:g} s "
            f"({run.chunks_done} of {run.chunks_total} chunks done); the workers go on with it")
        logger.warning("nightly %s: %s", as_of, counts["billing_unfinished"])
    return counts


def nightly_penalties(*, as_of: date) -> dict:
    """Every penalty and interest charge due on or before ``as_of`` not yet posted, looking only at the
    accounts the last night's assessment leaves something to do on (``penalties_assess_due``)."""
    penalties = penalties_assess_due(as_of=as_of, since_last_night=True)
    return {"penalties": penalties.posted, "penalty_total": fmt_amount(penalties.total)}


# How many kept standings the night checks against a full replay of their ledgers.
STANDINGS_SAMPLE = 200


def nightly_standings(*, as_of: date) -> dict:
    """Work out again what the night's bills and late charges leave open on each account they touched
    (``billing.ledger.standing``), so the next day's aging, delinquency and relevy lists need not; then check
    a sample of the kept standings against a full replay, dropping and reporting any that differ (logged as an
    error: a shortcut gave a figure the ledger does not)."""
    counts = {"standings_refreshed": refresh_standings()}
    counts.update(standings_sample_check(sample=STANDINGS_SAMPLE))
    if counts["standings_differing"]:
        logger.error("kept standings differ from a full replay for accounts %s; dropped, to be replayed",
                     counts["standings_differing_accounts"])
    return counts


def nightly_bill_pdfs(*, as_of: date) -> dict:
    """Ask for the PDFs of the bills that have none stored yet."""
    return {"pdfs_queued": bill_pdfs_render_pending()}


NIGHTLY_TASK_NAME = "Nightly billing and penalties"
NIGHTLY_TASK = "waterbilling.tasks.nightly"
# Where the schedule pointed before the nightly job moved to the composition root.
NIGHTLY_TASK_BEFORE = "billing.tasks.nightly"


def nightly_schedule_install() -> bool:
    """Schedule the nightly job at 01:30 in the utility's time zone, once. A schedule a supervisor has
    since edited in the admin (Periodic tasks) is left as it is, except that one still naming the task's
    former name is pointed at the job. Returns True when it was created."""
    from django_celery_beat.models import CrontabSchedule, PeriodicTask

    for before in PeriodicTask.objects.filter(task=NIGHTLY_TASK_BEFORE):
        before.task = NIGHTLY_TASK
        before.save()  # saved one by one: beat hears of a change through the model's signals
    if PeriodicTask.objects.filter(name=NIGHTLY_TASK_NAME).exists():
        return False
    crontab, _ = CrontabSchedule.objects.get_or_create(minute="30", hour="1", day_of_week="*", day_of_month="*",
                                                       month_of_year="*", timezone=settings.TIME_ZONE)
    PeriodicTask.objects.create(name=NIGHTLY_TASK_NAME, task=NIGHTLY_TASK, crontab=crontab,
                                description="The nightly job in order: bills what is due today, assesses "
                                            "penalties, renders bill PDFs (manage.py nightly).")
    return True
