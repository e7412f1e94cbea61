"""A conversion posted from the admin as a job a worker does: the page never waits on a village's long post.

``conversion_job_create`` keeps the uploaded files and the job waits for a second supervisor: a conversion moves
every account's balance at once, so the supervisor who asks for it never posts it alone (``core.approval``).
``conversion_job_decide`` records the decision; the caller hands an approved job to the workers
(``tasks.conversion_job_run``; in-process when Celery runs eagerly, as in the embedded setup). A refused job's
files are deleted with nothing posted.
``conversion_job_run`` checks and posts through ``posting.conversion_post``, recording each step and, at the
end, the batch or every refusal. The files are deleted once the job is done: the batch keeps what it posted
(its rows, its digest, its control totals).
"""

from django.core.files.base import ContentFile
from django.utils import timezone

from core.approval import approval_decide, approval_problems
from core.errors import ApplicationError
from core.workflow import transition

from .models import ConversionJob
from .opening import mapping_parse
from .posting import conversion_post

ERRORS_KEPT = 500
FILES = ("opening", "history", "payments", "devices", "contacts", "notes", "plans", "cases", "relevied", "control",
         "mapping")


def conversion_job_create(*, cutover, opening, history=None, payments=None, devices=None, contacts=None,
                          notes=None, plans=None, cases=None, relevied=None, control=None, mapping=None,
                          actor=None) -> ConversionJob:
    """The job, with the uploads kept for the worker, waiting for a second supervisor."""
    job = ConversionJob(cutover=cutover, created_by=actor)
    for name, upload in zip(FILES, (opening, history, payments, devices, contacts, notes, plans, cases,
                                    relevied, control, mapping), strict=True):
        if upload is not None:
            upload.seek(0)
            getattr(job, name).save(upload.name, ContentFile(upload.read()), save=False)
    job.save()
    return job


def conversion_job_decide(job: ConversionJob, *, approve: bool, note: str, actor) -> ConversionJob:
    """A supervisor who did not ask for the post approves it (the caller hands it to the workers) or refuses it
    with a note (its files deleted, nothing posted); every reason it cannot be decided, at once."""
    problems = approval_problems(job, approve=approve, note=note, actor=actor)
    if problems:
        raise ApplicationError(errors=problems)
    approval_decide(job, approve=approve, note=note, actor=actor,
                    changes={} if approve else {"finished_at": timezone.now()})
    if not approve:
        _files_delete(job)
    return job


def _step(job: ConversionJob, status: str) -> None:
    transition(job, to=status, note="the worker")


def conversion_job_run(job_id: int) -> None:
    job = ConversionJob.objects.filter(pk=job_id, status=ConversionJob.Status.APPROVED).first()
    if job is None:
        return  # done already (a redelivered message), or not approved
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
                                 contacts=files["contacts"], notes=files["notes"], plans=files["plans"],
                                 cases=files["cases"], relevied=files["relevied"], control=files["control"],
                                 progress=lambda: _step(job, ConversionJob.Status.POSTING))
    except ApplicationError as exc:
        _finish(job, status=ConversionJob.Status.REFUSED, errors=[e.as_dict() for e in exc.errors[:ERRORS_KEPT]],
                error_count=exc.error_count)
    except Exception as exc:  # noqa: BLE001 - recorded for the clerk, and raised again for the worker's log
        _finish(job, status=ConversionJob.Status.FAILED,
                errors=[{"field": "", "message": f"{type(exc).__name__}: {exc}"}])
        raise
    else:
        _finish(job, status=ConversionJob.Status.ALREADY if posted.already else ConversionJob.Status.POSTED,
                errors=[], batch=posted.batch)


def _read(field):
    if not field:
        return None
    with field.open("rb") as f:
        data = f.read()
    return data


def _finish(job: ConversionJob, *, status: str, errors: list, error_count: int = 0, batch=None) -> None:
    _files_delete(job)
    transition(job, to=status, note="the worker", changes={
        "errors": errors, "error_count": error_count or len(errors), "batch": batch, "finished_at": timezone.now()})


def _files_delete(job: ConversionJob) -> None:
    """The uploads, once the job is done: the batch keeps what it posted."""
    for name in FILES:
        stored = getattr(job, name)
        if stored:
            stored.delete(save=False)
    ConversionJob.objects.filter(pk=job.pk).update(**{name: "" for name in FILES})
