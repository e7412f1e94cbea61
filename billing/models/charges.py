"""Fees and fines charged between bills, and refundable deposits."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from .bills import Bill
from .ordinance import money_field


class PendingCharge(models.Model):
    """A fee or fine charged between bills. It waits here until the first bill dated on or after
    ``earliest_bill_on`` carries it as a line (``billing.runs.plan``); ``bill`` is then set, once.

    What the charge is — description, citation, amount, and the line's quantity and rate — is fixed when it
    is charged, from the fee schedule in force that day, so a later schedule never changes it. Before it is
    billed a clerk may cancel it with a reason; after, it is corrected like the rest of the bill. When the
    bill that carried it is voided, the void reverses the whole bill, this charge included, and the charge is
    charged again as a new pending charge (``reissue_of``) that the corrected bill carries.
    """

    class Kind(models.TextChoices):
        FEE = "fee", "Fee"
        FINE = "fine", "Fine"

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="pending_charges")
    code = models.CharField(max_length=40, help_text="The fee's code in the preset's fee schedule.")
    kind = models.CharField(max_length=4, choices=Kind.choices, default=Kind.FEE)
    description = models.CharField(max_length=200)
    citation = models.CharField(max_length=80)
    amount = money_field()
    quantity = models.DecimalField(max_digits=14, decimal_places=2, default=1,
                                   help_text="The bill line's quantity: 1, or the base of a pro-rata fee.")
    rate = models.DecimalField(max_digits=12, decimal_places=6, help_text="The bill line's rate.")
    base = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True,
                               help_text="Dollars a pro-rata fee was computed from.")
    size = models.CharField(max_length=10, blank=True, help_text="Inches, for a fee by size.")
    note = models.TextField(blank=True, help_text="Internal note; never shown to the customer.")
    charged_on = models.DateField()
    earliest_bill_on = models.DateField(help_text="The earliest bill date it may go on.")
    bill = models.ForeignKey(Bill, null=True, blank=True, on_delete=models.PROTECT, related_name="charges",
                             help_text="The bill that carried it; empty while it is pending.")
    reissue_of = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="reissue",
                                      help_text="The charge of a voided bill this one charges again.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                     related_name="+")
    cancel_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-charged_on", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="pending_charge_amount_positive"),
            models.CheckConstraint(condition=Q(kind__in=["fee", "fine"]), name="pending_charge_kind_valid"),
            models.CheckConstraint(condition=Q(earliest_bill_on__gte=models.F("charged_on")),
                                   name="pending_charge_not_billed_before_charged"),
            models.CheckConstraint(condition=Q(bill__isnull=True) | Q(cancelled_at__isnull=True),
                                   name="pending_charge_billed_or_cancelled_not_both"),
            models.CheckConstraint(condition=Q(cancelled_at__isnull=True) | ~Q(cancel_reason=""),
                                   name="pending_charge_cancel_has_reason"),
        ]
        indexes = [models.Index(fields=["account", "earliest_bill_on"], condition=Q(bill__isnull=True),
                                name="pending_charge_waiting")]

    def __str__(self) -> str:
        return f"{self.description} {self.amount} on {self.account}"

    @property
    def status(self) -> str:
        if self.cancelled_at is not None:
            return "cancelled"
        return "pending" if self.bill_id is None else "billed"


class Deposit(models.Model):
    """A refundable deposit the customer leaves with the clerk (a hydrant connection's, Washingtonville
    § 169-4): money held for the customer, a liability, never revenue.

    It is not principal: no bill carries it, no payment pays it, no penalty or interest is computed on it,
    and it is no part of the amount due. The ledger records it apart (kind ``deposit`` when received, a
    credit held; ``deposit_refund`` when returned, without interest), and the balance leaves both out
    (``billing.ledger.allocation.DEPOSIT_KINDS``); the statement and portal show what is held.
    """

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="deposits")
    code = models.CharField(max_length=40, help_text="The deposit's code in the preset's fee schedule.")
    description = models.CharField(max_length=200)
    citation = models.CharField(max_length=80)
    amount = money_field()
    received_on = models.DateField()
    reference = models.CharField(max_length=80, blank=True, help_text="The certified check or receipt number.")
    received_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")
    refunded_on = models.DateField(null=True, blank=True)
    refunded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")
    refund_note = models.TextField(blank=True, help_text="Internal note: the satisfactory discontinuance.")
    created_at = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-received_on", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="deposit_amount_positive"),
            models.CheckConstraint(condition=Q(refunded_on__isnull=True) | Q(refunded_on__gte=models.F("received_on")),
                                   name="deposit_refunded_after_received"),
        ]

    def __str__(self) -> str:
        return f"{self.description} {self.amount} on {self.account}"

    @property
    def status(self) -> str:
        return "held" if self.refunded_on is None else "refunded"
