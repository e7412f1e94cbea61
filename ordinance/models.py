"""The installed ordinance: the utility this installation bills for, each install of its preset file (its hash and
version), and the preset's tables as dated sections.

A table of the preset (``[calendar]``, ``[penalty]``, ``[termination]``, ``[backflow]``, …) is installed as a
``Section`` effective on a date: the first install's from the beginning, an amendment's from the date it takes
effect (``setup_utility PRESET --effective DATE`` or the file's ``effective_on``). What a bill, a penalty night, a
notice or a case step applies is the section in force on its own date, so an amendment never rewrites the past.
Rate schedules and fees are billing's rows (bills point at them), dated the same way, installed by the same
install (``billing.presets``).
"""

import uuid
from datetime import date
from decimal import Decimal

from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

# The date a table of the first install is in force from: "since before any bill".
BEGINNING = date(1900, 1, 1)


def _token() -> str:
    return uuid.uuid4().hex


class Utility(models.Model):
    """The municipality this installation bills for (one row): who it is, and the office's own settings the clerk
    changes on its page. Its rules are the dated sections (``ordinance.selectors.section``)."""

    preset = models.CharField(max_length=40, unique=True)
    name = models.CharField(max_length=200)
    office_address = models.TextField()
    phone = models.CharField(max_length=40, blank=True)
    chapter = models.CharField(max_length=200, blank=True)
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
    reminder_days = models.PositiveSmallIntegerField(
        "reminder before the due date (days)", default=7,
        help_text="Office policy: a customer owing on a bill is reminded this many days before its due date "
                  "(0: no reminder). The late notice goes the day after the due date whatever this says.")
    bill_emails_wait = models.BooleanField(
        "paperless e-mails wait for the clerk", default=False,
        help_text="Office policy: when ticked, a run's paperless e-mails are sent from the run's page once the clerk "
                  "has looked at the run; when not, they go as soon as the bills are issued.")
    # Changes whenever an install changes a section: each process keeps the sections it read under this token.
    rules_token = models.CharField(max_length=32, default=_token, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "billing_utility"
        verbose_name_plural = "utility"
        constraints = [models.CheckConstraint(condition=Q(list_floor__gte=0), name="utility_list_floor_not_negative"),
                       models.CheckConstraint(condition=Q(high_usage_factor__gt=1),
                                              name="utility_high_usage_factor_over_one")]

    def __str__(self) -> str:
        return self.name


class InstalledPreset(models.Model):
    """One install of a preset file that changed the installed copy: which file, its SHA-256, and what it did."""

    version = models.PositiveIntegerField(unique=True)
    code = models.CharField(max_length=40)
    source = models.CharField(max_length=500, help_text="The file installed: a shipped preset or a path outside.")
    sha256 = models.CharField(max_length=64)
    effective_on = models.DateField(help_text="The day its changed tables take effect.")
    installed_at = models.DateTimeField(auto_now_add=True)
    changes = models.JSONField(default=list, help_text="What the install created and updated.")

    class Meta:
        ordering = ["-version"]
        verbose_name = "preset install"

    def __str__(self) -> str:
        return f"{self.code} v{self.version} ({self.sha256[:12]})"


class District(models.Model):
    """A water district (a rate area) of the installation: a town bills each of its districts (Town Law art. 12 and
    12-A) by its own rules where they differ, books it in its own fund (its ``[district.gl]``) and levies its unpaid
    rents on its own list.

    A village is one district and names none: every table is then the installation's. A district's own version of a
    table (``[district.penalty]``, ``[[district.rate_schedule]]`` in the preset file) is a ``Section`` (or a rate
    schedule) with its ``district``; a table the district does not name is the installation's (``section``)."""

    code = models.CharField(max_length=40, unique=True, help_text="As the preset file names it: lower-case, no spaces.")
    name = models.CharField(max_length=200, help_text="As printed on the bill: \"Plainview Water District\".")
    citation = models.CharField(max_length=200, help_text="The law that creates it or sets its rates.")
    installed = models.ForeignKey(InstalledPreset, on_delete=models.PROTECT, related_name="districts")

    class Meta:
        ordering = ["code"]
        constraints = [models.CheckConstraint(condition=~Q(code=""), name="district_code_not_blank")]

    def __str__(self) -> str:
        return self.name


class Section(models.Model):
    """One table of the installed preset, in force from ``effective_on`` until the next version of the table: the
    installation's (``district`` blank) or one district's own version of it."""

    table = models.CharField(max_length=40)
    district = models.CharField(max_length=40, blank=True, default="", db_default="",
                                help_text="The district whose own version this is; blank: the installation's.")
    effective_on = models.DateField()
    params = models.JSONField(default=dict, blank=True)
    installed = models.ForeignKey(InstalledPreset, on_delete=models.PROTECT, related_name="sections")
    history = HistoricalRecords()

    class Meta:
        ordering = ["table", "district", "-effective_on"]
        constraints = [models.UniqueConstraint(fields=["table", "district", "effective_on"],
                                               name="section_one_version_a_day")]

    def __str__(self) -> str:
        where = f" of district {self.district}" if self.district else ""
        return f"[{self.table}]{where} in force from {self.effective_on}"
