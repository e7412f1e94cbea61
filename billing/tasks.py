"""Thin Celery wrappers: they take ids and dates and call services."""

from celery import shared_task
from django.conf import settings


# acks_late with reject_on_worker_lost: a pool process killed mid-chunk (out of memory) puts the message
# back for another worker instead of acknowledging it. The chunk's lease in the database is what decides
# whether that worker may take it; a redelivered message while the lease holds does nothing.
@shared_task(acks_late=True, reject_on_worker_lost=True)
def billing_run_chunk(chunk_id: int) -> None:
    from .runs.lifecycle import billing_run_chunk_execute

    billing_run_chunk_execute(chunk_id=chunk_id)


def chunk_send(chunk_id: int) -> None:
    """Hand one chunk to the workers. The hard time limit (the lease) stops a chunk stuck on something,
    which then counts as a worker that stopped."""
    billing_run_chunk.apply_async((chunk_id,), time_limit=settings.BILLING_CHUNK_LEASE_SECONDS)


@shared_task
def billing_run_dispatch(run_id: int) -> None:
    """Hand every chunk of a run that is due to the workers (all of a new run's)."""
    from .runs.lifecycle import billing_run_hand_out

    billing_run_hand_out(run_id=run_id, send=chunk_send)


@shared_task
def billing_runs_sweep() -> list[int]:
    """Every minute (beat): hand on the chunks of running runs whose worker is gone; returns the run ids."""
    from .runs.lifecycle import billing_runs_sweep as sweep

    return [run.pk for run in sweep(send=chunk_send)]


# A pool process killed mid-batch puts the batch back at once for another (the PDFs stored are skipped), instead of
# leaving it to the broker's visibility timeout or the nightly job's sweep of bills without a PDF.
@shared_task(acks_late=True, reject_on_worker_lost=True)
def bill_pdfs_render(bill_ids: list[int]) -> int:
    """Render and store the PDFs of a chunk of issued bills (skips those already stored)."""
    from .services.bill_pdfs import bill_pdfs_store

    return bill_pdfs_store(bill_ids=bill_ids)


@shared_task(acks_late=True)
def mail_file_make(mail_file_id: int) -> int:
    """Make a run's print file for the mail house; returns the bills printed."""
    from .services.mail_files import mail_file_make as make

    return make(mail_file_id=mail_file_id).bills
