"""App-agnostic records: import jobs, status changes under a workflow, and the nightly job's log.

An import job is a CSV file imported by a worker instead of inside the web request that uploaded it. An
upload page stores a large file here with the importer to run (a dotted path chosen by the code, never
by the request) and the import date; a Celery task runs the importer on it, counting the rows checked into
``rows_done`` as it goes, and records the result or the errors — the first ``IMPORT_ERRORS_LISTED``, with
the count of all. The import itself is the same all-or-nothing importer the page and the command use. The
file's bytes are kept in the database, not on a disk the web server and the workers would have to share,
and are dropped once the job has finished.
"""

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.db import models
from django.utils import timezone


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
    options = models.JSONField(default=dict, blank=True,
                               help_text="What else the importer is given: a meter system's read-file mapping.")
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


class StatusChange(models.Model):
    """One change of a status under a workflow (``core.workflow.transition``): of which row, from what to
    what, by whom (none: the system), when and why. Written in the transaction that changed the status."""

    content_type = models.ForeignKey("contenttypes.ContentType", on_delete=models.CASCADE, related_name="+")
    object_id = models.PositiveBigIntegerField()
    changed = GenericForeignKey("content_type", "object_id")
    field = models.CharField(max_length=40, default="status")
    from_status = models.CharField(max_length=30)
    to_status = models.CharField(max_length=30)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    note = models.TextField(blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["content_type", "object_id", "at"], name="status_change_of_object")]

    def __str__(self) -> str:
        return f"{self.from_status} → {self.to_status}"


class NightlyRun(models.Model):
    """The nightly job for one date (``core.pipeline``): one row a date, however often it is run. Its
    steps say how far it got; running the date again goes on from the first step not done."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Stopped at a failed step"

    run_on = models.DateField(unique=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-run_on"]

    def __str__(self) -> str:
        return f"Nightly job for {self.run_on}"


class NightlyStep(models.Model):
    """One step of a night's job: what it counted, or the error it stopped on."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for the steps before it"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(NightlyRun, on_delete=models.CASCADE, related_name="steps")
    name = models.CharField(max_length=60)
    position = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    progress = models.CharField(max_length=120, blank=True, db_default="",
                                help_text="How far a long step has got, while it runs: \"400 of 1,352 bill PDFs\".")
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="one_nightly_step_per_name")]

    def __str__(self) -> str:
        return f"{self.run}: {self.name} ({self.status})"
