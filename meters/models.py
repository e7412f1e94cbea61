"""Meters, where they are installed, and what they read.

An ``Installation`` links a meter to an account over a date range, so a change-out keeps both meters'
history. Readings are register values in the meter's own unit; consumption in gallons is derived
(``meters.units``). The database holds one reading per meter per date and one open installation per meter.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from .units import METER_SIZES, register_text


class Meter(models.Model):
    class Unit(models.TextChoices):
        GALLONS = "gal", "Gallons"
        CUBIC_FEET = "cf", "Cubic feet"

    serial = models.CharField(max_length=40, unique=True)
    make = models.CharField(max_length=60, blank=True)
    size = models.CharField(max_length=6, choices=[(s, f'{s}"') for s in METER_SIZES],
                            help_text="Nominal size in inches, kept exact (5/8, 3/4, 1, 1 1/2, …).")
    unit = models.CharField(max_length=3, choices=Unit.choices, default=Unit.GALLONS)
    dials = models.PositiveSmallIntegerField(default=6, help_text="Register digits; the register rolls over after.")
    places = models.PositiveSmallIntegerField(default=0, db_default=0, help_text=(
        "Places the register shows after the unit (a cubic-feet register reading 50082.16 has 2). Its readings are "
        "kept in those steps; the gallons billed are worked out from them."))
    history = HistoricalRecords()

    class Meta:
        ordering = ["serial"]
        constraints = [
            models.CheckConstraint(condition=Q(size__in=list(METER_SIZES)), name="meter_size_known"),
            models.CheckConstraint(condition=Q(unit__in=["gal", "cf"]), name="meter_unit_known"),
            models.CheckConstraint(condition=Q(places__lte=3), name="meter_places_at_most_three"),
        ]

    def __str__(self) -> str:
        return f'{self.serial} ({self.size}")'


class Installation(models.Model):
    meter = models.ForeignKey(Meter, on_delete=models.PROTECT, related_name="installations")
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="installations")
    installed_on = models.DateField()
    removed_on = models.DateField(null=True, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-installed_on"]
        constraints = [
            models.UniqueConstraint(fields=["meter"], condition=Q(removed_on__isnull=True),
                                    name="one_open_installation_per_meter"),
            models.CheckConstraint(condition=Q(removed_on__isnull=True) | Q(removed_on__gte=models.F("installed_on")),
                                   name="installation_removed_after_installed"),
        ]

    def __str__(self) -> str:
        until = self.removed_on or "now"
        return f"{self.meter.serial} on {self.account_id}: {self.installed_on} – {until}"


class Reading(models.Model):
    class ReadType(models.TextChoices):
        ACTUAL = "actual", "Actual"
        ESTIMATED = "estimated", "Estimated"
        FINAL = "final", "Final"

    meter = models.ForeignKey(Meter, on_delete=models.PROTECT, related_name="readings")
    read_on = models.DateField()
    value = models.BigIntegerField(help_text="Register value in the meter's unit.")
    read_type = models.CharField(max_length=10, choices=ReadType.choices, default=ReadType.ACTUAL)
    source = models.CharField(max_length=20, default="manual",
                              help_text="import, manual, install, estimate, api…")
    note = models.CharField(max_length=200, blank=True, help_text="Why, for estimates: the basis used.")
    entered_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    entered_at = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-read_on"]
        constraints = [
            models.UniqueConstraint(fields=["meter", "read_on"], name="one_reading_per_meter_per_date"),
            models.CheckConstraint(condition=Q(value__gte=0), name="reading_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.meter.serial} {self.read_on}: {self.shown}"

    @property
    def shown(self) -> str:
        """The register as the meter shows it (a meter with places keeps its readings in those steps)."""
        return register_text(self.value, self.meter.places)


class MeterTest(models.Model):
    """A meter test at the customer's request, and what it found: the gallons that actually passed through
    the meter on the test bench and the gallons its register showed. What it costs the customer is billing's
    (``billing.services.meter_tests``), which records its words in ``outcome`` when it settles the test."""

    meter = models.ForeignKey(Meter, on_delete=models.PROTECT, related_name="tests")
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="meter_tests")
    requested_on = models.DateField()
    tested_on = models.DateField(null=True, blank=True)
    actual_gallons = models.DecimalField(max_digits=12, decimal_places=3, null=True, blank=True,
                                         help_text="What actually passed through the meter on the test.")
    registered_gallons = models.DecimalField(max_digits=12, decimal_places=3, null=True, blank=True,
                                             help_text="What the meter's register showed for it.")
    note = models.TextField(blank=True)
    outcome = models.TextField(blank=True, help_text="What the test cost the customer, and why (set when settled).")
    settled_on = models.DateField(null=True, blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-requested_on", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(tested_on__isnull=True) | Q(tested_on__gte=models.F("requested_on")),
                                   name="meter_test_after_request"),
            models.CheckConstraint(condition=Q(actual_gallons__isnull=True) | Q(actual_gallons__gt=0),
                                   name="meter_test_actual_positive"),
            models.CheckConstraint(condition=Q(registered_gallons__isnull=True) | Q(registered_gallons__gte=0),
                                   name="meter_test_registered_not_negative"),
            models.CheckConstraint(condition=Q(settled_on__isnull=True) | Q(tested_on__isnull=False),
                                   name="meter_test_settled_after_tested"),
        ]

    def __str__(self) -> str:
        return f"Test of meter {self.meter.serial} requested {self.requested_on}"

    @property
    def error_percent(self):
        """How much more the meter registers than actually passes, in percent (negative: less); exact."""
        if self.actual_gallons is None or self.registered_gallons is None:
            return None
        return (self.registered_gallons - self.actual_gallons) * 100 / self.actual_gallons


class UsageAlert(models.Model):
    """A meter's reading or flag the clerk should look at (the meters' exceptions): use far above the account's own
    (the bill hold's rule), water used on a vacant or shut-off account, none at all on an occupied one; the flags a
    meter system reports with a reading (a leak, reverse flow, tamper, no flow for days, a register that does not
    match its encoder); continuous flow found in daily reads; and a reading outside the range expected for it (a
    re-read). Kept with the meter and day of the reading it is about, once per kind; the customer is told of the
    ones about their use where they chose it."""

    class Kind(models.TextChoices):
        HIGH = "high", "Use far above the account's own"
        VACANT = "vacant", "Use on a vacant or shut-off account"
        NONE = "none", "No use on an occupied account"
        LEAK = "leak", "Leak reported by the meter"
        REVERSE_FLOW = "reverse_flow", "Reverse flow reported by the meter"
        TAMPER = "tamper", "Tamper reported by the meter"
        NO_FLOW = "no_flow", "No flow for days, reported by the meter"
        MISMATCH = "register_mismatch", "Register and encoder do not match"
        CONTINUOUS = "continuous_flow", "Continuous flow in the daily reads"
        OUT_OF_RANGE = "out_of_range", "Outside the range expected for this read: re-read"
        ROLLOVER = "rollover", "The register turned past all nines: recorded as a rollover"

    class Compared(models.TextChoices):
        YEAR = "year", "the year before"
        LAST_YEAR = "last_year", "the same period last year"

    meter = models.ForeignKey(Meter, on_delete=models.CASCADE, related_name="alerts")
    read_on = models.DateField()
    reading = models.ForeignKey(Reading, null=True, blank=True, on_delete=models.CASCADE, related_name="usage_alerts",
                                help_text="The register reading it is about; none for a flag in the daily reads.")
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="usage_alerts")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    detail = models.CharField(max_length=300)
    gallons = models.BigIntegerField(default=0, help_text="The use the reading shows since the one before.")
    days = models.PositiveIntegerField(default=0, help_text="The days that use is over (no flow: the days reported).")
    usual_per_day = models.DecimalField(max_digits=12, decimal_places=1, null=True, blank=True,
                                        help_text="High use: the account's usual gallons a day it is compared with.")
    compared_with = models.CharField(max_length=10, choices=Compared.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    note = models.CharField(max_length=300, blank=True, help_text="What the clerk found (a leak fixed, a misread).")
    seen_through = models.DateField(null=True, blank=True, help_text=(
        "A flag or continuous flow seen day after day is one episode: the last day it was seen. It ends when a day "
        "without it is read or the clerk resolves it."))

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "meter alert"
        constraints = [models.UniqueConstraint(fields=["meter", "read_on", "kind"], name="one_meter_alert_per_day")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.account} on {self.read_on}"


class DailyRead(models.Model):
    """A meter's daily register reads (AMI), one row per meter and month: ``values[d - 1]`` is the register at the
    end of day ``d`` in the meter's unit, or null where the head-end sent none. 100,000 meters make 1.2 million
    rows a year instead of 36.5 million (docs/performance.md). Billing reads registers, not these: the import
    records each month's last day as a reading (``meters.readfiles``)."""

    meter = models.ForeignKey(Meter, on_delete=models.CASCADE, related_name="daily_reads")
    month = models.DateField(help_text="The first day of the month.")
    values = models.JSONField(default=list)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["meter", "month"], name="one_daily_row_per_meter_month"),
                       models.CheckConstraint(condition=models.Q(month__day=1), name="daily_row_month_is_first")]

    def __str__(self) -> str:
        return f"Daily reads of {self.meter} for {self.month:%B %Y}"


class MissedRead(models.Model):
    """A meter the reader could not read (the file's no-read code, with its line): nothing is recorded as a reading,
    so the bill goes to the run's exceptions (or the estimate rule), whose detail names the code."""

    meter = models.ForeignKey(Meter, on_delete=models.CASCADE, related_name="missed_reads")
    read_on = models.DateField()
    code = models.CharField(max_length=20, help_text="The file's code for why the meter was not read.")
    source = models.CharField(max_length=200, help_text="The file and line it came from.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-read_on", "meter"]
        constraints = [models.UniqueConstraint(fields=["meter", "read_on"], name="one_missed_read_per_day")]

    def __str__(self) -> str:
        return f"{self.meter.serial} not read on {self.read_on} (code {self.code})"
