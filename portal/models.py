"""Design overview: the customer portal's own records.

A customer is a Django user whose username is their email. They reach an account only through an
``accounts.PortalLink`` made by typing the account number and the access code printed on the bill.
Failed linking attempts are kept here (per user and per address) so throttling holds across every web
worker, and a clerk can see who is guessing codes. ``BillNotice`` records each paperless email sent (to a
customer signed up online, or to the owner's address on file), so sending again after a crash or a second
call never emails an address twice about one bill.
Sign-up requests are counted per client address and window of time (``SignUpCount``), one row each,
so the count is exact on every web worker.
"""

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower


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


class SignUpCount(models.Model):
    """Sign-up requests from one client address within one throttling window (each sends an email)."""

    ip_address = models.CharField(max_length=45, blank=True, help_text="Blank when the server was not told.")
    window_start = models.DateTimeField(db_index=True)
    requests = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["ip_address", "window_start"],
                                               name="one_sign_up_count_per_address_and_window")]

    def __str__(self) -> str:
        return f"{self.requests} sign-up(s) from {self.ip_address or 'an unknown address'} " \
               f"from {self.window_start:%Y-%m-%d %H:%M}"


class BillNotice(models.Model):
    """A paperless bill was emailed to an address: a customer's signed up online, or the owner's on file."""

    bill = models.ForeignKey("billing.Bill", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="+", help_text="The customer signed up online; blank for the owner's "
                                                         "address on file.")
    email = models.EmailField()
    sent_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(Lower("email"), "bill", name="one_bill_notice_per_address")]

    def __str__(self) -> str:
        return f"Bill {self.bill_id} to {self.email}"
