"""Paperless bills: an email with a link to the new bill, once per bill and customer."""

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from accounts.models import PortalLink
from billing.models import Bill

from .models import BillNotice


def _day(d) -> str:
    return f"{d:%B} {d.day}, {d:%Y}"


def bills_issued_notify(bill_ids) -> int:
    """Email every customer linked to a paperless account about its new bill; returns emails sent.

    Safe to call twice: a ``BillNotice`` row (unique per bill and customer) is written before sending,
    and removed again if the mail server refuses, so a retry sends what did not go.
    """
    bills = {b.id: b for b in Bill.objects.filter(pk__any=list(bill_ids), account__paperless=True)
             .exclude(status=Bill.Status.VOID).select_related("account__premises")}
    if not bills:
        return 0
    links = (PortalLink.objects.filter(account_id__any=list({b.account_id for b in bills.values()}))
             .exclude(user__email="").filter(user__is_active=True).select_related("user"))
    by_account: dict[int, list] = {}
    for link in links:
        by_account.setdefault(link.account_id, []).append(link.user)
    site = settings.SITE_URL.rstrip("/")
    from billing.ordinance import ordinance_on
    from billing.selectors import bill_summaries

    utility = ordinance_on(max(b.bill_date for b in bills.values())).utility
    summaries = bill_summaries(bills=list(bills.values()))
    sent = 0
    with get_connection() as connection:
        for bill in bills.values():
            for user in by_account.get(bill.account_id, []):
                try:
                    with transaction.atomic():
                        notice = BillNotice.objects.create(bill=bill, user=user, email=user.email,
                                                           sent_at=timezone.now())
                except IntegrityError:
                    continue  # already told about this bill
                context = {"bill": bill, "account": bill.account, "utility": utility,
                           "url": site + reverse("portal:bill", kwargs={"public_id": bill.public_id}),
                           "bill_date": _day(bill.bill_date), "due_date": _day(bill.due_date),
                           "late_after": _day(summaries[bill.pk].late_after),
                           "summary": summaries[bill.pk], "previous_date": _day(summaries[bill.pk].previous_date)
                           if summaries[bill.pk].previous_date else ""}
                message = EmailMessage(
                    subject=f"Your water bill for account {bill.account.account_no} is ready",
                    body=render_to_string("portal/email/bill_ready.txt", context),
                    to=[user.email], connection=connection)
                try:
                    message.send()
                except Exception:
                    notice.delete()
                    raise
                sent += 1
    return sent
