"""Reports made in the background (``ReportFile``): asked for from the Reports page when the village is big enough
that a CSV or PDF takes more than a moment (``REPORT_FILES_FROM_ACCOUNTS`` accounts), made by a worker (or, with
none, on a thread: ``core.background``), and listed on the page until ready."""

import logging

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from core.background import long_work_start
from core.errors import ApplicationError

from .filters import view_filtered
from .forms import ReportForm
from .models import ReportFile
from .render import as_csv, as_pdf, report_view

logger = logging.getLogger(__name__)

def report_files_wanted() -> bool:
    """Whether the page's downloads are made in the background: a village of this many accounts or more."""
    return Account.objects.count() >= settings.REPORT_FILES_FROM_ACCOUNTS


def report_file_request(*, name: str, title: str, params: dict, fmt: str, actor, task) -> ReportFile:
    """Ask for the report ``name`` as ``fmt`` (``params``: what its form was given, ``ReportForm.params``);
    ``task`` (the Celery task ``reports.tasks.report_file_make``) makes it on a worker."""
    with transaction.atomic():
        report_file = ReportFile.objects.create(name=name, title=title, params=params, format=fmt, created_by=actor)
        transaction.on_commit(lambda: long_work_start(task, report_file.pk))
    return report_file


def report_file_make(*, report_file_id: int) -> ReportFile:
    """Make the file (once: a redelivered task finds it made)."""
    updated = ReportFile.objects.filter(pk=report_file_id, status=ReportFile.Status.QUEUED).update(
        status=ReportFile.Status.MAKING, started_at=timezone.now())
    report_file = ReportFile.objects.get(pk=report_file_id)
    if not updated:
        return report_file
    try:
        form = ReportForm(report_file.params, name=report_file.name)
        report = form.build() if form.is_valid() else None
        if report is None:
            raise ApplicationError("; ".join(f"{field}: {' '.join(errors)}"
                                             for field, errors in form.errors.items()))
        view = view_filtered(report_view(report), form.chosen())
        data = as_pdf(view) if report_file.format == "pdf" else as_csv(view).encode("utf-8")
        report_file.file.save(f"{view.name}-{view.as_of.isoformat()}-{report_file.pk}.{report_file.format}",
                              ContentFile(data), save=False)
        report_file.rows, report_file.status = len(view.main.rows), ReportFile.Status.DONE
    except Exception as exc:  # kept for the clerk on the page, and in the log with its traceback
        logger.exception("report file %s failed", report_file.pk)
        report_file.status, report_file.error = ReportFile.Status.FAILED, f"{type(exc).__name__}: {exc}"[:2000]
    report_file.finished_at = timezone.now()
    report_file.save(update_fields=["file", "rows", "status", "error", "finished_at"])
    return report_file
