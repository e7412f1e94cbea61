"""Backflow and cross-connection compliance: what each premises needs, the devices installed, the certified
testers and their tests, the compliance notices served, and the fines and fees they put on the water bill.

* An ``Assessment`` records the conditions found at an account's premises and the preset's answer
  (``backflow.rules``): whether a device is required, which types are allowed, the citation and the trace of
  the condition that decided. The latest assessment is the premises' rule.
* A ``Device`` is registered against the account; a type the rule does not allow is flagged, not refused (the
  device is there whether or not it should be).
* A ``Tester`` holds a NYS certification with its expiry and a gauge calibration date; a ``DeviceTest`` by a
  tester whose certification has lapsed on the test date is refused. A test submitted online by a tester waits
  for the clerk to accept it; only accepted tests count toward the next test due.
* A ``ComplianceNotice`` is served on the account (how, when, received) and carries its deadline under the
  preset; ``NoticeCharge`` rows put what it costs on the bill through billing's pending charges, each day of a
  fine counted once.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy

from core.workflow import Workflow

DEVICE_TYPES = [("AG", "Air gap"), ("RPZ", "Reduced-pressure zone assembly"), ("DCA", "Double check assembly"),
                ("AVB", "Atmospheric vacuum breaker"), ("PVB", "Pressure vacuum breaker")]


class Assessment(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="backflow_assessments")
    conditions = models.JSONField(default=list, help_text="The condition codes found, as the preset names them.")
    note = models.TextField(blank=True, help_text="The inspector's determination, where the rule needs one.")
    reason = models.TextField(blank=True, help_text="A recorded reason, where a device is allowed only with one.")
    required = models.BooleanField()
    allowed = models.JSONField(default=list)
    citation = models.CharField(max_length=120)
    trace = models.JSONField(default=list)
    assessed_on = models.DateField()
    assessed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-assessed_on", "-id"]
        get_latest_by = ["assessed_on", "id"]

    def __str__(self) -> str:
        return f"{self.account} on {self.assessed_on}: {'required' if self.required else 'not required'}"


class Device(models.Model):
    class Type(models.TextChoices):
        AG = "AG", gettext_lazy("Air gap")
        RPZ = "RPZ", gettext_lazy("Reduced-pressure zone assembly")
        DCA = "DCA", gettext_lazy("Double check assembly")
        AVB = "AVB", gettext_lazy("Atmospheric vacuum breaker")
        PVB = "PVB", gettext_lazy("Pressure vacuum breaker")

    class Status(models.TextChoices):
        ACTIVE = "active", "In service"
        OUT_OF_SERVICE = "out_of_service", "Out of service"
        REMOVED = "removed", "Removed"

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="backflow_devices")
    type = models.CharField(max_length=3, choices=Type.choices)
    make = models.CharField(max_length=80, blank=True)
    model = models.CharField(max_length=80, blank=True)
    serial = models.CharField(max_length=60, unique=True)
    size = models.CharField(max_length=10, help_text="Inches, e.g. 3/4, 1, 1 1/2, 2.")
    location = models.CharField(max_length=200, blank=True)
    installed_on = models.DateField()
    removed_on = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    flagged = models.BooleanField(default=False, help_text="Yes when its type is not one the premises' rule "
                                                           "allows.")
    flag_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["account", "serial"]
        constraints = [
            models.CheckConstraint(condition=Q(type__in=["AG", "RPZ", "DCA", "AVB", "PVB"]), name="device_type_valid"),
            models.CheckConstraint(condition=Q(removed_on__isnull=True) | Q(removed_on__gte=models.F("installed_on")),
                                   name="device_removed_after_installed"),
            models.CheckConstraint(condition=~Q(flagged=True) | ~Q(flag_reason=""), name="device_flag_has_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.serial}"


class Tester(models.Model):
    name = models.CharField(max_length=200)
    company = models.CharField(max_length=200, blank=True)
    certification_no = models.CharField("NYS certification number", max_length=40, unique=True)
    certification_expires = models.DateField()
    gauge_calibrated_on = models.DateField(null=True, blank=True)
    email = models.EmailField(blank=True)
    phone = models.CharField(max_length=40, blank=True)
    user = models.OneToOneField(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="backflow_tester",
                                help_text="The tester's login for submitting tests online.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.certification_no})"


class DeviceTest(models.Model):
    class Result(models.TextChoices):
        PASS = "pass", gettext_lazy("Pass")
        FAIL = "fail", gettext_lazy("Fail")

    class Status(models.TextChoices):
        SUBMITTED = "submitted", gettext_lazy("Submitted online: awaiting the clerk")
        ACCEPTED = "accepted", gettext_lazy("Accepted")
        REJECTED = "rejected", gettext_lazy("Rejected")

    # A test submitted online waits for the clerk; every review goes through core.workflow.transition.
    workflow = Workflow("status", {Status.SUBMITTED: {Status.ACCEPTED, Status.REJECTED}})

    device = models.ForeignKey(Device, on_delete=models.PROTECT, related_name="tests")
    tester = models.ForeignKey(Tester, on_delete=models.PROTECT, related_name="tests")
    tested_on = models.DateField()
    result = models.CharField(max_length=4, choices=Result.choices)
    check_valve_1_psid = models.DecimalField(max_digits=5, decimal_places=1, null=True, blank=True)
    check_valve_2_psid = models.DecimalField(max_digits=5, decimal_places=1, null=True, blank=True)
    relief_valve_opening_psid = models.DecimalField(max_digits=5, decimal_places=1, null=True, blank=True)
    repairs = models.TextField(blank=True)
    by_department = models.BooleanField(
        "performed by the Department's agents", default=False,
        help_text="Yes when the Water Department's own agents performed the test (Old Westbury: the test its $250 "
                  "fee is for), not a tester the owner hired.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACCEPTED)
    submitted_online = models.BooleanField(default=False)
    submitted_at = models.DateTimeField(auto_now_add=True)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")
    reviewed_on = models.DateField(null=True, blank=True)
    review_note = models.TextField(blank=True)

    class Meta:
        ordering = ["-tested_on", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(result__in=["pass", "fail"]), name="device_test_result_valid"),
            models.CheckConstraint(condition=Q(status__in=["submitted", "accepted", "rejected"]),
                                   name="device_test_status_valid"),
            models.UniqueConstraint(fields=["device", "tested_on", "tester"], name="one_test_per_device_day_tester"),
        ]

    def __str__(self) -> str:
        return f"{self.device} tested {self.tested_on}: {self.result}"


class ComplianceNotice(models.Model):
    class Kind(models.TextChoices):
        TEST_DUE = "test_due", gettext_lazy("Test due in 30 days")
        OVERDUE = "overdue", gettext_lazy("Test overdue")
        INSTALL = "install", gettext_lazy("Install or upgrade a device")
        CERTIFICATION = "certification", gettext_lazy("Certification required")
        DEFICIENCY = "deficiency", gettext_lazy("Notice of deficiency")
        VIOLATION = "violation", gettext_lazy("Violation")
        DEMAND = "demand", gettext_lazy("Demand for the test fee")

    class Status(models.TextChoices):
        OPEN = "open", "Open: the owner has not complied"
        HEARING_REQUESTED = "hearing_requested", "A hearing was requested"
        CURED = "cured", "Complied with"

    # Every change of status goes through core.workflow.transition with the actor and a status-change row; a
    # cured notice's cure date may be corrected (cured → cured) until a fine is charged to it.
    workflow = Workflow("status", {Status.OPEN: {Status.HEARING_REQUESTED, Status.CURED},
                                   Status.HEARING_REQUESTED: {Status.CURED},
                                   Status.CURED: {Status.CURED}})

    class Method(models.TextChoices):
        FIRST_CLASS_MAIL = "first_class_mail", "First-class mail"
        PERSONAL = "personal", "Personal delivery"
        CERTIFIED_MAIL = "certified_mail", "Certified mail"
        REGISTERED_MAIL = "registered_mail", "Registered mail, return receipt requested"
        SUITABLE_AGE_AND_MAIL = "suitable_age_and_mail", "Person of suitable age and discretion, and first-class mail"

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="backflow_notices")
    device = models.ForeignKey(Device, null=True, blank=True, on_delete=models.PROTECT, related_name="notices")
    kind = models.CharField(max_length=14, choices=Kind.choices)
    citation = models.CharField(max_length=120)
    served_on = models.DateField()
    method = models.CharField(max_length=24, choices=Method.choices)
    article_number = models.CharField(max_length=40, blank=True)
    received_on = models.DateField(null=True, blank=True)
    deadline = models.DateField(null=True, blank=True, help_text="The day by which the owner must act.")
    shortened_to = models.DateField(null=True, blank=True)
    shortened_by = models.CharField(max_length=200, blank=True)
    shortened_reason = models.TextField(blank=True)
    largest_pipe_inches = models.DecimalField(max_digits=4, decimal_places=2, null=True, blank=True)
    per_day = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True,
                                  help_text="A daily fine the clerk imposes (Washingtonville, up to $250).")
    amount = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True,
                                 help_text="A fee demanded (Old Westbury's test fee).")
    due_for = models.DateField(null=True, blank=True, help_text="The due date a test-due or overdue notice is about.")
    status = models.CharField(max_length=18, choices=Status.choices, default=Status.OPEN)
    hearing_requested_on = models.DateField(
        null=True, blank=True, help_text="The day the owner's written request for a hearing was received (Old "
                                         "Westbury: before the Board of Zoning Appeals, within the 7 days).")
    test = models.ForeignKey(DeviceTest, null=True, blank=True, on_delete=models.PROTECT, related_name="demands",
                             help_text="A demand's test: the one the Department's agents performed.")
    cured_on = models.DateField(null=True, blank=True)
    pdf = models.FileField(upload_to="backflow/%Y/%m/", blank=True)
    served_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-served_on", "-id"]
        permissions = [("charge_compliancenotice", "Can charge a backflow fine to the next bill")]
        constraints = [
            # The nightly job sends each due and overdue notice once.
            models.UniqueConstraint(fields=["device", "kind", "due_for"], condition=Q(kind__in=["test_due", "overdue"]),
                                    name="one_reminder_per_device_due_date"),
            models.CheckConstraint(condition=Q(shortened_to__isnull=True) | ~Q(shortened_reason=""),
                                   name="shortened_window_has_reason"),
            # Old Westbury's $250 is one fee per test the Department performed, never one per demand.
            models.UniqueConstraint(fields=["test"], condition=Q(kind="demand"), name="one_demand_per_test"),
            models.CheckConstraint(condition=Q(kind="demand") | Q(test__isnull=True),
                                   name="only_a_demand_names_a_test"),
            models.CheckConstraint(condition=~Q(status="cured") | Q(cured_on__isnull=False),
                                   name="a_cured_notice_has_its_cure_date"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} to {self.account} on {self.served_on}"


class NoticeCharge(models.Model):
    """What a notice put on the bill: a fine for the days ``first_day``–``last_day``, or a fee; each day of a
    fine is charged once (the database refuses overlapping ranges through the unique last day and the service
    charging from the day after the last one charged)."""

    notice = models.ForeignKey(ComplianceNotice, on_delete=models.PROTECT, related_name="charges")
    charge = models.OneToOneField("billing.PendingCharge", on_delete=models.PROTECT, related_name="+")
    first_day = models.DateField(null=True, blank=True)
    last_day = models.DateField(null=True, blank=True)
    computation = models.TextField()

    class Meta:
        ordering = ["notice", "last_day"]
        constraints = [
            models.UniqueConstraint(fields=["notice", "last_day"], name="one_notice_charge_per_last_day"),
            models.UniqueConstraint(fields=["notice"], condition=Q(last_day__isnull=True),
                                    name="one_fee_charge_per_notice"),
        ]

    def __str__(self) -> str:
        return self.computation


class ReverseFlow(models.Model):
    """Reverse flow a meter reported on an account's premises: water ran back from the premises toward the main,
    which under every seed chapter is a cross-connection to find and protect against. Opened once per meter alert
    (``backflow.receivers``); what it asks is the chapter's rule: test the premises' devices now, or, with none,
    survey the premises and assess the device the rule requires. Done when the inspector records what was found."""

    class Status(models.TextChoices):
        OPEN = "open", "To follow up"
        DONE = "done", "Followed up"

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="reverse_flows")
    alert = models.OneToOneField("meters.UsageAlert", on_delete=models.PROTECT, related_name="backflow_follow_up")
    read_on = models.DateField(help_text="The day the meter reported it.")
    action = models.CharField(max_length=300, help_text="What the chapter asks of the office now.")
    citation = models.CharField(max_length=120)
    devices = models.JSONField(default=list, help_text="The premises' devices in service then, by serial.")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    # Followed up once, through core.workflow.transition with the inspector and a status-change row.
    workflow = Workflow("status", {Status.OPEN: {Status.DONE}})
    done_on = models.DateField(null=True, blank=True)
    done_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                related_name="+")
    note = models.TextField(blank=True, help_text="What the inspector found and did.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["status", "-read_on", "-id"]
        verbose_name = "reverse flow follow-up"
        constraints = [models.CheckConstraint(condition=~Q(status="done") | (Q(done_on__isnull=False) & ~Q(note="")),
                                              name="reverse_flow_done_is_dated_with_a_note")]

    def __str__(self) -> str:
        return f"Reverse flow at {self.account} on {self.read_on}"
