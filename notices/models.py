"""What the office told a customer, once: each notice is kept with the fact it is about, the words sent in the
customer's language, and where it went (e-mail, or paper for the clerk to print and mail)."""

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords


class CustomerNotice(models.Model):
    class Kind(models.TextChoices):
        PAYMENT_RETURNED = "payment_returned", "Payment returned"
        PAYMENT_DISPUTED = "payment_disputed", "Payment disputed"
        AUTOPAY_SUSPENDED = "autopay_suspended", "Autopay suspended"
        CASE_REOPENED = "case_reopened", "Termination case reopened"
        PLAN_DEFAULTED = "plan_defaulted", "Payment plan ended: an installment missed"
        PLAN_ENDED = "plan_ended", "Payment plan ended: the account closed"
        AUTOPAY_ENDED = "autopay_ended", "Autopay ended: the account closed"
        DUE_SOON = "due_soon", "Reminder: a bill falls due soon"
        LATE_NOTICE = "late_notice", "Late notice: a bill past due"
        USAGE_ALERT = "usage_alert", "Usage alert: use far above usual, on a vacant account, or none"
        INSTALLMENT_DUE = "installment_due", "Reminder: a payment plan installment falls due soon"
        INSTALLMENT_MISSED = "installment_missed", "A payment plan installment missed"
        TERMINATION_SERVED = "termination_served", "Termination notice served, with the hearing date"
        SERVICE_SHUT_OFF = "service_shut_off", "Service shut off, with the amount that restores it"
        SERVICE_RESTORED = "service_restored", "Service restored"
        BILL_READY = "bill_ready", "A new bill is ready"
        AUTOPAY_SCHEDULED = "autopay_scheduled", "Autopay: the amount and day of the next debit"

    class Channel(models.TextChoices):
        EMAIL = "email", "E-mail"
        TEXT = "text", "Text message"
        PAPER = "paper", "Paper (to print and mail)"

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="notices")
    kind = models.CharField(max_length=30, choices=Kind.choices)
    fact = models.CharField(max_length=120, help_text="What it is about (a reversal, a suspension…): told once.")
    language = models.CharField(max_length=10)
    channel = models.CharField(max_length=10, choices=Channel.choices)
    sent_to = models.TextField(blank=True, help_text="The addresses e-mailed, the number texted, or the mailing "
                                                     "address for paper.")
    subject = models.CharField(max_length=200)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True, help_text="E-mailed, or printed to mail; empty: not yet.")
    error = models.CharField(max_length=300, blank=True, help_text="Why the e-mail did not go.")
    printed_on = models.DateField(null=True, blank=True, help_text="A paper notice: the day it was printed to mail.")
    send_after = models.DateTimeField(null=True, blank=True,
                                      help_text="Decided in the quiet hours (9 pm to 8 am): sent from this time.")
    # Sending, exactly once: a sender claims the notice in the database before it calls the provider; a refusal is
    # tried again later, up to ``NOTICE_ATTEMPTS``, then the notice is left failed for the clerk.
    attempts = models.PositiveSmallIntegerField(default=0, db_default=0, help_text="Tries to send it so far.")
    claimed_at = models.DateTimeField(null=True, blank=True, help_text="A sender is sending it (since then).")
    next_try_at = models.DateTimeField(null=True, blank=True, help_text="Refused: tried again from this time.")
    failed_at = models.DateTimeField(null=True, blank=True,
                                     help_text="Refused at every try: the clerk sends it again or on paper.")
    withdrawn_at = models.DateTimeField(null=True, blank=True,
                                        help_text="Not sent: what it reported was no longer so when it was to go.")
    withdrawn_why = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["kind", "fact", "channel"], name="one_notice_per_fact_and_way")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} to {self.account} ({self.get_channel_display().lower()})"

    @property
    def state(self) -> str:
        """Sent, printed, waiting, to try again, failed or withdrawn, in words for the clerk."""
        if self.withdrawn_at:
            return f"withdrawn: {self.withdrawn_why}"
        if self.sent_at:
            return "printed" if self.channel == self.Channel.PAPER else "sent"
        if self.failed_at:
            return f"failed after {self.attempts} tries: {self.error}"
        if self.error:
            return f"refused ({self.error}); tried again"
        return "to print" if self.channel == self.Channel.PAPER else "waiting"


