"""Termination of service with due process: a case, the notices served on its recipients, the hearing
request, the determination, the appeal, the work orders, and the timeline of every step with its actor.

A case is opened for one account on grounds of nonpayment (the bills delinquent under the preset's rule,
kept as ``CaseBill`` rows with what each owed) or a violation of a named section. Its status follows
``TerminationCase.workflow``; every change goes through ``core.workflow.transition`` (locked, audited), and
every step also writes a ``CaseEvent`` in the clerk's words, dated the day it happened, not the day it was
typed. An emergency interruption (Mineola § 45.31; Old Westbury's health hazard) is never a case: it is an
``Interruption`` of its own.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.workflow import Workflow

ACTIVE = ("open", "noticed", "requested", "no_request", "determined", "appealed", "final", "ordered")
# A case that is over: nothing more happens on it (a paid case reopens only if its payment is reversed).
CLOSED = ("restored", "paid", "resolved", "dismissed", "withdrawn")


class TerminationCase(models.Model):
    class Grounds(models.TextChoices):
        NONPAYMENT = "nonpayment", "Nonpayment"
        VIOLATION = "violation", "Violation"

    class Status(models.TextChoices):
        OPEN = "open", "Open: notice to serve"
        NOTICED = "noticed", "Notice served: request window open"
        REQUESTED = "requested", "Hearing requested"
        NO_REQUEST = "no_request", "No request: default determination due"
        DETERMINED = "determined", "Termination determined: appeal window open"
        APPEALED = "appealed", "Appealed to the Commission"
        FINAL = "final", "Termination final"
        ORDERED = "ordered", "Shut-off ordered"
        SHUT_OFF = "shut_off", "Shut off"
        RESTORED = "restored", "Restored"
        PAID = "paid", "Closed: paid in full"
        RESOLVED = "resolved", "Closed: arrangement or other action"
        DISMISSED = "dismissed", "Dismissed"
        WITHDRAWN = "withdrawn", "Withdrawn: its ground fell away (bill voided or account closed)"

    class Outcome(models.TextChoices):
        TERMINATE = "terminate", "Terminate service"
        ARRANGEMENT = "arrangement", "Payment arrangement"
        OTHER = "other", "Other appropriate action"
        DISMISS = "dismiss", "Dismiss"

    class Decision(models.TextChoices):
        UPHOLD = "uphold", "Termination upheld"
        REVERSE = "reverse", "Termination reversed"

    class RequestVia(models.TextChoices):
        CLERK = "clerk", "Recorded by the clerk"
        PORTAL = "portal", "Made online"

    workflow = Workflow("status", {
        "open": {"noticed", "ordered", "paid", "dismissed", "withdrawn"},
        "noticed": {"requested", "no_request", "determined", "resolved", "dismissed", "ordered", "paid", "withdrawn"},
        "no_request": {"requested", "determined", "resolved", "dismissed", "ordered", "paid", "withdrawn"},
        "requested": {"determined", "resolved", "dismissed", "ordered", "paid", "withdrawn"},
        "determined": {"appealed", "final", "ordered", "paid", "withdrawn"},
        "appealed": {"final", "dismissed", "ordered", "paid", "withdrawn"},
        "final": {"appealed", "ordered", "paid", "withdrawn"},
        "ordered": {"shut_off", "paid", "appealed", "withdrawn"},
        "shut_off": {"restored"},
        # Withdrawn: its ground fell away — every bill it was for voided, or the account closed
        # (termination.services.cases: cases_withdraw_voided, cases_of_closed_account).
        # Reopened: the payment that paid the case in full was reversed (termination.services.cases).
        "paid": {"open", "noticed", "no_request", "requested", "determined", "appealed", "final"},
    })

    number = models.CharField(max_length=20, unique=True, null=True, editable=False)
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="termination_cases")
    grounds = models.CharField(max_length=12, choices=Grounds.choices)
    section = models.CharField(max_length=80, help_text="The section the grounds rest on.")
    grounds_detail = models.TextField(blank=True, help_text="The specific grounds, as the notice states them.")
    amount_delinquent = models.DecimalField(max_digits=12, decimal_places=2, default=0,
                                            help_text="Unpaid on the bills delinquent when the case was opened.")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.OPEN, db_index=True)
    opened_on = models.DateField()
    opened_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="+")
    # The hearing named in the notices.
    hearing_on = models.DateField(null=True, blank=True)
    hearing_time = models.TimeField(null=True, blank=True)
    hearing_place = models.CharField(max_length=200, blank=True)
    # The written request for the hearing.
    request_received_on = models.DateField(null=True, blank=True)
    request_late = models.BooleanField(default=False, help_text="Yes when the request was received after the request "
                                                                "window closed.")
    request_via = models.CharField(max_length=8, choices=RequestVia.choices, blank=True)
    request_text = models.TextField(blank=True)
    request_recorded_at = models.DateTimeField(null=True, blank=True)
    # The hearing file.
    attendance = models.TextField(blank=True, help_text="Who appeared at the hearing.")
    evidence_notes = models.TextField(blank=True)
    # The hearing officer's determination and its mailed notice.
    outcome = models.CharField(max_length=12, choices=Outcome.choices, blank=True)
    outcome_notes = models.TextField(blank=True)
    by_default = models.BooleanField(default=False, help_text="Yes when determined without a timely request for a "
                                                              "hearing.")
    determined_on = models.DateField(null=True, blank=True)
    determined_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="+")
    determination_mailed_on = models.DateField(null=True, blank=True)
    # The appeal to the Commission and its final decision.
    appeal_filed_on = models.DateField(null=True, blank=True)
    appeal_grounds = models.TextField(blank=True)
    appeal_late = models.BooleanField(default=False, help_text="Yes when the appeal was filed after the appeal "
                                                               "window closed.")
    decision = models.CharField(max_length=8, choices=Decision.choices, blank=True)
    appeal_hearing_on = models.DateField(null=True, blank=True)
    appeal_notice_mailed_on = models.DateField(null=True, blank=True)
    decided_on = models.DateField(null=True, blank=True)
    closed_on = models.DateField(null=True, blank=True)
    determination_pdf = models.FileField(upload_to="determinations/%Y/%m/", blank=True,
                                         help_text="The notice of the determination (or of the final decision).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-opened_on", "-id"]
        permissions = [("determine_terminationcase", "Can record hearings, determinations and appeal decisions"),
                       ("order_terminationcase", "Can issue shut-off orders"),
                       ("carry_out_terminationcase", "Can record a shut-off carried out and service restored")]
        constraints = [
            # One case at a time per account until it is closed.
            models.UniqueConstraint(fields=["account"], condition=Q(status__in=[*ACTIVE, "shut_off"]),
                                    name="one_active_termination_case_per_account"),
            models.CheckConstraint(condition=Q(grounds__in=["nonpayment", "violation"]),
                                   name="termination_case_grounds_valid"),
            models.CheckConstraint(condition=~Q(grounds="nonpayment") | Q(amount_delinquent__gt=0),
                                   name="termination_nonpayment_has_amount"),
            models.CheckConstraint(condition=~Q(section=""), name="termination_case_has_section"),
            models.CheckConstraint(condition=Q(outcome="") | Q(determined_on__isnull=False),
                                   name="termination_outcome_has_date"),
        ]

    def __str__(self) -> str:
        return self.number or f"case {self.pk}"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE

    @property
    def is_closed(self) -> bool:
        return self.status in CLOSED


class CaseBill(models.Model):
    """A bill delinquent when the case was opened, and what it owed then."""

    case = models.ForeignKey(TerminationCase, on_delete=models.CASCADE, related_name="bills")
    bill = models.ForeignKey("billing.Bill", on_delete=models.PROTECT, related_name="+")
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    delinquent_from = models.DateField()

    class Meta:
        ordering = ["bill__bill_date", "bill_id"]
        constraints = [models.UniqueConstraint(fields=["case", "bill"], name="one_case_bill_per_bill"),
                       models.CheckConstraint(condition=Q(amount__gt=0), name="case_bill_amount_positive")]

    def __str__(self) -> str:
        return f"{self.bill} in {self.case}"


class Notice(models.Model):
    """The notice of the grounds and the hearing, served on one recipient. A recipient may be served again
    (a new hearing date, a returned letter): the latest service counts, the earlier ones stay on file."""

    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        OCCUPANT = "occupant", "Occupant"

    class Method(models.TextChoices):
        PERSONAL = "personal", "Personal service"
        CERTIFIED_MAIL = "certified_mail", "Certified mail"
        REGISTERED_MAIL = "registered_mail", "Registered mail, return receipt requested"
        SUITABLE_AGE_AND_MAIL = "suitable_age_and_mail", "Person of suitable age and discretion, and first-class mail"

    case = models.ForeignKey(TerminationCase, on_delete=models.CASCADE, related_name="notices")
    role = models.CharField(max_length=8, choices=Role.choices)
    recipient = models.ForeignKey("accounts.Customer", on_delete=models.PROTECT, related_name="+")
    name = models.CharField(max_length=200)
    address = models.TextField()
    method = models.CharField(max_length=24, choices=Method.choices)
    article_number = models.CharField(max_length=40, blank=True,
                                      help_text="Certified or registered mail article number.")
    served_on = models.DateField()
    received_on = models.DateField(null=True, blank=True)
    hearing_on = models.DateField()
    amount = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    pdf = models.FileField(upload_to="notices/%Y/%m/", blank=True)
    served_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["case", "role", "-served_on", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(role__in=["owner", "occupant"]), name="notice_role_valid"),
            models.CheckConstraint(condition=Q(received_on__isnull=True) | Q(received_on__gte=models.F("served_on")),
                                   name="notice_received_after_served"),
            models.CheckConstraint(condition=Q(hearing_on__gt=models.F("served_on")),
                                   name="notice_hearing_after_service"),
        ]

    def __str__(self) -> str:
        return f"{self.case} notice to {self.get_role_display().lower()} {self.name}"


class WorkOrder(models.Model):
    """A field crew's order to shut off or restore service at the curb stop."""

    class Kind(models.TextChoices):
        SHUT_OFF = "shut_off", "Shut off"
        RESTORE = "restore", "Restore"

    class Status(models.TextChoices):
        ISSUED = "issued", "Issued"
        DONE = "done", "Carried out"
        CANCELLED = "cancelled", "Cancelled"

    workflow = Workflow("status", {"issued": {"done", "cancelled"}})

    case = models.ForeignKey(TerminationCase, on_delete=models.PROTECT, related_name="orders")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ISSUED)
    issued_on = models.DateField()
    issued_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="+")
    done_on = models.DateField(null=True, blank=True)
    cancel_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-issued_on", "-id"]
        constraints = [
            # One open shut-off order per case: a second "shutoff" returns the first.
            models.UniqueConstraint(fields=["case", "kind"], condition=Q(status="issued"),
                                    name="one_issued_order_per_case_and_kind"),
            models.CheckConstraint(condition=Q(status="done", done_on__isnull=False) | ~Q(status="done"),
                                   name="work_order_done_has_date"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} order {self.pk} ({self.case})"


class CaseEvent(models.Model):
    """One line of a case's timeline: what happened, on which day, and who did it."""

    case = models.ForeignKey(TerminationCase, on_delete=models.CASCADE, related_name="events")
    on = models.DateField()
    kind = models.CharField(max_length=30)
    what = models.TextField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="+")
    by = models.CharField(max_length=150, help_text="Who: the user's name, the customer online, or the nightly job.")
    flagged = models.BooleanField(default=False, help_text="Yes when it needs a look: a late request or appeal.")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["on", "id"]

    def __str__(self) -> str:
        return f"{self.on} {self.what}"


class Interruption(models.Model):
    """Service interrupted without the hearing procedure because the ordinance allows it (emergency,
    repairs, shortage; a health hazard): logged as its own event, never as a shut-off order."""

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="interruptions")
    kind = models.CharField(max_length=20)
    citation = models.CharField(max_length=80)
    started_on = models.DateField()
    ended_on = models.DateField(null=True, blank=True)
    reason = models.TextField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-started_on", "-id"]
        constraints = [
            models.CheckConstraint(condition=~Q(reason=""), name="interruption_has_reason"),
            models.CheckConstraint(condition=Q(ended_on__isnull=True) | Q(ended_on__gte=models.F("started_on")),
                                   name="interruption_ends_after_start"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} at {self.account} from {self.started_on}"
