"""Design overview: rates, bills, and the ledger.

* **Ordinance as data.** ``Utility`` names the installed preset and the strategy classes (billing
  calendar, penalty scheme) it selects; ``RateSchedule`` and ``Fee`` are effective-dated versions loaded
  from the preset file, each carrying its citation (a schedule's ``rules`` name its rate structure).
  ``billing.ordinance`` builds the strategies from these rows. A bill is rated with the schedule in force
  on its bill date, so editing the preset never rewrites history.
* **Bills are issued, never edited.** A bill gets its number when it is created by a billing run and its
  lines (kind, description, citation, quantity, rate, amount — each rounded once, half-up) never change.
  Corrections are ``Adjustment`` rows (credit or debit memos); voiding keeps the record. The database
  forbids two live bills for one account and bill date, so concurrent or re-started runs cannot
  double-bill.
* **Balances are derived.** Every charge, penalty, payment and adjustment is an append-only
  ``LedgerEntry`` (debits positive, credits negative). Balances — of an account, of a bill, of its
  principal on a given day — are computed from entries by ``billing.ledger`` (oldest bill first; within
  a bill penalties, then fees, then water), never stored.
* **Runs are records.** ``BillingRun`` keeps counts, totals and progress; its ``BillingRunChunk`` rows are
  units of work any Celery worker can take; ``BillingException`` rows are accounts a clerk must look at.
"""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy
from djmoney.models.fields import MoneyField
from simple_history.models import HistoricalRecords

from core.workflow import Workflow


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


class BillingRun(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    run_on = models.DateField(help_text="The date the run bills as of.")
    dry_run = models.BooleanField(default=False)
    accept_sample_rates = models.BooleanField(
        default=False, help_text="The clerk chose to bill on rates marked sample (recorded for the audit).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    accounts_due = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    bills_created = models.PositiveIntegerField(default=0)
    already_billed = models.PositiveIntegerField(default=0)
    exceptions_count = models.PositiveIntegerField(default=0)
    total_billed = money_field(default=0)
    error = models.TextField(blank=True)

    # Every change of status goes through core.workflow.transition, which records it. A failed run is
    # retried (billing_run_retry): its unfinished chunks are handed out again.
    workflow = Workflow("status", {Status.PENDING: {Status.RUNNING}, Status.RUNNING: {Status.DONE, Status.FAILED},
                                   Status.FAILED: {Status.RUNNING}})

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Billing run {self.pk} for {self.run_on}{' (preview)' if self.dry_run else ''}"

    @property
    def progress_percent(self) -> int:
        return 100 if not self.chunks_total else round(100 * self.chunks_done / self.chunks_total)


class MailFile(models.Model):
    """The print file for the mail house of one run: its bills for paper, sorted by ZIP code, in one PDF made by a
    worker (``billing.services.mail_files``)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Being made"
        DONE = "done", "Ready"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(BillingRun, on_delete=models.CASCADE, related_name="mail_files")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    file = models.FileField(upload_to="mail/%Y/%m/", blank=True)
    bills = models.PositiveIntegerField(default=0, help_text="Bills printed.")
    emailed = models.PositiveIntegerField(default=0, help_text="Bills left out: paperless, e-mailed instead.")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Print file of run {self.run_id} ({self.get_status_display().lower()})"


class BillMessage(models.Model):
    """A message printed on bills: every bill dated from ``first_bill_date`` to ``last_bill_date``, of one book or
    of all. A book's own message is printed instead of one for all books."""

    text = models.CharField(max_length=150, help_text="One or two sentences: it is printed above the tear-off "
                                                      "line of the bill, and said in the bill's e-mail.")
    book = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Blank: every book.")
    first_bill_date = models.DateField()
    last_bill_date = models.DateField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-first_bill_date", "book", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(last_bill_date__gte=models.F("first_bill_date")),
                                   name="bill_message_dates_in_order"),
            models.CheckConstraint(condition=Q(book__isnull=True) | Q(book__gte=1, book__lte=10),
                                   name="bill_message_book_valid"),
            models.CheckConstraint(condition=~Q(text=""), name="bill_message_has_text"),
        ]

    def __str__(self) -> str:
        return self.text


class BillingRunChunk(models.Model):
    """Accounts a worker bills in one transaction. Who holds it and how often it was tried are recorded
    here, so a chunk whose worker died is found and handed on (``billing.runs.lifecycle``)."""

    run = models.ForeignKey(BillingRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    account_ids = models.JSONField()
    done = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Times a worker has taken the chunk.")
    dispatched_at = models.DateTimeField(null=True, blank=True,
                                         help_text="When the chunk was last handed to the workers.")
    leased_until = models.DateTimeField(
        null=True, blank=True,
        help_text="While in the future, the worker that took the chunk is billing it and no other takes it.")
    last_error = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="one_chunk_per_index")]

    def __str__(self) -> str:
        return f"Run {self.run_id} chunk {self.index}"


