"""Payments that come to the village through a channel: a card or bank payment made online through a processor.

Design overview:

* **An online payment** (``OnlinePayment``) is one customer's checkout: the account and amount chosen here, the
  processor's checkout id, and — once the processor says the money was taken — the ``billing.Payment`` it posted
  through billing's one payment service. The processor's page takes the card or bank details; none reaches us.
* **Each processor event is recorded once** (``ProcessorEvent``, unique per processor and event id): a replayed
  webhook finds its event and does nothing more; the payment's reference (the processor's payment id) is unique
  in billing too, so even a different event for the same payment posts it once.
* **A refund or a dispute** reverses the posted payment (``billing.services.reversals``) on the day the
  processor says it happened; one that arrives before the payment itself is kept and applied when it does.
"""

import uuid

from django.conf import settings
from django.db import models

from billing.models import money_field
from core.approval import Approval
from core.workflow import Workflow


class OnlinePayment(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Waiting for the customer at the processor"
        PAID = "paid", "Paid: posted to the account"
        EXPIRED = "expired", "Not completed"
        REVERSED = "reversed", "Paid, then refunded or disputed: reversed"

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="online_payments")
    amount = money_field()
    processor = models.CharField(max_length=20)
    checkout_id = models.CharField(max_length=255, blank=True, help_text="The processor's checkout session.")
    payment_ref = models.CharField("processor's payment id", max_length=255, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    payment = models.OneToOneField("billing.Payment", null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="online")
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+", help_text="Blank: paid from the bill without signing in.")
    receipt_email = models.EmailField(blank=True)
    receipt_sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    paid_at = models.DateTimeField(null=True, blank=True)
    # A refund or dispute the processor reported (applied when the payment is posted, if it came first).
    reversed_on = models.DateField(null=True, blank=True)
    reversal_reason = models.CharField(max_length=20, blank=True)
    reinstated = models.OneToOneField(
        "billing.Payment", null=True, blank=True, on_delete=models.PROTECT, related_name="online_reinstated",
        help_text="A disputed payment the village won back: posted again, as this payment.")

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["processor", "checkout_id"], condition=~models.Q(checkout_id=""),
                                    name="one_online_payment_per_checkout"),
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="online_payment_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.amount} for {self.account} ({self.get_status_display()})"


class ProcessorEvent(models.Model):
    """A webhook event a processor sent, once: what it was and what it did here."""

    processor = models.CharField(max_length=20)
    event_id = models.CharField(max_length=255)
    kind = models.CharField(max_length=80)
    received_at = models.DateTimeField(auto_now_add=True)
    outcome = models.CharField(max_length=300)
    online_payment = models.ForeignKey(OnlinePayment, null=True, blank=True, on_delete=models.SET_NULL,
                                       related_name="events")

    class Meta:
        ordering = ["-received_at"]
        constraints = [models.UniqueConstraint(fields=["processor", "event_id"], name="one_processor_event")]

    def __str__(self) -> str:
        return f"{self.processor} {self.kind} {self.event_id}"