class NoticeAttempt(models.Model):
    """One try to send a notice: when, and what the provider answered."""

    notice = models.ForeignKey(CustomerNotice, on_delete=models.CASCADE, related_name="tries")
    at = models.DateTimeField()
    sent = models.BooleanField()
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["notice", "at", "id"]

    def __str__(self) -> str:
        return f"{self.notice_id} at {self.at:%Y-%m-%d %H:%M}: {'sent' if self.sent else self.error}"


class NoticePreference(models.Model):
    """How an account's customer wants to hear from the office, chosen on the portal (by default: e-mail where there
    is an address, paper where there is none, every notice). Text messages only with consent (``TextConsent``); a
    number that replied STOP or could not be reached is not texted, and ``text_problem`` says why."""

    account = models.OneToOneField("accounts.Account", on_delete=models.CASCADE, related_name="notice_preference")
    by_email = models.BooleanField("e-mail", default=True)
    by_text = models.BooleanField("text message", default=False)
    by_paper = models.BooleanField("paper by mail as well", default=False)
    kinds_off = models.JSONField(default=list, blank=True, help_text="The optional notices turned off.")
    text_number = models.CharField(max_length=16, blank=True, help_text="+1 and ten digits.")
    emails_off = models.JSONField(default=list, blank=True,
                                  help_text="Addresses the mail provider reported bounced or marked as spam: not "
                                            "e-mailed until the customer gives them again.")
    email_problem = models.CharField(max_length=200, blank=True, help_text="Why e-mails stopped, as the provider said.")
    text_problem = models.CharField(max_length=200, blank=True,
                                    help_text="Why texts are not sent: the number replied STOP, or could not be "
                                              "reached. Notices go by e-mail or paper instead.")
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    def __str__(self) -> str:
        return f"Notice preferences of {self.account}"

    @property
    def texts_allowed(self) -> bool:
        return self.by_text and bool(self.text_number) and not self.text_problem


class TextConsent(models.Model):
    """A customer's consent to text messages, kept as given: the words they agreed to, when, for which number and
    by whom; and when and how it ended (a STOP reply, the portal)."""

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="text_consents")
    number = models.CharField(max_length=16)
    words = models.TextField()
    given_at = models.DateTimeField()
    given_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="+")
    given_how = models.CharField(max_length=40, default="portal")
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_how = models.CharField(max_length=60, blank=True)

    class Meta:
        ordering = ["-given_at", "-id"]

    def __str__(self) -> str:
        return f"Consent to texts at {self.number} ({self.account})"


class TextNumber(models.Model):
    """A mobile number as a number, whoever gave it: whether it replied STOP. A number that said STOP gets no text
    from any account, and only START from the number itself starts texts to it again."""

    number = models.CharField(max_length=16, unique=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    stopped_how = models.CharField(max_length=60, blank=True)
    started_at = models.DateTimeField(null=True, blank=True, help_text="The last START from the number.")

    class Meta:
        ordering = ["number"]

    def __str__(self) -> str:
        return self.number


class TextVerification(models.Model):
    """A code texted to a number a customer gave, to show the number is theirs before texts start: consent to texts
    is recorded only once the code comes back (so no one can sign another's phone up)."""

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="text_verifications")
    number = models.CharField(max_length=16)
    code_digest = models.CharField(max_length=64)
    words = models.TextField(help_text="The consent words the customer agreed to when asking for the code.")
    asked_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="+")
    sent_at = models.DateTimeField()
    tries = models.PositiveSmallIntegerField(default=0)
    confirmed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-sent_at", "-id"]

    def __str__(self) -> str:
        return f"Code to {self.number} for {self.account}"


class NoticeTemplate(models.Model):
    """The office's own words for one notice in one language: its subject and text, with the variables its kind
    offers (``notices.wording``). Where there is none, the shipped words are used. Every change is kept. The legal
    papers (a termination notice, a determination) are the ordinance's and are not worded here."""

    kind = models.CharField(max_length=30, choices=CustomerNotice.Kind.choices)
    language = models.CharField(max_length=5, choices=settings.LANGUAGES)
    subject = models.CharField(max_length=200, help_text="One line; the variables below may be used.")
    body = models.TextField(help_text="The text; the variables below may be used, as {{ amount }}.")
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["kind", "language"]
        verbose_name = "notice wording"
        constraints = [models.UniqueConstraint(fields=["kind", "language"], name="one_wording_per_notice_language")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.get_language_display()})"
