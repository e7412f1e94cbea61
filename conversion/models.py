"""A conversion is a batch: one checked opening-balances file posted on one cutover, kept with every row it said,
so its reconciliation compares the file with the books at any later time and its rollback knows what it wrote
(billing's rows carry the source ``convert:<batch id>:``)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from billing.models import money_field
from core.approval import Approval
from core.workflow import Workflow


class ConversionBatch(models.Model):
    class Status(models.TextChoices):
        POSTED = "posted", "Posted"
        ROLLED_BACK = "rolled_back", "Rolled back"

    file_name = models.CharField(max_length=200)
    digest = models.CharField(max_length=64, help_text="SHA-256 of the file as read (after its mapping).")
    cutover = models.DateField(help_text="The first day on our books: the file is what was owed at the close of the "
                                         "day before.")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.POSTED)
    # Rolled back whole, once, through core.workflow.transition.
    workflow = Workflow("status", {Status.POSTED: {Status.ROLLED_BACK}})
    control = models.JSONField(help_text="The file's control totals (accounts, open bills, amounts by kind).")
    bills = models.PositiveIntegerField(default=0, help_text="Open bills written.")
    entries = models.PositiveIntegerField(default=0, help_text="Ledger rows written.")
    made = models.JSONField(default=dict, blank=True,
                            help_text="The ids of the backflow devices, tests and testers it registered; the "
                                      "e-mail addresses and paperless choices it set and those they replaced.")
    posted_at = models.DateTimeField(auto_now_add=True)
    posted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="+")
    rolled_back_at = models.DateTimeField(null=True, blank=True)
    rolled_back_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                       related_name="+")

    class Meta:
        verbose_name = "conversion batch"
        verbose_name_plural = "conversion batches"
        ordering = ["-posted_at", "-id"]
        constraints = [
            # Posting the same file again posts nothing: one live batch per file.
            models.UniqueConstraint(fields=["digest"], condition=Q(status="posted"), name="one_posted_batch_per_file"),
            models.CheckConstraint(condition=Q(status="posted") | Q(rolled_back_at__isnull=False),
                                   name="rolled_back_batch_dated"),
        ]

    def __str__(self) -> str:
        return f"Conversion {self.pk} ({self.file_name}, cutover {self.cutover})"

    @property
    def source_prefix(self) -> str:
        """The ledger source every row of this batch starts with."""
        return f"convert:{self.pk}:"


class OpeningItem(models.Model):
    """One row of a posted file, as it was read: what the reconciliation compares with the books."""

    batch = models.ForeignKey(ConversionBatch, on_delete=models.CASCADE, related_name="items")
    line = models.PositiveIntegerField()
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="+")
    bill_no = models.CharField(max_length=40, blank=True)
    bill_date = models.DateField(null=True, blank=True)
    due_date = models.DateField(null=True, blank=True)
    kind = models.CharField(max_length=10)
    amount = money_field()
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["batch", "line"]
        constraints = [models.UniqueConstraint(fields=["batch", "line"], name="one_item_per_line")]

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind} {self.amount} on {self.bill_no or self.account_id}"


class ConversionJob(models.Model):
    """A post asked for in the admin, done by a worker: the uploaded files kept until it is done, and how far it
    has got, so a village's long conversion never waits on a web request."""

    class Status(models.TextChoices):
        WAITING = "pending", "Waiting for a second supervisor"
        APPROVED = "approved", "Approved: waiting for a worker"
        CHECKING = "checking", "Checking the files"
        POSTING = "posting", "Posting"
        POSTED = "posted", "Posted"
        ALREADY = "already", "Posted already"
        REFUSED = "refused", "Refused: nothing was saved"
        FAILED = "failed", "Failed: nothing was saved"
        WITHDRAWN = "withdrawn", "Withdrawn by who asked"

    RUNNING = (Status.APPROVED, Status.CHECKING, Status.POSTING)
    # Posted from the admin it takes two people: a supervisor asks, another decides (core.approval); a refusal
    # keeps its note. Then the worker's steps (conversion.jobs).
    workflow = Workflow("status", {
        Status.WAITING: {Status.APPROVED, Status.REFUSED, Status.WITHDRAWN},
        Status.APPROVED: {Status.CHECKING},
        Status.CHECKING: {Status.POSTING, Status.ALREADY, Status.REFUSED, Status.FAILED},
        Status.POSTING: {Status.POSTED, Status.REFUSED, Status.FAILED}})
    approval = Approval(permission="conversion.approve_conversionjob", noun="conversion post",
                        requester="created_by")

    cutover = models.DateField()
    opening = models.FileField(upload_to="conversion/", help_text="The opening balances as uploaded.")
    history = models.FileField(upload_to="conversion/", blank=True)
    payments = models.FileField(upload_to="conversion/", blank=True)
    devices = models.FileField(upload_to="conversion/", blank=True)
    contacts = models.FileField(upload_to="conversion/", blank=True)
    notes = models.FileField(upload_to="conversion/", blank=True)
    plans = models.FileField(upload_to="conversion/", blank=True)
    cases = models.FileField(upload_to="conversion/", blank=True)
    relevied = models.FileField(upload_to="conversion/", blank=True)
    mapping = models.FileField(upload_to="conversion/", blank=True)
    control = models.FileField(upload_to="conversion/", blank=True,
                               help_text="The old system's control report: the files must tie to it to the cent.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.WAITING)
    errors = models.JSONField(default=list, blank=True, help_text="The refusals: {line, field, message}.")
    error_count = models.PositiveIntegerField(default=0)
    batch = models.ForeignKey(ConversionBatch, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        permissions = [("approve_conversionjob", "Can approve or refuse a conversion post asked for by another")]
        constraints = [models.CheckConstraint(condition=Q(status="pending") | Q(decided_at__isnull=False),
                                              name="conversion_job_decision_dated")]

    def __str__(self) -> str:
        return f"Conversion job {self.pk} ({self.get_status_display()})"

    @property
    def running(self) -> bool:
        return self.status in self.RUNNING
