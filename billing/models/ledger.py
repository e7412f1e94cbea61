"""The append-only ledger, the standings kept from it, payments brought over from the previous system, and
penalty waivers."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from core.approval import Approval
from core.workflow import Workflow

from .bills import Bill
from .ordinance import PaymentOrder, money_field
from .payments import Adjustment, Payment


class LedgerEntry(models.Model):
    """Append-only. Debits (charges, fees, fines, penalties, interest, debit memos) are positive; credits
    negative. Written only by ``billing.ledger.posting``."""

    class Kind(models.TextChoices):
        WATER = "water", "Water charge"
        SEWER = "sewer", "Sewer rent"
        FEE = "fee", "Fee"
        PENALTY = "penalty", "Penalty"
        PAYMENT = "payment", "Payment"
        CREDIT = "credit", "Credit memo"
        DEBIT = "debit", "Debit memo"
        VOID = "void", "Bill voided"
        PENALTY_CORRECTION = "penalty_correction", "Penalty corrected"
        INTEREST = "interest", "Interest"
        FINE = "fine", "Fine"
        INTEREST_CORRECTION = "interest_correction", "Interest corrected"
        DEPOSIT = "deposit", "Deposit held"
        DEPOSIT_REFUND = "deposit_refund", "Deposit refunded"
        PAYMENT_REVERSAL = "payment_reversal", "Payment reversed"
        # Late charges the village's previous system charged before the cutover: facts, never recomputed.
        CONVERTED_PENALTY = "converted_penalty", "Penalty (previous system)"
        CONVERTED_INTEREST = "converted_interest", "Interest (previous system)"
        # A customer's credit paid back by check (approved by a supervisor): it uses the credit as a charge would.
        REFUND = "refund", "Credit refunded"

    # No index of its own: ``ledger_account_date`` leads with the account.
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="ledger", db_index=False)
    bill = models.ForeignKey(Bill, null=True, blank=True, on_delete=models.PROTECT, related_name="ledger")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    posted_on = models.DateField()
    amount = money_field()
    source = models.CharField(max_length=80, help_text="The fact this entry records (bill:12, charge:3, payment:7, "
                                                      "bill:12@2026-05-02 …); one entry per source and kind.")
    citation = models.CharField(max_length=80, blank=True)
    description = models.CharField(max_length=200, blank=True)
    payment = models.OneToOneField(Payment, null=True, blank=True, on_delete=models.PROTECT, related_name="entry")
    adjustment = models.OneToOneField(Adjustment, null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="entry")
    due_on = models.DateField(null=True, blank=True,
                              help_text="When a charge on no bill falls due, if later than the day it is posted "
                                        "(an invoice's due date); empty: due the day it is posted.")
    booked_on = models.DateField(null=True, blank=True,
                                 help_text="The day the entry reached the general ledger when its own day was closed "
                                           "already (a late entry): the day it was entered, or the first open day "
                                           "after; empty: its own day. A closed day's journal never changes.")
    corrects = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="corrections",
                                 help_text="The penalty or interest charge this entry corrects, when a payment or "
                                           "charge dated earlier was recorded after it was assessed.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "ledger entries"
        ordering = ["posted_on", "id"]
        constraints = [
            models.UniqueConstraint(fields=["bill", "posted_on"], condition=Q(kind="penalty"),
                                    name="one_penalty_per_bill_per_date"),
            models.UniqueConstraint(fields=["bill", "posted_on"], condition=Q(kind="interest"),
                                    name="one_interest_per_bill_per_date"),
            models.UniqueConstraint(fields=["source", "kind"], name="one_entry_per_source_and_kind"),
            models.CheckConstraint(condition=~Q(source=""), name="ledger_entry_has_source"),
            models.CheckConstraint(
                condition=(Q(kind__in=["water", "sewer", "fee", "fine", "penalty", "interest", "debit",
                                       "deposit_refund", "payment_reversal", "converted_penalty",
                                       "converted_interest", "refund"],
                             amount__gte=0)
                           | Q(kind__in=["payment", "credit", "void", "deposit"], amount__lte=0)
                           | Q(kind__in=["penalty_correction", "interest_correction"])),
                name="ledger_sign_matches_kind"),
            models.CheckConstraint(condition=~Q(kind="payment") | Q(payment__isnull=False),
                                   name="payment_entry_has_payment"),
            models.CheckConstraint(condition=~Q(kind__in=["penalty", "interest"]) | Q(bill__isnull=False),
                                   name="penalty_entry_has_bill"),
            models.CheckConstraint(condition=~Q(kind="payment_reversal") | Q(corrects__isnull=False),
                                   name="payment_reversal_corrects_payment"),
            models.CheckConstraint(condition=(~Q(kind="penalty_correction")
                                              | Q(bill__isnull=False, corrects__isnull=False)),
                                   name="penalty_correction_has_penalty"),
            models.CheckConstraint(condition=(~Q(kind="interest_correction")
                                              | Q(bill__isnull=False, corrects__isnull=False)),
                                   name="interest_correction_has_interest"),
        ]
        indexes = [models.Index(fields=["account", "posted_on"], name="ledger_account_date")]

    def __str__(self) -> str:
        return f"{self.posted_on} {self.get_kind_display()} {self.amount}"


class AccountStanding(models.Model):
    """What the allocation of an account's ledger leaves open: its unpaid bills (by category, charged and
    unpaid) and its credit, as worked out from every entry up to ``last_entry_id`` under ``payment_order``.

    Derived, never a fact: kept so the pages and reports that read every account (aging, the delinquency
    and relevy lists) need not replay every ledger. The ledger is append-only, so an account whose latest
    entry is still ``last_entry_id`` has the same entries, and its standing holds for any day on or after
    ``last_posted_on``; any other read replays the ledger (``billing.ledger.standing``)."""

    account = models.OneToOneField("accounts.Account", on_delete=models.CASCADE, primary_key=True,
                                   related_name="+")
    last_entry_id = models.BigIntegerField()
    last_posted_on = models.DateField()
    payment_order = models.CharField(max_length=20, choices=PaymentOrder.choices)
    state = models.JSONField(help_text='{"credit": "0.00", "bills": [[key, unpaid, charged], …]}: only bills '
                                       "with something unpaid; amounts as strings of dollars and cents.")
    refreshed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Standing of account {self.account_id} through entry {self.last_entry_id}"


class PriorPayment(models.Model):
    """A payment the customer made to the village's previous system, brought over as history: shown on the
    statement and in the portal beside the bills it paid, never on our books (what it paid is already out of
    the opening balances)."""

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="prior_payments")
    paid_on = models.DateField()
    amount = money_field()
    reference = models.CharField(max_length=80, blank=True)
    conversion = models.CharField(max_length=40, help_text="The conversion that brought it over.")

    class Meta:
        ordering = ["-paid_on", "-id"]
        indexes = [models.Index(fields=["account", "paid_on"], name="prior_payment_account_date")]

    def __str__(self) -> str:
        return f"{self.paid_on} {self.amount} on {self.account}"


class PriorRelevy(models.Model):
    """Unpaid charges the village's previous system relevied to the tax roll, brought over as history: collected
    with the property taxes, so no longer owed on the water account and never relevied again; shown on the
    statement and in the portal, never on our books."""

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="prior_relevies")
    relevied_on = models.DateField()
    tax_roll = models.CharField(max_length=80, help_text="The roll they were added to, as the old system named it.")
    amount = money_field()
    conversion = models.CharField(max_length=40, help_text="The conversion that brought it over.")

    class Meta:
        ordering = ["-relevied_on", "-id"]
        constraints = [models.CheckConstraint(condition=Q(amount__gt=0), name="prior_relevy_positive")]

    def __str__(self) -> str:
        return f"{self.relevied_on} {self.amount} relevied on {self.account}"


class PenaltyWaiver(models.Model):
    """A clerk's waiver of one posted penalty or interest charge, with the reason; above the preset's
    amount (``[penalty] waiver_approval_above``) it waits for a supervisor's approval.

    An approved waiver is a fact the assessment reads: the charge is owed as nothing from then on, so the
    assessment corrects it to zero on its own day and bill and never posts it again.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a supervisor"
        APPROVED = "approved", "Waived"
        REFUSED = "refused", "Refused"
        WITHDRAWN = "withdrawn", "Withdrawn by who asked"

    entry = models.ForeignKey(LedgerEntry, on_delete=models.PROTECT, related_name="waivers",
                              help_text="The penalty or interest charge waived.")
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="penalty_waivers")
    bill = models.ForeignKey(Bill, on_delete=models.PROTECT, related_name="penalty_waivers")
    amount = money_field(help_text="The charge as it stood when the waiver was asked for.")
    reason = models.TextField(help_text="Why the charge is waived (kept for the audit).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    # A supervisor approves or refuses it, through core.workflow.transition (one within the clerk's limit is made
    # approved).
    workflow = Workflow("status", {Status.PENDING: {Status.APPROVED, Status.REFUSED, Status.WITHDRAWN}})
    # Above the limit a clerk asks and a supervisor who is not that clerk decides (core.approval).
    approval = Approval(permission="billing.change_penaltywaiver", noun="waiver")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-requested_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["entry"], condition=Q(status__in=["pending", "approved"]),
                                    name="one_live_waiver_per_charge"),
            models.CheckConstraint(condition=~Q(reason=""), name="penalty_waiver_has_reason"),
            models.CheckConstraint(condition=Q(status="pending") | Q(decided_at__isnull=False),
                                   name="penalty_waiver_decision_dated"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="penalty_waiver_amount_positive"),
        ]

    def __str__(self) -> str:
        return f"Waiver of {self.amount} on {self.bill}"
