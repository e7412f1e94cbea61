"""Billing runs as records: their chunks of work, the accounts held for a clerk, the mail-house files and the
messages printed on the run's bills."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from core.dates import fmt_day
from core.workflow import Workflow

from .ordinance import money_field


class BillingRun(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    run_on = models.DateField(help_text="The date the run bills as of.")
    dry_run = models.BooleanField(default=False)
    accept_sample_rates = models.BooleanField(
        default=False, help_text="The clerk chose to bill on rates marked sample (recorded for the audit).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    accounts_due = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    bills_created = models.PositiveIntegerField(default=0)
    already_billed = models.PositiveIntegerField(default=0)
    exceptions_count = models.PositiveIntegerField(default=0)
    total_billed = money_field(default=0)
    error = models.TextField(blank=True)
    process = models.CharField(
        max_length=200, blank=True,
        help_text="Billed in one process (Celery eager): which, so a run whose process was killed is found.")

    # Every change of status goes through core.workflow.transition, which records it. A failed run is
    # retried (billing_run_retry): its unfinished chunks are handed out again.
    workflow = Workflow("status", {Status.PENDING: {Status.RUNNING}, Status.RUNNING: {Status.DONE, Status.FAILED},
                                   Status.FAILED: {Status.RUNNING}})

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Billing run {self.pk} for {fmt_day(self.run_on)}{' (preview)' if self.dry_run else ''}"

    @property
    def progress_percent(self) -> int:
        return 100 if not self.chunks_total else round(100 * self.chunks_done / self.chunks_total)


class MailFile(models.Model):
    """The print file for the mail house of one run: its bills for paper, sorted by ZIP code, in one PDF made by a
    worker (``billing.services.mail_files``)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Being made"
        DONE = "done", "Ready"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(BillingRun, on_delete=models.CASCADE, related_name="mail_files")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    file = models.FileField(upload_to="mail/%Y/%m/", blank=True)
    bills = models.PositiveIntegerField(default=0, help_text="Bills printed.")
    to_print = models.PositiveIntegerField(default=0, help_text="Bills to print, known once the making starts.")
    laid_out = models.PositiveIntegerField(default=0, help_text="Bills laid out so far, while it is being made.")
    emailed = models.PositiveIntegerField(default=0, help_text="Bills left out: paperless, e-mailed instead.")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Print file of run {self.run_id} ({self.get_status_display().lower()})"


class BillMessage(models.Model):
    """A message printed on bills: every bill dated from ``first_bill_date`` to ``last_bill_date``, of one book or
    of all. A book's own message is printed instead of one for all books."""

    text = models.CharField(max_length=150, help_text="One or two sentences: it is printed above the tear-off "
                                                      "line of the bill, and said in the bill's e-mail.")
    book = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Blank: every book.")
    first_bill_date = models.DateField()
    last_bill_date = models.DateField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-first_bill_date", "book", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(last_bill_date__gte=models.F("first_bill_date")),
                                   name="bill_message_dates_in_order"),
            models.CheckConstraint(condition=Q(book__isnull=True) | Q(book__gte=1, book__lte=10),
                                   name="bill_message_book_valid"),
            models.CheckConstraint(condition=~Q(text=""), name="bill_message_has_text"),
        ]

    def __str__(self) -> str:
        return self.text


class BillingRunChunk(models.Model):
    """Accounts a worker bills in one transaction. Who holds it and how often it was tried are recorded
    here, so a chunk whose worker died is found and handed on (``billing.runs.lifecycle``)."""

    run = models.ForeignKey(BillingRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    account_ids = models.JSONField()
    done = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Times a worker has taken the chunk.")
    dispatched_at = models.DateTimeField(null=True, blank=True,
                                         help_text="When the chunk was last handed to the workers.")
    leased_until = models.DateTimeField(
        null=True, blank=True,
        help_text="While in the future, the worker that took the chunk is billing it and no other takes it.")
    last_error = models.TextField(blank=True)
    worker = models.CharField(max_length=200, blank=True,
                              help_text="Who took it last: a Celery worker's node, or a process on a host.")
    task_id = models.CharField(max_length=255, blank=True, help_text="The Celery task billing it, when a worker.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="one_chunk_per_index")]

    def __str__(self) -> str:
        return f"Run {self.run_id} chunk {self.index}"


class BillingException(models.Model):
    class Kind(models.TextChoices):
        NO_READING = "no_reading", "No reading in the read window"
        LOWER_READING = "lower_reading", "Reading lower than the previous one"
        HIGH_USAGE = "high_usage", "Consumption over 4× the account's average (held for review)"
        RATING = "rating", "Cannot be rated"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        RELEASED = "released", "Released: bill as read"
        RESOLVED = "resolved", "Resolved"

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="billing_exceptions")
    bill_date = models.DateField()
    kind = models.CharField(max_length=20, choices=Kind.choices)
    detail = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    run = models.ForeignKey(BillingRun, null=True, on_delete=models.SET_NULL, related_name="exceptions")
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-bill_date", "account"]
        constraints = [models.UniqueConstraint(fields=["account", "bill_date", "kind"],
                                               name="one_exception_per_account_period_kind")]

    def __str__(self) -> str:
        return f"{self.account} {self.bill_date}: {self.get_kind_display()}"
