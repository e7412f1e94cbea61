"""The one place billing enqueues its Celery tasks: receivers of ``billing.signals`` (connected in
``BillingConfig.ready``). Services announce; these hand the work to workers (in-process when Celery runs
eagerly)."""

from django.conf import settings

from core.background import long_work_start
from core.pipeline import step_progress

from . import tasks
from .services.bill_pdfs import RENDER_CHUNK


def bill_pdfs_enqueue(bill_ids, *, chunk: int = RENDER_CHUNK) -> None:
    ids = sorted(bill_ids)
    for start in range(0, len(ids), chunk):
        tasks.bill_pdfs_render.delay(ids[start:start + chunk])
        step_progress(min(start + chunk, len(ids)), len(ids), what="bill PDFs" if settings.CELERY_TASK_ALWAYS_EAGER
                      else "bill PDFs handed to the workers")


def on_bills_issued(sender, *, bill_ids, **kwargs) -> None:
    """With a broker, workers render the new bills' PDFs right away; run eagerly (no broker) the run would
    stop to render, so the nightly job renders what is pending instead (``BILL_PDFS_ON_ISSUE`` overrides
    either way), and a PDF asked for before then is rendered on demand and stored."""
    if settings.BILL_PDFS_ON_ISSUE:
        bill_pdfs_enqueue(bill_ids)


def on_bill_pdfs_wanted(sender, *, bill_ids, chunk: int = RENDER_CHUNK, **kwargs) -> None:
    bill_pdfs_enqueue(bill_ids, chunk=chunk)


def on_billing_run_started(sender, *, run_id: int, **kwargs) -> None:
    tasks.billing_run_dispatch.delay(run_id)


def on_billing_chunk_due(sender, *, chunk_id: int, **kwargs) -> None:
    tasks.chunk_send(chunk_id)


def on_mail_file_requested(sender, *, mail_file_id: int, **kwargs) -> None:
    long_work_start(tasks.mail_file_make, mail_file_id)
