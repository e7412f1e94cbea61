"""A conversion posted from the admin as a job a worker does: the page never waits on a village's long post.

``conversion_job_create`` keeps the uploaded files; the caller hands the job to the workers
(``tasks.conversion_job_run``; in-process when Celery runs eagerly, as in the embedded setup).
``conversion_job_run`` checks and posts through ``posting.conversion_post``, recording each step and, at the
end, the batch or every refusal. The files are deleted once the job is done: the batch keeps what it posted
(its rows, its digest, its control totals).
"""

from django.core.files.base import ContentFile
from django.utils import timezone

from core.errors import ApplicationError

from .models import ConversionJob
from .opening import mapping_parse
from .posting import conversion_post

ERRORS_KEPT = 500
FILES = ("opening", "history", "payments", "devices", "contacts", "mapping")


def conversion_job_create(*, cutover, opening, history=None, payments=None, devices=None, contacts=None,
                          mapping=None, actor=None) -> ConversionJob:
    """The job, with the uploads kept for the worker."""
    job = ConversionJob(cutover=cutover, created_by=actor)
    for name, upload in zip(FILES, (opening, history, payments, devices, contacts, mapping), strict=True):
        if upload is not None:
            upload.seek(0)
            getattr(job, name).save(upload.name, ContentFile(upload.read()), save=False)
    job.save()
    return job


def _step(job: ConversionJob, status: str) -> None:
    job.status = status
    ConversionJob.objects.filter(pk=job.pk).update(status=status)


def conversion_job_run(job_id: int) -> None:
    job = ConversionJob.objects.filter(pk=job_id, status=ConversionJob.Status.QUEUED).first()
    if job is None:
        return  # done already (a redelivered message)
    _step(job, ConversionJob.Status.CHECKING)
    try:
        mapping = None
        if job.mapping:
            with job.mapping.open("rb") as f:
                mapping = mapping_parse(f.read(), name=job.mapping.name)
        files = {name: _read(getattr(job, name)) for name in FILES[:-1]}
        posted = conversion_post(files["opening"], cutover=job.cutover, today=timezone.localdate(),
                                 actor=job.created_by, mapping=mapping, bills=files["history"],
                                 payments=files["payments"], devices=files["devices"],
                                 contacts=files["contacts"],
                                 progress=lambda: _step(job, ConversionJob.Status.POSTING))
    except ApplicationError as exc:
        job.status, job.error_count = ConversionJob.Status.REFUSED, exc.error_count
        job.errors = [e.as_dict() for e in exc.errors[:ERRORS_KEPT]]
    except Exception as exc:  # noqa: BLE001 - recorded for the clerk, and raised again for the worker's log
        _finish(job, status=ConversionJob.Status.FAILED,
                errors=[{"field": "", "message": f"{type(exc).__name__}: {exc}"}])
        raise
    else:
        job.batch = posted.batch
        job.status = ConversionJob.Status.ALREADY if posted.already else ConversionJob.Status.POSTED
    _finish(job, status=job.status, errors=job.errors)


def _read(field):
    if not field:
        return None
    with field.open("rb") as f:
        data = f.read()
    return data


def _finish(job: ConversionJob, *, status: str, errors: list) -> None:
    for name in FILES:
        stored = getattr(job, name)
        if stored:
            stored.delete(save=False)
    job.status, job.errors, job.finished_at = status, errors, timezone.now()
    job.save()