class AutopayEnrolment(models.Model):
    """A customer's authorization to debit a bank account for each bill, kept as they gave it. The bank account
    number is stored sealed (``remittance.vault``) with its last four digits beside it for pages and emails."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        SUSPENDED = "suspended", "Suspended (a debit came back: the account is closed or the debit unauthorized)"
        CANCELLED = "cancelled", "Cancelled"

    class AccountType(models.TextChoices):
        CHECKING = "checking", "Checking"
        SAVINGS = "savings", "Savings"

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="autopay")
    holder_name = models.CharField(max_length=100)
    routing_number = models.CharField(max_length=9)
    account_type = models.CharField(max_length=8, choices=AccountType.choices, default=AccountType.CHECKING)
    account_number_sealed = models.TextField(help_text="Encrypted; never shown.")
    account_last4 = models.CharField(max_length=4)
    email = models.EmailField(help_text="Where the notice before each debit goes.")
    authorization = models.TextField(help_text="The authorization wording, as the customer agreed to it.")
    authorized_at = models.DateTimeField()
    authorized_from = models.GenericIPAddressField(null=True, blank=True)
    authorized_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    # Every change goes through core.workflow.transition: a return, the customer's or a clerk's cancel, a new one.
    workflow = Workflow("status", {Status.ACTIVE: {Status.SUSPENDED, Status.CANCELLED}})
    status_note = models.CharField(max_length=200, blank=True)
    status_changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-authorized_at"]
        constraints = [models.UniqueConstraint(fields=["account"], condition=models.Q(status="active"),
                                               name="one_active_autopay_per_account")]

    def __str__(self) -> str:
        return f"Autopay of {self.account} from the account ending {self.account_last4} ({self.get_status_display()})"


class AchFile(models.Model):
    """A debit file made for the bank: what it held, and its NACHA text sealed with the bank key (never the bank
    account numbers in clear), kept in the transaction that posted its debits so a failed write is written again
    identically (``ach_export --again``).

    Made in the admin it takes two people: one prepares it (``pending``: the debits listed in ``proposed``, nothing
    posted) and a supervisor who is not that person approves it (the debits posted, the file sealed) or refuses
    it with a note (``core.approval``). Made from the server's command line it is approved as it is made."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a supervisor"
        APPROVED = "approved", "Approved: debits posted"
        REFUSED = "refused", "Refused"
        WITHDRAWN = "withdrawn", "Withdrawn by who asked"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    workflow = Workflow("status", {Status.PENDING: {Status.APPROVED, Status.REFUSED, Status.WITHDRAWN}})
    approval = Approval(permission="remittance.approve_achfile", noun="debit file", requester="created_by")
    proposed = models.JSONField(default=list, blank=True,
                                help_text="The debits as prepared: account, amount and presentment of each.")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)
    created_on = models.DateField()
    modifier = models.CharField(max_length=1, help_text="The file id modifier: A, B, … for files of one day.")
    effective_on = models.DateField(help_text="The effective entry date: the banking day the debits settle.")
    same_day = models.BooleanField(default=False, help_text="Settles the day it is made (same-day ACH).")
    entries = models.PositiveIntegerField()
    total = money_field()
    entry_hash = models.CharField(max_length=10)
    sealed_text = models.TextField(blank=True, help_text="The NACHA text, encrypted with the bank key; never shown.")
    written_at = models.DateTimeField(null=True, blank=True, help_text="When the file was last written out.")
    written_to = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")

    class Meta:
        ordering = ["-created_at"]
        permissions = [("approve_achfile", "Can approve or refuse an autopay debit file")]
        constraints = [
            models.UniqueConstraint(fields=["created_on", "modifier"], name="one_ach_file_per_modifier"),
            models.UniqueConstraint(fields=["status"], condition=models.Q(status="pending"),
                                    name="one_ach_file_waiting",
                                    violation_error_message="A debit file is already waiting for a supervisor."),
            models.CheckConstraint(condition=models.Q(status="pending") | models.Q(decided_at__isnull=False),
                                   name="ach_file_decision_dated"),
        ]

    def __str__(self) -> str:
        return f"ACH file {self.created_on} {self.modifier}: {self.entries} debits, {self.total}"


class AutopayDebit(models.Model):
    """One debit of one file, the payment it posted, and its return if the customer's bank sent it back."""

    file = models.ForeignKey(AchFile, on_delete=models.PROTECT, related_name="debits")
    enrolment = models.ForeignKey(AutopayEnrolment, on_delete=models.PROTECT, related_name="debits")
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="+")
    amount = money_field()
    trace_number = models.CharField(max_length=15, unique=True)
    payment = models.OneToOneField("billing.Payment", on_delete=models.PROTECT, related_name="autopay_debit")
    returned_code = models.CharField(max_length=3, blank=True)
    returned_on = models.DateField(null=True, blank=True)
    receipt_sent_at = models.DateTimeField(null=True, blank=True)
    notice = models.ForeignKey("AutopayNotice", null=True, blank=True, on_delete=models.PROTECT, related_name="debits",
                               help_text="The notice of amount and date this debit was sent under.")
    presentment = models.PositiveSmallIntegerField(
        default=1, help_text="1: the first time; 2 and 3: presented again after insufficient or uncollected funds.")

    class Meta:
        ordering = ["trace_number"]
        constraints = [
            models.UniqueConstraint(fields=["notice", "presentment"], condition=models.Q(notice__isnull=False),
                                    name="one_debit_per_notice_presentment"),
            models.CheckConstraint(condition=models.Q(presentment__gte=1, presentment__lte=3),
                                   name="at_most_two_represented"),
        ]

    def __str__(self) -> str:
        return f"Debit {self.trace_number}: {self.amount} from {self.account}"


