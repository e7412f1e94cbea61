"""The ordinance as data: the installed utility, its rate schedules and its fees, each effective-dated with its
citation."""

from decimal import Decimal

from django.db import models
from django.db.models import Q
from djmoney.models.fields import MoneyField
from simple_history.models import HistoricalRecords


def money_field(**kwargs):
    return MoneyField(max_digits=12, decimal_places=2, default_currency="USD", currency_choices=[("USD", "USD")],
                      **kwargs)


class PaymentOrder(models.TextChoices):
    PRINCIPAL_FIRST = "principal_first", "Principal first: charges of every bill, oldest first, then penalties"
    PENALTIES_FIRST = "penalties_first", "Penalties first: each bill's penalties, then its charges, oldest bill first"


class Utility(models.Model):
    """The municipality this installation bills for (one row), and the strategies its preset selects."""

    preset = models.CharField(max_length=40, unique=True)
    name = models.CharField(max_length=200)
    office_address = models.TextField()
    phone = models.CharField(max_length=40, blank=True)
    chapter = models.CharField(max_length=200, blank=True)
    calendar_scheme = models.CharField(max_length=40)
    calendar_params = models.JSONField(default=dict)
    penalty_scheme = models.CharField(max_length=40)
    penalty_params = models.JSONField(default=dict)
    termination_params = models.JSONField(default=dict)
    backflow_params = models.JSONField(default=dict, blank=True,
                                       help_text="The preset's [backflow] table: the compliance notices, the fine or "
                                                 "fee, and what noncompliance leads to (backflow/policy.py).")
    notes = models.JSONField(default=list, help_text="Discrepancies between the text and the preset.")
    payment_order = models.CharField(
        max_length=20, choices=PaymentOrder.choices, default=PaymentOrder.PRINCIPAL_FIRST,
        help_text="Office policy, not in the ordinance: what a payment pays first.")
    is_demo_site = models.BooleanField(
        default=False, help_text="A demo or training site: billing on the preset's sample rates is allowed.")
    list_floor = models.DecimalField(
        "floor under shut-off and relevy lists", max_digits=12, decimal_places=2, default=Decimal("25.00"),
        help_text="Office policy, not in the ordinance: an account owing less than this is not proposed for a "
                  "shut-off case or the relevy list (the preset's [policy] list_floor, $25.00 unless it says "
                  "otherwise). Lower it to 0.00 to list every amount.")
    high_usage_factor = models.DecimalField(
        "hold a bill over this many times the usual use", max_digits=5, decimal_places=2, default=Decimal("4"),
        db_default=Decimal("4"),
        help_text="Office policy, not in the ordinance: a run holds a bill for review when its use per day is over "
                  "this many times the account's average per day on its earlier bills (the preset's [policy] "
                  "high_usage_factor, 4 unless it says otherwise). Released holds bill as read.")
    plan_grace_days = models.PositiveSmallIntegerField(
        "payment plan grace (days)", default=10,
        help_text="Office policy: days after an installment's date before a payment plan with it unpaid is "
                  "defaulted.")
    returned_payment_fee = models.DecimalField(
        "returned-payment fee (office policy)", max_digits=8, decimal_places=2, default=Decimal("0.00"),
        help_text="Office policy, used only where the preset's fee schedule has no returned-check fee: charged on the "
                  "next bill when a check or a bank debit comes back unpaid. 0.00: none.")
    bill_emails_wait = models.BooleanField(
        "paperless e-mails wait for the clerk", default=False,
        help_text="Office policy: when ticked, a run's paperless e-mails are sent from the run's page once the clerk "
                  "has looked at the run; when not, they go as soon as the bills are issued.")
    gl_params = models.JSONField(
        "general ledger accounts", default=dict, blank=True,
        help_text="The preset's [gl] table: the fund and account codes the day's journal posts to (billing/gl.py; "
                  "New York's Uniform System of Accounts where it says nothing).")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "utility"
        constraints = [models.CheckConstraint(condition=Q(list_floor__gte=0), name="utility_list_floor_not_negative"),
                       models.CheckConstraint(condition=Q(high_usage_factor__gt=1),
                                              name="utility_high_usage_factor_over_one")]

    def __str__(self) -> str:
        return self.name


class RateSchedule(models.Model):
    """One effective-dated version of the water rate schedule; ``rules`` is the preset's declaration."""

    effective_on = models.DateField(unique=True)
    citation = models.CharField(max_length=80)
    is_sample = models.BooleanField(default=False, help_text="Sample values a clerk replaces with the adopted ones.")
    rules = models.JSONField()
    history = HistoricalRecords()

    class Meta:
        ordering = ["-effective_on"]

    def __str__(self) -> str:
        return f"Rate schedule effective {self.effective_on}"


class Fee(models.Model):
    """One effective-dated version of a fee of the preset's fee schedule; ``rule`` names how it is quoted
    (``billing.fees``), and the fields it needs are filled."""

    code = models.CharField(max_length=40)
    effective_on = models.DateField()
    description = models.CharField(max_length=200)
    rule = models.CharField(max_length=20, default="flat",
                            help_text="How the fee is quoted: flat, pro_rata, by_size or clerk (billing/fees.py).")
    amount = money_field(null=True, blank=True)
    rate = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True,
                               help_text="For fees computed pro rata (per dollar of construction cost).")
    by_size = models.JSONField(default=dict, blank=True,
                               help_text='For fees by supply or meter size: dollars by inches, {"2": "100.00"}.')
    params = models.JSONField(
        default=dict, blank=True,
        help_text="The rule's own terms beyond an amount, a rate or a table: when a tap may be made, when a "
                  "meter test is charged (billing/fees.py).")
    citation = models.CharField(max_length=80)
    note = models.TextField(blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["code", "-effective_on"]
        constraints = [models.UniqueConstraint(fields=["code", "effective_on"], name="one_fee_version_per_date")]

    def __str__(self) -> str:
        return f"{self.description} ({self.citation})"