class BillingException(models.Model):
    class Kind(models.TextChoices):
        NO_READING = "no_reading", "No reading in the read window"
        LOWER_READING = "lower_reading", "Reading lower than the previous one"
        HIGH_USAGE = "high_usage", "Consumption over 4× the account's average (held for review)"
        RATING = "rating", "Cannot be rated"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        RELEASED = "released", "Released: bill as read"
        RESOLVED = "resolved", "Resolved"

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="billing_exceptions")
    bill_date = models.DateField()
    kind = models.CharField(max_length=20, choices=Kind.choices)
    detail = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    run = models.ForeignKey(BillingRun, null=True, on_delete=models.SET_NULL, related_name="exceptions")
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    resolved_at = models.DateTimeField(null=True, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-bill_date", "account"]
        constraints = [models.UniqueConstraint(fields=["account", "bill_date", "kind"],
                                               name="one_exception_per_account_period_kind")]

    def __str__(self) -> str:
        return f"{self.account} {self.bill_date}: {self.get_kind_display()}"


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


class Payment(models.Model):
    class Tender(models.TextChoices):
        CASH = "cash", gettext_lazy("Cash")
        CHECK = "check", gettext_lazy("Check")
        CARD = "card", gettext_lazy("Card")
        BANK_FILE = "bank_file", gettext_lazy("Bank file")
        ONLINE = "online", gettext_lazy("Online (card or bank, through the processor)")
        ACH = "ach", gettext_lazy("Autopay (bank debit)")

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


class LedgerEntry(models.Model):
    """Append-only. Debits (charges, fees, fines, penalties, interest, debit memos) are positive; credits
    negative. Written only by ``billing.ledger.posting``."""

    class Kind(models.TextChoices):
        WATER = "water", "Water charge"
        FEE = "fee", "Fee"
        PENALTY = "penalty", "Penalty"
        PAYMENT = "payment", "Payment"
        CREDIT = "credit", "Credit memo"
        DEBIT = "debit", "Debit memo"
        VOID = "void", "Bill voided"
        PENALTY_CORRECTION = "penalty_correction", "Penalty corrected"
        INTEREST = "interest", "Interest"
        FINE = "fine", "Fine"
        INTEREST_CORRECTION = "interest_correction", "Interest corrected"
        DEPOSIT = "deposit", "Deposit held"
        DEPOSIT_REFUND = "deposit_refund", "Deposit refunded"
        PAYMENT_REVERSAL = "payment_reversal", "Payment reversed"
        # Late charges the village's previous system charged before the cutover: facts, never recomputed.
        CONVERTED_PENALTY = "converted_penalty", "Penalty (previous system)"
        CONVERTED_INTEREST = "converted_interest", "Interest (previous system)"
        # A customer's credit paid back by check (approved by a supervisor): it uses the credit as a charge would.
        REFUND = "refund", "Credit refunded"

    # No index of its own: ``ledger_account_date`` leads with the account.
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="ledger", db_index=False)
    bill = models.ForeignKey(Bill, null=True, blank=True, on_delete=models.PROTECT, related_name="ledger")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    posted_on = models.DateField()
    amount = money_field()
    source = models.CharField(max_length=80, help_text="The fact this entry records (bill:12, charge:3, payment:7, "
                                                      "bill:12@2026-05-02 …); one entry per source and kind.")
    citation = models.CharField(max_length=80, blank=True)
    description = models.CharField(max_length=200, blank=True)
    payment = models.OneToOneField(Payment, null=True, blank=True, on_delete=models.PROTECT, related_name="entry")
    adjustment = models.OneToOneField(Adjustment, null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="entry")
    corrects = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="corrections",
                                 help_text="The penalty or interest charge this entry corrects, when a payment or "
                                           "charge dated earlier was recorded after it was assessed.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "ledger entries"
        ordering = ["posted_on", "id"]
        constraints = [
            models.UniqueConstraint(fields=["bill", "posted_on"], condition=Q(kind="penalty"),
                                    name="one_penalty_per_bill_per_date"),
            models.UniqueConstraint(fields=["bill", "posted_on"], condition=Q(kind="interest"),
                                    name="one_interest_per_bill_per_date"),
            models.UniqueConstraint(fields=["source", "kind"], name="one_entry_per_source_and_kind"),
            models.CheckConstraint(condition=~Q(source=""), name="ledger_entry_has_source"),
            models.CheckConstraint(
                condition=(Q(kind__in=["water", "fee", "fine", "penalty", "interest", "debit", "deposit_refund",
                                       "payment_reversal", "converted_penalty", "converted_interest", "refund"],
                             amount__gte=0)
                           | Q(kind__in=["payment", "credit", "void", "deposit"], amount__lte=0)
                           | Q(kind__in=["penalty_correction", "interest_correction"])),
                name="ledger_sign_matches_kind"),
            models.CheckConstraint(condition=~Q(kind="payment") | Q(payment__isnull=False),
                                   name="payment_entry_has_payment"),
            models.CheckConstraint(condition=~Q(kind__in=["penalty", "interest"]) | Q(bill__isnull=False),
                                   name="penalty_entry_has_bill"),
            models.CheckConstraint(condition=~Q(kind="payment_reversal") | Q(corrects__isnull=False),
                                   name="payment_reversal_corrects_payment"),
            models.CheckConstraint(condition=(~Q(kind="penalty_correction")
                                              | Q(bill__isnull=False, corrects__isnull=False)),
                                   name="penalty_correction_has_penalty"),
            models.CheckConstraint(condition=(~Q(kind="interest_correction")
                                              | Q(bill__isnull=False, corrects__isnull=False)),
                                   name="interest_correction_has_interest"),
        ]
        indexes = [models.Index(fields=["account", "posted_on"], name="ledger_account_date")]

    def __str__(self) -> str:
        return f"{self.posted_on} {self.get_kind_display()} {self.amount}"