class AutopayNotice(models.Model):
    """The email before a debit, with its amount and day: once per bill and enrolment, and once for what was
    already owed when the customer enrolled (arrears, no bill). A debit is sent only under a notice that was sent
    the office's notice period before it settles (Reg E § 1005.10(d))."""

    class Kind(models.TextChoices):
        BILL = "bill", "A bill's debit"
        ARREARS = "arrears", "What was owed at enrolment"

    enrolment = models.ForeignKey(AutopayEnrolment, on_delete=models.CASCADE, related_name="notices")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.BILL)
    bill = models.ForeignKey("billing.Bill", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    amount = money_field(null=True, blank=True, help_text="The amount the notice says; at most this is debited.")
    debit_on = models.DateField(null=True, blank=True, help_text="The day the notice says the debit settles.")
    sent_at = models.DateTimeField(null=True, blank=True, help_text="Empty: not sent yet; nothing is debited under it.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["enrolment", "bill"], condition=models.Q(bill__isnull=False),
                                    name="one_autopay_notice_per_bill"),
            models.UniqueConstraint(fields=["enrolment"], condition=models.Q(kind="arrears"),
                                    name="one_arrears_notice_per_enrolment"),
            models.CheckConstraint(condition=models.Q(kind="arrears", bill__isnull=True)
                                   | models.Q(kind="bill", bill__isnull=False), name="autopay_notice_bill_by_kind"),
        ]

    def __str__(self) -> str:
        return f"Autopay notice of bill {self.bill_id} to {self.enrolment}"


class PaymentException(models.Model):
    """A payment that came from the bank but could not be matched to an account: a clerk posts it to the account
    it belongs to, or records that it was sent back."""

    class Status(models.TextChoices):
        OPEN = "open", "Waiting for a clerk"
        POSTED = "posted", "Posted to an account"
        RETURNED = "returned", "Sent back to the payer"

    source = models.CharField(max_length=20, help_text="lockbox, online:stripe, billpay, …")
    tender = models.CharField(max_length=10, default="check", help_text="How the money came: check, online, …")
    reference = models.CharField(max_length=80, unique=True, help_text="The payment's reference once posted.")
    received_on = models.DateField()
    amount = money_field()
    check_number = models.CharField(max_length=20, blank=True)
    read = models.CharField("what was read", max_length=200, blank=True, help_text="The scan line as read.")
    reason = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    # A clerk posts it or records it sent back, through core.workflow.transition.
    workflow = Workflow("status", {Status.OPEN: {Status.POSTED, Status.RETURNED}})
    payment = models.OneToOneField("billing.Payment", null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    note = models.TextField(blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["status", "received_on", "reference"]
        permissions = [("approve_paymentexception", "Can post an exception over the clerk's limit or over what "
                                                       "the account owes")]

    def __str__(self) -> str:
        return f"{self.reference}: {self.amount} ({self.get_status_display()})"


class BankDeposit(models.Model):
    """A credit to the village's bank account, from the bank's BAI2 report, with the channel it came through."""

    class Channel(models.TextChoices):
        LOCKBOX = "lockbox", "Lockbox"
        AUTOPAY = "autopay", "Autopay (ACH debit file)"
        PROCESSOR = "processor", "Payment processor payout"
        BILLPAY = "billpay", "Bank bill pay (a customer's bank)"
        COUNTER = "counter", "Counter deposit"
        OTHER = "other", "Other"

    posted_on = models.DateField()
    bank_account = models.CharField(max_length=40)
    type_code = models.CharField(max_length=3)
    description = models.CharField(max_length=80)
    amount = money_field()
    bank_reference = models.CharField(max_length=80, blank=True)
    customer_reference = models.CharField(max_length=80, blank=True)
    text = models.CharField(max_length=200, blank=True)
    channel = models.CharField(max_length=10, choices=Channel.choices)
    key = models.CharField(max_length=300, unique=True, help_text="What makes it this credit, for a file read twice.")
    payment = models.OneToOneField("billing.Payment", null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="bank_deposit", help_text="The bill-pay payment it posted.")
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-posted_on", "channel", "id"]

    def __str__(self) -> str:
        return f"{self.posted_on} {self.get_channel_display()}: {self.amount}"
