"""Payment plans (deferred payment agreements): what an account owes, paid by a down payment and installments on
set dates instead of all at once.

Design overview:

* **A plan** covers an amount the account owes when it is made; its installments (number 0 is the down payment)
  are fixed then, and a database key allows one active plan per account.
* **Its standing is computed, never stored**: the payments posted to the account since the plan began, against
  what was due by each installment's date; an installment unpaid once the office's grace days have passed is
  missed. A missed installment defaults the plan (``arrears.services.plans_review``, nightly); paying it all
  completes it.
* **A plan in good standing holds termination**: the shut-off guard lists it as a refusal
  (``termination.holds``), naming the plan.
"""

from django.conf import settings
from django.db import models

from billing.models import money_field
from core.dates import fmt_day
from core.money import fmt_dollars
from core.workflow import Workflow


class PaymentPlan(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        COMPLETED = "completed", "Completed: paid in full"
        DEFAULTED = "defaulted", "Defaulted: an installment was missed"
        CANCELLED = "cancelled", "Cancelled"

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="payment_plans")
    started_on = models.DateField(help_text="Payments from this day on pay the plan.")
    total = money_field(help_text="What the plan covers: the amount owed when it was made.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    # Every change of status goes through core.workflow.transition (the nightly review, a clerk's cancel).
    # A completed plan is active again when the payment that completed it is taken back (a returned debit, R03).
    workflow = Workflow("status", {Status.ACTIVE: {Status.COMPLETED, Status.DEFAULTED, Status.CANCELLED},
                                   Status.COMPLETED: {Status.ACTIVE}})
    status_note = models.CharField(max_length=200, blank=True)
    status_changed_on = models.DateField(null=True, blank=True)
    note = models.TextField(blank=True, help_text="Internal: what was agreed and why.")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")

    class Meta:
        ordering = ["-started_on", "-id"]
        constraints = [models.UniqueConstraint(fields=["account"], condition=models.Q(status="active"),
                                               name="one_active_plan_per_account"),
                       models.CheckConstraint(condition=models.Q(total__gt=0), name="plan_total_positive")]

    def __str__(self) -> str:
        return f"Payment plan {self.number} of account {self.account} ({self.get_status_display()})"

    @property
    def number(self) -> str:
        return f"P-{self.pk}"


class PlanInstallment(models.Model):
    plan = models.ForeignKey(PaymentPlan, on_delete=models.CASCADE, related_name="installments")
    number = models.PositiveSmallIntegerField(help_text="0: the down payment.")
    due_on = models.DateField()
    amount = money_field()

    class Meta:
        ordering = ["plan", "number"]
        constraints = [models.UniqueConstraint(fields=["plan", "number"], name="one_installment_per_number"),
                       models.CheckConstraint(condition=models.Q(amount__gt=0), name="installment_positive")]

    def __str__(self) -> str:
        return f"{'Down payment' if self.number == 0 else f'Installment {self.number}'} of " \
               f"{fmt_dollars(self.amount.amount)} due {fmt_day(self.due_on)}"
