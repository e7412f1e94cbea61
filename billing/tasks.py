"""Thin Celery wrappers: they take ids and dates and call services."""

from datetime import date

from celery import shared_task

from .models import BillingRun


@shared_task(acks_late=True)
def billing_run_chunk(chunk_id: int) -> None:
    from .services.runs import billing_run_chunk_execute

    billing_run_chunk_execute(chunk_id=chunk_id)


@shared_task
def billing_run_dispatch(run_id: int) -> None:
    """Hand every pending chunk of a run to the workers."""
    for chunk_id in BillingRun.objects.get(pk=run_id).chunks.filter(done=False).values_list("id", flat=True):
        billing_run_chunk.delay(chunk_id)


@shared_task
def nightly(run_on: str | None = None) -> dict:
    from django.utils import timezone

    from .services.nightly import nightly_run

    return nightly_run(as_of=date.fromisoformat(run_on) if run_on else timezone.localdate())


@shared_task(acks_late=True)
def bill_pdfs_render(bill_ids: list[int]) -> int:
    """Render and store the PDFs of a chunk of issued bills (skips those already stored)."""
    from .pdf import bill_pdfs_store

    return bill_pdfs_store(bill_ids=bill_ids)
