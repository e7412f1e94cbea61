"""The back office: what the clerk's office does with money beside billing.

* **Refunds.** A credit balance (an overpayment, a credit left after a final bill) paid back by a check that
  accounts payable writes. A clerk asks; a supervisor other than the clerk approves or refuses. The approval
  posts the refund on the ledger (kind ``refund``, through billing's one writer) and puts it on the check
  register that accounts payable draws the checks from.
* **Transfers.** A closed account's final balance, or its credit, moved to the same owner's other account: a
  pair of memos on no bill (``billing.services.adjustments.balance_transfer``), recorded here as one fact.
* **Invoices.** A fee from the fee schedule billed on its own, with its own due date, instead of waiting for the
  next water bill: a charge on no bill (kind ``fee``, source ``invoice:<id>``) and a one-page invoice.
* **The day's close.** The drawer counted at the end of a day against what the cash report says it should hold,
  with the over or short and a note; one close per day.

The day's books reach the village's general ledger through ``office.journal``.
"""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from billing.models import money_field
from core.approval import Approval
from core.workflow import Workflow


class Refund(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a supervisor"
        APPROVED = "approved", "Approved: on the check register"
        REFUSED = "refused", "Refused"
        WITHDRAWN = "withdrawn", "Withdrawn by who asked"

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="refunds")
    amount = money_field(help_text="At most the account's credit.")
    payee_name = models.CharField(max_length=200, help_text="Who the check is made out to.")
    payee_address = models.TextField(help_text="Where the check is mailed.")
    reason = models.TextField(help_text="Internal: why the credit is paid back (kept for the audit).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    # A supervisor approves or refuses it, through core.workflow.transition.
    workflow = Workflow("status", {Status.PENDING: {Status.APPROVED, Status.REFUSED, Status.WITHDRAWN}})
    # A clerk asks; a supervisor who is not that clerk decides (core.approval).
    approval = Approval(permission="office.approve_refund", noun="refund")
    requested_on = models.DateField()
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)
    refunded_on = models.DateField(null=True, blank=True, help_text="The day the refund was posted (its approval).")
    came_back = models.TextField(blank=True, help_text="A payment the refunded credit may have come from, taken back "
                                                       "after the refund was paid (a bounced check, a returned "
                                                       "debit): the village may be out the money. A supervisor "
                                                       "follows it up.")
    came_back_on = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["-requested_at", "-id"]
        permissions = [("approve_refund", "Can approve or refuse a refund of a credit")]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="refund_amount_positive"),
            models.CheckConstraint(condition=~Q(reason=""), name="refund_has_reason"),
            models.CheckConstraint(condition=Q(status="pending") | Q(decided_at__isnull=False),
                                   name="refund_decision_dated"),
            models.CheckConstraint(condition=~Q(status="approved") | Q(refunded_on__isnull=False),
                                   name="approved_refund_posted"),
            models.UniqueConstraint(fields=["account"], condition=Q(status="pending"),
                                    name="one_waiting_refund_per_account",
                                    violation_error_message="This account already has a refund waiting for a "
                                                            "supervisor."),
        ]

    def __str__(self) -> str:
        return f"Refund {self.number}"

    @property
    def number(self) -> str:
        return f"R-{self.pk:06d}" if self.pk else "R-new"


class Transfer(models.Model):
    """A balance moved between two accounts of one owner: ``amount`` positive moved what the first owed,
    negative its credit."""

    from_account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="transfers_out")
    to_account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="transfers_in")
    amount = models.DecimalField(max_digits=12, decimal_places=2,
                                 help_text="Positive: an unpaid balance moved; negative: a credit moved.")
    transferred_on = models.DateField()
    reason = models.TextField()
    from_memo = models.OneToOneField("billing.Adjustment", on_delete=models.PROTECT, related_name="+")
    to_memo = models.OneToOneField("billing.Adjustment", on_delete=models.PROTECT, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-transferred_on", "-id"]
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="transfer_moves_something"),
            models.CheckConstraint(condition=~Q(from_account=F("to_account")), name="transfer_between_two_accounts"),
            models.CheckConstraint(condition=~Q(reason=""), name="transfer_has_reason"),
        ]

    def __str__(self) -> str:
        return f"Transfer of {self.amount} from {self.from_account} to {self.to_account}"

    @property
    def what(self) -> str:
        return "Unpaid balance" if self.amount > 0 else "Credit"