class AccountStanding(models.Model):
    """What the allocation of an account's ledger leaves open: its unpaid bills (by category, charged and
    unpaid) and its credit, as worked out from every entry up to ``last_entry_id`` under ``payment_order``.

    Derived, never a fact: kept so the pages and reports that read every account (aging, the delinquency
    and relevy lists) need not replay every ledger. The ledger is append-only, so an account whose latest
    entry is still ``last_entry_id`` has the same entries, and its standing holds for any day on or after
    ``last_posted_on``; any other read replays the ledger (``billing.ledger.standing``)."""

    account = models.OneToOneField("accounts.Account", on_delete=models.CASCADE, primary_key=True,
                                   related_name="+")
    last_entry_id = models.BigIntegerField()
    last_posted_on = models.DateField()
    payment_order = models.CharField(max_length=20, choices=PaymentOrder.choices)
    state = models.JSONField(help_text='{"credit": "0.00", "bills": [[key, unpaid, charged], …]}: only bills '
                                       "with something unpaid; amounts as strings of dollars and cents.")
    refreshed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Standing of account {self.account_id} through entry {self.last_entry_id}"


class PriorPayment(models.Model):
    """A payment the customer made to the village's previous system, brought over as history: shown on the
    statement and in the portal beside the bills it paid, never on our books (what it paid is already out of
    the opening balances)."""

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="prior_payments")
    paid_on = models.DateField()
    amount = money_field()
    reference = models.CharField(max_length=80, blank=True)
    conversion = models.CharField(max_length=40, help_text="The conversion that brought it over.")

    class Meta:
        ordering = ["-paid_on", "-id"]
        indexes = [models.Index(fields=["account", "paid_on"], name="prior_payment_account_date")]

    def __str__(self) -> str:
        return f"{self.paid_on} {self.amount} on {self.account}"


class PenaltyWaiver(models.Model):
    """A clerk's waiver of one posted penalty or interest charge, with the reason; above the preset's
    amount (``[penalty] waiver_approval_above``) it waits for a supervisor's approval.

    An approved waiver is a fact the assessment reads: the charge is owed as nothing from then on, so the
    assessment corrects it to zero on its own day and bill and never posts it again.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a supervisor"
        APPROVED = "approved", "Waived"
        REFUSED = "refused", "Refused"

    entry = models.ForeignKey(LedgerEntry, on_delete=models.PROTECT, related_name="waivers",
                              help_text="The penalty or interest charge waived.")
    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="penalty_waivers")
    bill = models.ForeignKey(Bill, on_delete=models.PROTECT, related_name="penalty_waivers")
    amount = money_field(help_text="The charge as it stood when the waiver was asked for.")
    reason = models.TextField(help_text="Why the charge is waived (kept for the audit).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-requested_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["entry"], condition=Q(status__in=["pending", "approved"]),
                                    name="one_live_waiver_per_charge"),
            models.CheckConstraint(condition=~Q(reason=""), name="penalty_waiver_has_reason"),
            models.CheckConstraint(condition=Q(status="pending") | Q(decided_at__isnull=False),
                                   name="penalty_waiver_decision_dated"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="penalty_waiver_amount_positive"),
        ]

    def __str__(self) -> str:
        return f"Waiver of {self.amount} on {self.bill}"


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
