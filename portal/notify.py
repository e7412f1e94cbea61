"""Paperless bills: an email with the new bill's amounts and a link to it, once per bill and address."""


from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from billing.models import Bill
from core.dates import fmt_long_day
from core.i18n import customer_language
from notices.services import addresses_by_account

from .models import BillNotice


def bills_issued_notify(bill_ids) -> int:
    """Email each paperless account's new bill to its customers linked online and to the owner's address on
    file; returns emails sent. The owner not yet signed up is told how to (account number and access code, as
    on a paper bill).

    Safe to call twice: a ``BillNotice`` row (unique per bill and address) is written before sending, and
    removed again if the mail server refuses, so a retry sends what did not go.
    """
    bills = {b.id: b for b in Bill.objects.filter(pk__any=list(bill_ids), account__paperless=True)
             .exclude(status=Bill.Status.VOID).select_related("account__premises", "account__owner")}
    if not bills:
        return 0
    by_account = addresses_by_account({b.account_id: b.account for b in bills.values()}.values())
    site = settings.SITE_URL.rstrip("/")
    from billing.figures import bill_figures
    from billing.ordinance import ordinance_on
    from billing.selectors import bill_messages

    ordinance = ordinance_on(max(b.bill_date for b in bills.values()))
    utility = ordinance.utility
    # The money box the bill's PDF prints, kept with the bill: read, not replayed from the ledger.
    summaries = bill_figures(bills=list(bills.values()), ordinance=ordinance)
    messages = bill_messages(bills.values())
    sent = 0
    with get_connection() as connection:
        for bill in bills.values():
            for email, user in by_account.get(bill.account_id, []):
                try:
                    with transaction.atomic():
                        notice = BillNotice.objects.create(bill=bill, user=user, email=email, sent_at=timezone.now())
                except IntegrityError:
                    continue  # already told about this bill
                with customer_language(bill.account):  # in the account's language, as its bill
                    context = {"bill": bill, "account": bill.account, "utility": utility,
                               "signed_up": user is not None,
                               "url": site + reverse("portal:bill", kwargs={"public_id": bill.public_id}),
                               "signup_url": site + reverse("portal:signup"),
                               "bill_date": fmt_long_day(bill.bill_date), "due_date": fmt_long_day(bill.due_date),
                               "late_after": fmt_long_day(summaries[bill.pk].late_after),
                               "summary": summaries[bill.pk], "message": messages.get(bill.pk, ""),
                               "previous_date": fmt_long_day(summaries[bill.pk].previous_date)
                               if summaries[bill.pk].previous_date else ""}
                    message = EmailMessage(
                        subject=_("Your water bill for account %(number)s is ready") % {
                            "number": bill.account.account_no},
                        body=render_to_string("portal/email/bill_ready.txt", context),
                        to=[email], connection=connection)
                try:
                    message.send()
                except Exception:
                    notice.delete()
                    raise
                sent += 1
    return sent


def bills_emailed_counts(bill_ids) -> tuple[int, int, int]:
    """Of these bills: how many are to be e-mailed (paperless with an address), how many have gone to at least one
    address, and how many e-mails went."""
    from accounts.selectors import emailed_bills

    to_email = Bill.objects.filter(pk__any=list(bill_ids)).exclude(status=Bill.Status.VOID).filter(
        emailed_bills("account__"))
    notices = BillNotice.objects.filter(bill__in=to_email)
    return to_email.count(), notices.values("bill").distinct().count(), notices.count()
