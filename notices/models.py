"""What the office told a customer, once: each notice is kept with the fact it is about, the words sent in the
customer's language, and where it went (e-mail, or paper for the clerk to print and mail)."""

from django.db import models


class CustomerNotice(models.Model):
    class Kind(models.TextChoices):
        PAYMENT_RETURNED = "payment_returned", "Payment returned"
        PAYMENT_DISPUTED = "payment_disputed", "Payment disputed"
        AUTOPAY_SUSPENDED = "autopay_suspended", "Autopay suspended"
        CASE_REOPENED = "case_reopened", "Termination case reopened"
        PLAN_DEFAULTED = "plan_defaulted", "Payment plan ended: an installment missed"
        AUTOPAY_ENDED = "autopay_ended", "Autopay ended: the account closed"

    class Channel(models.TextChoices):
        EMAIL = "email", "E-mail"
        PAPER = "paper", "Paper (to print and mail)"

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="notices")
    kind = models.CharField(max_length=30, choices=Kind.choices)
    fact = models.CharField(max_length=120, help_text="What it is about (a reversal, a suspension…): told once.")
    language = models.CharField(max_length=10)
    channel = models.CharField(max_length=10, choices=Channel.choices)
    sent_to = models.TextField(blank=True, help_text="The addresses e-mailed, or the mailing address for paper.")
    subject = models.CharField(max_length=200)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True, help_text="E-mailed, or printed to mail; empty: not yet.")
    error = models.CharField(max_length=300, blank=True, help_text="Why the e-mail did not go.")

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["kind", "fact"], name="one_notice_per_fact")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} to {self.account} ({self.get_channel_display().lower()})"