class Invoice(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="invoices")
    code = models.CharField(max_length=40, help_text="The fee's code in the preset's fee schedule.")
    description = models.CharField(max_length=200)
    citation = models.CharField(max_length=80)
    amount = money_field()
    quantity = models.DecimalField(max_digits=14, decimal_places=2, default=1)
    rate = models.DecimalField(max_digits=12, decimal_places=6)
    invoiced_on = models.DateField()
    due_on = models.DateField()
    recipient_name = models.CharField(max_length=200)
    recipient_address = models.TextField()
    note = models.TextField(blank=True, help_text="Internal note; never shown to the customer.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-invoiced_on", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="invoice_amount_positive"),
            models.CheckConstraint(condition=Q(due_on__gte=F("invoiced_on")), name="invoice_due_not_before_issue"),
        ]

    def __str__(self) -> str:
        return f"Invoice {self.number}"

    @property
    def number(self) -> str:
        return f"INV-{self.pk:06d}" if self.pk else "INV-new"


class DayClose(models.Model):
    """The counter's drawer counted at the end of a day against the cash report."""

    day = models.DateField(unique=True)
    expected_cash = models.DecimalField(max_digits=12, decimal_places=2)
    expected_checks = models.DecimalField(max_digits=12, decimal_places=2)
    counted_cash = models.DecimalField(max_digits=12, decimal_places=2)
    counted_checks = models.DecimalField(max_digits=12, decimal_places=2)
    note = models.TextField(blank=True, help_text="What explains an over or short.")
    closed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    closed_at = models.DateTimeField(auto_now_add=True)
    reopened_at = models.DateTimeField(null=True, blank=True, help_text="Reopened by a supervisor's approval (a "
                                                                       "``DayReopen``): entries dated the day reach "
                                                                       "its books again until it is closed again.")

    class Meta:
        ordering = ["-day"]
        verbose_name = "day's close"
        verbose_name_plural = "day's closes"
        constraints = [
            models.CheckConstraint(condition=Q(counted_cash__gte=0, counted_checks__gte=0),
                                   name="day_close_counts_not_negative"),
            models.CheckConstraint(condition=(Q(counted_cash=F("expected_cash"), counted_checks=F("expected_checks"))
                                              | ~Q(note="")),
                                   name="day_close_over_short_explained"),
        ]

    def __str__(self) -> str:
        return f"Close of {self.day}"

    @property
    def is_closed(self) -> bool:
        return self.reopened_at is None

    @property
    def over_short(self) -> Decimal:
        """Positive: the drawer holds more than the report says (over); negative: short."""
        return (self.counted_cash + self.counted_checks) - (self.expected_cash + self.expected_checks)


class DayReopen(models.Model):
    """A closed day opened again: a clerk asks with the reason (a deposit found in a drawer, a payment keyed to the
    wrong day); a supervisor who is not the clerk approves or refuses (``core.approval``). Approved, entries dated
    the day reach its books again until the day is closed again."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a supervisor"
        APPROVED = "approved", "Approved: the day is open again"
        REFUSED = "refused", "Refused"
        WITHDRAWN = "withdrawn", "Withdrawn by who asked"

    close = models.ForeignKey(DayClose, on_delete=models.PROTECT, related_name="reopenings")
    reason = models.TextField(help_text="Why the closed day must change (kept for the audit).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    workflow = Workflow("status", {Status.PENDING: {Status.APPROVED, Status.REFUSED, Status.WITHDRAWN}})
    approval = Approval(permission="office.approve_dayreopen", noun="reopening of a closed day")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)

    class Meta:
        ordering = ["-requested_at", "-id"]
        verbose_name = "reopening of a closed day"
        verbose_name_plural = "reopenings of closed days"
        permissions = [("approve_dayreopen", "Can approve or refuse reopening a closed day")]
        constraints = [
            models.CheckConstraint(condition=~Q(reason=""), name="day_reopen_has_reason"),
            models.UniqueConstraint(fields=["close"], condition=Q(status="pending"), name="one_waiting_reopen_per_day",
                                    violation_error_message="This day already has a reopening waiting for a "
                                                            "supervisor."),
        ]

    def __str__(self) -> str:
        return f"Reopening of {self.close.day}"
