"""A report made in the background: a big village's aging or relevy as CSV or PDF takes a while, so the page asks a
worker for it (``reports.files``) and lists it, following it until it is ready to download."""

from django.conf import settings
from django.db import models


class ReportFile(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        MAKING = "making", "Being made"
        DONE = "done", "Ready"
        FAILED = "failed", "Failed"

    name = models.CharField(max_length=20, help_text="The report (reports.catalog.REPORTS).")
    title = models.CharField(max_length=200)
    params = models.JSONField(default=dict, help_text="Its dates (ISO) and filters, as the form gave them.")
    format = models.CharField(max_length=4, choices=(("csv", "CSV"), ("pdf", "PDF")))
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    file = models.FileField(upload_to="reports/%Y/%m/", blank=True)
    rows = models.PositiveIntegerField(default=0, help_text="Rows of its main table.")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "report file"
        # The office's reports (and the files made of them) are the clerk's, the supervisor's and the treasurer's
        # (accounts.roles): not every role that reads a bill.
        permissions = [("run_reportfile", "Can run the office's reports and download their files")]

    def __str__(self) -> str:
        return f"{self.title} ({self.get_format_display()}, {self.get_status_display().lower()})"
