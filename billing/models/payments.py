"""Payments, their reversals, and credit and debit memos."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy
from simple_history.models import HistoricalRecords

from .bills import Bill
from .ordinance import money_field


class Payment(models.Model):
    class Tender(models.TextChoices):
        CASH = "cash", gettext_lazy("Cash")
        CHECK = "check", gettext_lazy("Check")
        CARD = "card", gettext_lazy("Card")
        BANK_FILE = "bank_file", gettext_lazy("Bank file")
        ONLINE = "online", gettext_lazy("Online (card or bank, through the processor)")
        ACH = "ach", gettext_lazy("Autopay (bank debit)")
        BILL_PAY = "bill_pay", gettext_lazy("Bank bill pay (the customer's bank)")

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="payments")
    amount = money_field()
    paid_on = models.DateField()
    reference = models.CharField(max_length=80, unique=True)
    source = models.CharField(max_length=20, default="counter", help_text="import, counter, lockbox, api…")
    tendered = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True,
                                   help_text="Cash handed over at the counter: the change is what it exceeds the "
                                             "payment by.")
    tender = models.CharField(max_length=10, choices=Tender.choices, default=Tender.CHECK, db_default="check",
                              help_text="How the customer paid: what the drawer holds at the end of the day.")
    check_number = models.CharField(max_length=40, blank=True, help_text="For a check: its number.")
    entered_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-paid_on", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="payment_amount_positive"),
            # "chk-100" is the check "CHK-100" retyped: references are unique whatever their case.
            models.UniqueConstraint(Lower("reference"), name="payment_reference_unique_ignoring_case",
                                    violation_error_message="A payment with this reference, in any case, is "
                                                            "already posted."),
        ]

    def __str__(self) -> str:
        return f"{self.reference}: {self.amount} on {self.paid_on}"

    @property
    def change(self) -> Decimal | None:
        """What the counter gave back of the cash tendered (None: nothing was recorded as tendered)."""
        return None if self.tendered is None else self.tendered - self.amount.amount


class PaymentReversal(models.Model):
    """A payment taken back: a returned check, a payment posted to the wrong account, one entered in error.

    The payment and its ledger entry stay as they were; the reversal is an entry of its own (kind
    ``payment_reversal``, correcting the payment's entry), and from its date on the ledger replays the account
    as if the payment had never been made, so the penalties a returned check leaves owed are owed on their own
    days. A misposted payment is transferred: the reversal names the payment posted to the right account, with
    the date the customer paid.
    """

    class Reason(models.TextChoices):
        RETURNED = "returned", gettext_lazy("Returned check (insufficient funds, stopped, closed account)")
        MISPOSTED = "misposted", gettext_lazy("Posted to the wrong account")
        ERROR = "error", gettext_lazy("Entered in error")
        REFUNDED = "refunded", gettext_lazy("Refunded through the processor")
        DISPUTED = "disputed", gettext_lazy("Disputed with the card issuer or bank")
        DEBIT_RETURNED = "debit_returned", gettext_lazy("Bank debit returned (its return code in the note)")

    payment = models.OneToOneField(Payment, on_delete=models.PROTECT, related_name="reversal")
    reversed_on = models.DateField()
    reason = models.CharField(max_length=20, choices=Reason.choices)
    note = models.TextField(help_text="Internal note: what happened (the bank's notice, who noticed).")
    fee = models.OneToOneField("PendingCharge", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
                               help_text="The returned-payment fee it charged.")
    transferred_to = models.OneToOneField(Payment, null=True, blank=True, on_delete=models.PROTECT,
                                          related_name="transferred_from",
                                          help_text="The payment posted to the right account instead.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-reversed_on", "-id"]
        constraints = [
            models.CheckConstraint(condition=~Q(note=""), name="payment_reversal_has_note"),
            models.CheckConstraint(condition=~Q(reason="misposted") | Q(transferred_to__isnull=False),
                                   name="misposted_payment_is_transferred"),
        ]

    def __str__(self) -> str:
        return f"{self.payment.reference} reversed on {self.reversed_on}"


class Adjustment(models.Model):
    class Kind(models.TextChoices):
        CREDIT = "credit", "Credit memo"
        DEBIT = "debit", "Debit memo"

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="adjustments")
    bill = models.ForeignKey(Bill, null=True, blank=True, on_delete=models.PROTECT, related_name="adjustments")
    kind = models.CharField(max_length=6, choices=Kind.choices)
    amount = money_field(help_text="Always positive; the kind says which way it goes.")
    adjusted_on = models.DateField()
    reason = models.TextField(help_text="Internal note; never shown to the customer.")
    description = models.CharField(max_length=200, default="Account correction",
                                   help_text="What the customer reads on the statement and portal.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-adjusted_on", "-id"]
        constraints = [models.CheckConstraint(condition=Q(amount__gt=0), name="adjustment_amount_positive")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.amount} on {self.account}"
