"""Bills and their lines: issued once, never edited."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from .ordinance import RateSchedule, money_field
from .runs import BillingRun


class Bill(models.Model):
    class Status(models.TextChoices):
        ISSUED = "issued", "Issued"
        VOID = "void", "Void"

    class Frequency(models.TextChoices):
        SEMIANNUAL = "semiannual", "Semiannual"
        MONTHLY = "monthly", "Monthly"
        QUARTERLY = "quarterly", "Quarterly"

    number = models.CharField(max_length=40, unique=True)
    public_id = models.UUIDField(unique=True, editable=False)
    # No index of its own: ``bill_account_date`` (and the one live bill per period) lead with the account.
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="bills", db_index=False)
    run = models.ForeignKey(BillingRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="bills")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.ISSUED)
    frequency = models.CharField(max_length=12, choices=Frequency.choices)
    bill_date = models.DateField(help_text="The billing period's date under the calendar.")
    recipient_name = models.CharField(max_length=200, blank=True,
                                      help_text="The owner the bill was issued to, as printed; fixed at issue.")
    recipient_address = models.TextField(blank=True, help_text="The mailing address the bill was issued to.")
    issued_on = models.DateField(help_text="The day the bill was issued: the bill date, or later for a corrected "
                                           "bill that replaces a voided one.")
    due_date = models.DateField()
    period_start = models.DateField()
    period_end = models.DateField()
    gallons = models.BigIntegerField()
    schedule_gallons = models.BigIntegerField(
        default=0, help_text="Gallons counted against the regular schedule's annual allowance.")
    includes_annual_minimum = models.BooleanField(default=False)
    start_reading = models.ForeignKey("meters.Reading", null=True, on_delete=models.PROTECT, related_name="+")
    end_reading = models.ForeignKey("meters.Reading", null=True, on_delete=models.PROTECT, related_name="+")
    estimated = models.BooleanField(default=False)
    district = models.ForeignKey(
        "ordinance.District", to_field="code", null=True, blank=True, on_delete=models.PROTECT, related_name="bills",
        db_index=False, help_text="The district whose rules billed it (the premises' district at the period's end); "
                                  "none where the installation names no districts.")
    rate_schedule = models.ForeignKey(RateSchedule, null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="bills",
                                      help_text="The schedule it was rated under; none for a converted bill.")
    total = money_field()
    created_at = models.DateTimeField(auto_now_add=True)
    voided_at = models.DateTimeField(null=True, blank=True)
    voided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")
    void_reason = models.TextField(blank=True, help_text="Internal note; never shown to the customer.")
    void_description = models.CharField(max_length=200, blank=True,
                                        help_text="What the customer reads about the void.")
    pdf = models.FileField(upload_to="bills/%Y/%m/", blank=True)
    final = models.BooleanField(
        default=False, db_default=False,
        help_text="An off-cycle final bill, issued on a move-out or a sale from the final reading.")
    converted_on = models.DateField(
        null=True, blank=True,
        help_text="For a bill brought over from the village's previous system: the cutover date. Its charges and the "
                  "late charges before that day are the old system's; ours start on it.")
    conversion = models.CharField(max_length=40, blank=True, default="", db_default="",
                                  help_text="The conversion that brought it over (its ledger source prefix).")

    class Meta:
        ordering = ["-bill_date", "account"]
        constraints = [
            models.UniqueConstraint(fields=["account", "bill_date"], condition=~Q(status="void"),
                                    name="one_live_bill_per_account_period"),
            models.CheckConstraint(condition=Q(due_date__gte=models.F("issued_on")), name="bill_due_not_before_issue"),
            models.CheckConstraint(condition=Q(issued_on__gte=models.F("bill_date")),
                                   name="bill_issued_not_before_date"),
            models.CheckConstraint(condition=Q(gallons__gte=0), name="bill_gallons_not_negative"),
            models.CheckConstraint(condition=Q(rate_schedule__isnull=False) | Q(converted_on__isnull=False),
                                   name="bill_rated_or_converted"),
            models.CheckConstraint(condition=Q(converted_on__isnull=True, conversion="")
                                   | (Q(converted_on__isnull=False) & ~Q(conversion="")),
                                   name="bill_converted_by_a_conversion"),
        ]
        indexes = [models.Index(fields=["account", "-bill_date"], name="bill_account_date")]

    def __str__(self) -> str:
        return self.number

    @property
    def has_usage(self) -> bool:
        """Whether the bill says what was used: every bill of ours; a converted one brought over with its period
        and gallons (an open balance alone has neither)."""
        return self.converted_on is None or self.period_end > self.period_start


class BillLine(models.Model):
    class Kind(models.TextChoices):
        MINIMUM = "minimum", "Minimum charge"
        CONSUMPTION = "consumption", "Consumption"
        NONPROFIT = "nonprofit", "Nonprofit rate"
        SPRINKLER = "sprinkler", "Sprinkler service charge"
        SERVICE = "service", "Service charge"
        SEWER = "sewer", "Sewer charge"
        CHARGE = "charge", "Charge"
        FEE = "fee", "Fee"
        FINE = "fine", "Fine"

    # No index of its own: ``one_line_per_position`` leads with the bill.
    bill = models.ForeignKey(Bill, on_delete=models.PROTECT, related_name="lines", db_index=False)
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=12, choices=Kind.choices)
    description = models.CharField(max_length=200)
    citation = models.CharField(max_length=80)
    quantity = models.DecimalField(max_digits=14, decimal_places=2)
    rate = models.DecimalField(max_digits=12, decimal_places=6)
    amount = money_field()

    class Meta:
        ordering = ["bill", "position"]
        constraints = [models.UniqueConstraint(fields=["bill", "position"], name="one_line_per_position")]

    def __str__(self) -> str:
        return f"{self.description}: {self.amount}"


class BillFigures(models.Model):
    """A bill's money box as it stood when the bill was issued (``billing.selectors.BillSummary``), worked out
    from its account's ledger once and kept: the PDF, the paperless e-mail and the portal's bill page read
    these, so they show the same figures to the cent and none of them replays the account's history again.

    Derived, never a fact: what a bill says at issue depends only on what was recorded by then, so the row
    never changes once written, and one deleted is worked out again the same (``billing.figures``).
    """

    bill = models.OneToOneField(Bill, on_delete=models.CASCADE, primary_key=True, related_name="figures")
    previous_date = models.DateField(null=True, blank=True)
    previous_balance = models.DecimalField(max_digits=12, decimal_places=2)
    payments = models.DecimalField(max_digits=12, decimal_places=2)
    penalties = models.DecimalField(max_digits=12, decimal_places=2)
    other = models.DecimalField(max_digits=12, decimal_places=2)
    current = models.DecimalField(max_digits=12, decimal_places=2)
    past_due = models.DecimalField(max_digits=12, decimal_places=2)
    total_due = models.DecimalField(max_digits=12, decimal_places=2)
    late_on = models.DateField()
    late_total = models.DecimalField(max_digits=12, decimal_places=2)
    worked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "bill figures"
        constraints = [models.CheckConstraint(
            condition=Q(total_due=models.F("previous_balance") + models.F("payments") + models.F("penalties")
                        + models.F("other") + models.F("current")),
            name="bill_figures_add_up")]

    def __str__(self) -> str:
        return f"Figures of bill {self.bill_id}"
