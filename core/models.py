"""A CSV file imported by a worker instead of inside the web request that uploaded it.

An upload page stores a large file here with the importer to run (a dotted path chosen by the code, never
by the request) and the import date; a Celery task runs the importer on it, counting the rows checked into
``rows_done`` as it goes, and records the result or the errors — the first ``IMPORT_ERRORS_LISTED``, with
the count of all. The import itself is the same all-or-nothing importer the page and the command use. The
file's bytes are kept in the database, not on a disk the web server and the workers would have to share,
and are dropped once the job has finished.
"""

from django.conf import settings
from django.db import models


class ImportJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        RUNNING = "running", "Importing"
        DONE = "done", "Imported"
        REJECTED = "rejected", "Rejected: nothing was saved"
        FAILED = "failed", "Failed: nothing was saved"

    importer = models.CharField(max_length=200, help_text="Dotted path of the importer function.")
    noun = models.CharField(max_length=40, help_text="What the file holds, for the result: payments, readings…")
    file_name = models.CharField(max_length=255)
    file_size = models.PositiveBigIntegerField()
    content = models.BinaryField(default=b"", editable=False, help_text="The file, until the job has finished.")
    as_of = models.DateField(help_text="The import date: nothing in the file may be dated after it.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=60, blank=True, help_text="What the worker is doing: checking payments…")
    rows_total = models.PositiveIntegerField(default=0)
    rows_done = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True,
                              help_text="The first errors of a rejected file: line, field and message.")
    errors_total = models.PositiveIntegerField(default=0)
    error_lines = models.PositiveIntegerField(default=0)
    failure = models.TextField(blank=True, help_text="What went wrong when the import itself failed.")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Import of {self.file_name} ({self.get_status_display().lower()})"

    @property
    def pending(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def progress_percent(self) -> int:
        if not self.pending:
            return 100
        return min(100, 100 * self.rows_done // self.rows_total) if self.rows_total else 0
