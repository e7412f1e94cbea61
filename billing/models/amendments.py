"""A late amendment's bills, billed again once a supervisor approves."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from core.approval import Approval
from core.workflow import Workflow

from .bills import Bill


class AmendmentRebill(models.Model):
    """The bills an amendment installed late (``setup_utility … --effective DATE --rebill``) would have rated
    otherwise: each is voided and billed again under the rules in force on its bill date once a supervisor, not
    the clerk who installed it, approves. Its late charges need no approval: the assessment corrects them on
    their own days, each line stating the rate that makes it."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a supervisor"
        APPROVED = "approved", "Approved: billed again"
        REFUSED = "refused", "Refused"
        WITHDRAWN = "withdrawn", "Withdrawn by who asked"

    installed = models.ForeignKey("ordinance.InstalledPreset", on_delete=models.PROTECT, related_name="+",
                                  help_text="The install of the amended preset.")
    effective_on = models.DateField(help_text="The day the amendment takes effect.")
    bills = models.ManyToManyField(Bill, related_name="+", help_text="The bills to void and bill again.")
    reason = models.TextField(help_text="What the amendment changes for these bills.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    workflow = Workflow("status", {Status.PENDING: {Status.APPROVED, Status.REFUSED, Status.WITHDRAWN}})
    approval = Approval(permission="billing.change_amendmentrebill", noun="rebilling after an amendment")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                     related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)
    outcome = models.TextField(blank=True, help_text="What became of each bill once approved.")
    history = HistoricalRecords()

    class Meta:
        ordering = ["-requested_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(status="pending") | Q(decided_at__isnull=False),
                                   name="amendment_rebill_decision_dated"),
        ]

    def __str__(self) -> str:
        return f"Rebilling from {self.effective_on} (preset v{self.installed.version})"
