"""Importing a stored CSV file in a worker: ``import_job_start`` on the upload page, ``import_job_run`` in
the task. The importer is the one the page and the command use, so the import is all or nothing and its
errors are the same; the job only carries the file to a worker and the outcome back to the page."""

import io
import logging
import time
from datetime import date

from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from core.errors import ApplicationError

from .models import ImportJob
from .signals import import_job_stored

logger = logging.getLogger(__name__)

REPORT_EVERY_SECONDS = 0.5


def import_job_start(*, importer: str, noun: str, file, as_of: date, actor, options: dict | None = None) -> ImportJob:
    """Store ``file`` (an upload) as a job; once stored, ``import_job_stored`` hands it to a worker
    (in-process when Celery runs eagerly, where it has finished by the time this returns to a page that is
    not in a transaction)."""
    file.seek(0)
    content = file.read()
    job = ImportJob.objects.create(importer=importer, noun=noun, file_name=getattr(file, "name", "upload"),
                                   file_size=len(content), content=content, as_of=as_of, created_by=actor,
                                   options=options or {})
    transaction.on_commit(lambda: import_job_stored.send(sender=ImportJob, job_id=job.pk))
    return job


class _JobProgress:
    """Counts the rows the importer has checked into the job, at most every half second."""

    def __init__(self, job_id: int):
        self.job_id = job_id
        self.reported_at = 0.0

    def __call__(self, *, stage: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if done and done != total and now - self.reported_at < REPORT_EVERY_SECONDS:
            return
        self.reported_at = now
        ImportJob.objects.filter(pk=self.job_id).update(stage=stage[:60], rows_done=done, rows_total=total or 0)


def import_job_run(*, job_id: int) -> None:
    """Import the job's file, once: a job already finished (a task delivered twice) is left as it is. A job
    found running is run again — its worker died, and an import saves everything or nothing."""
    with transaction.atomic():
        job = ImportJob.objects.select_for_update().get(pk=job_id)
        if not job.pending:
            return
        job.status, job.started_at = ImportJob.Status.RUNNING, timezone.now()
        job.save(update_fields=["status", "started_at"])
    source = io.BytesIO(bytes(job.content))
    source.name = job.file_name
    outcome: dict = {}
    try:
        result = import_string(job.importer)(file=source, as_of=job.as_of, actor=job.created_by,
                                             progress=_JobProgress(job.pk), **job.options)
    except ApplicationError as exc:
        outcome = {"status": ImportJob.Status.REJECTED, "errors": [e.as_dict() for e in exc.errors],
                   "errors_total": exc.error_count, "error_lines": exc.error_lines}
    except Exception as exc:  # recorded for the page and logged; the import rolled back
        logger.exception("import job %s (%s) failed", job.pk, job.file_name)
        outcome = {"status": ImportJob.Status.FAILED, "failure": f"{type(exc).__name__}: {exc}"[:2000]}
    else:
        outcome = {"status": ImportJob.Status.DONE, "created": result.created, "updated": result.updated,
                   "skipped": result.skipped}
    ImportJob.objects.filter(pk=job.pk).update(**outcome, content=b"", finished_at=timezone.now())
