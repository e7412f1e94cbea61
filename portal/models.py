"""Design overview: the customer portal's own records.

A customer is a Django user whose username is their email. They reach an account only through an
``accounts.PortalLink`` made by typing the account number and the access code printed on the bill.
Failed linking attempts are kept here (per user and per address) so throttling holds across every web
worker, and a clerk can see who is guessing codes. ``BillNotice`` records each paperless email sent, so
sending again after a crash or a second call never emails a customer twice about one bill.
"""

from django.conf import settings
from django.db import models


class LinkFailure(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    account_no = models.CharField(max_length=40, blank=True, help_text="What was typed (it may not exist).")
    attempted_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-attempted_at"]
        indexes = [models.Index(fields=["user", "attempted_at"], name="link_failure_user_time")]

    def __str__(self) -> str:
        return f"{self.user} tried {self.account_no!r} at {self.attempted_at:%Y-%m-%d %H:%M}"


class BillNotice(models.Model):
    """A paperless customer was emailed a link to a bill."""

    bill = models.ForeignKey("billing.Bill", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    email = models.EmailField()
    sent_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["bill", "user"], name="one_bill_notice_per_user")]

    def __str__(self) -> str:
        return f"Bill {self.bill_id} to {self.email}"
