"""The ordinance's rows billing keeps: its rate schedules and its fees, each effective-dated with its citation (the
utility and the other tables are the ordinance floor's, ``ordinance.models``)."""


from django.db import models
from djmoney.models.fields import MoneyField
from simple_history.models import HistoricalRecords


def money_field(**kwargs):
    return MoneyField(max_digits=12, decimal_places=2, default_currency="USD", currency_choices=[("USD", "USD")],
                      **kwargs)


class PaymentOrder(models.TextChoices):
    PRINCIPAL_FIRST = "principal_first", "Principal first: charges of every bill, oldest first, then penalties"
    PENALTIES_FIRST = "penalties_first", "Penalties first: each bill's penalties, then its charges, oldest bill first"


class RateSchedule(models.Model):
    """One effective-dated version of the water rate schedule; ``rules`` is the preset's declaration. A district's own
    schedules (``[[district.rate_schedule]]``) name it; a district with none bills by the installation's."""

    district = models.CharField(max_length=40, blank=True, default="", db_default="",
                                help_text="The district whose schedule this is; blank: the installation's.")
    effective_on = models.DateField()
    citation = models.CharField(max_length=80)
    is_sample = models.BooleanField(default=False, help_text="Sample values a clerk replaces with the adopted ones.")
    rules = models.JSONField()
    history = HistoricalRecords()

    class Meta:
        ordering = ["district", "-effective_on"]
        constraints = [models.UniqueConstraint(fields=["district", "effective_on"],
                                               name="one_rate_schedule_per_district_date")]

    def __str__(self) -> str:
        where = f" of district {self.district}" if self.district else ""
        return f"Rate schedule{where} effective {self.effective_on}"


class Fee(models.Model):
    """One effective-dated version of a fee of the preset's fee schedule; ``rule`` names how it is quoted
    (``billing.fees``), and the fields it needs are filled."""

    code = models.CharField(max_length=40)
    district = models.CharField(max_length=40, blank=True, default="", db_default="",
                                help_text="The district whose own fee this is ([[district.fee]]); blank: the "
                                          "installation's, charged in every district that has none of its own.")
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
        ordering = ["code", "district", "-effective_on"]
        constraints = [models.UniqueConstraint(fields=["code", "district", "effective_on"],
                                               name="one_fee_version_per_date")]

    def __str__(self) -> str:
        return f"{self.description} ({self.citation})"
