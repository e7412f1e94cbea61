"""The notice before each autopay debit goes through the customer notices: e-mailed to the address given for autopay
whatever else the customer chose (the authorization promises it), texted where they consented, worded by the office,
logged on the account once, held through the quiet hours; and its debit waits until it has actually gone.

The account is Mineola's example: billed $186.13 on 2026-02-01, due March 1 (a Sunday: debited March 2)."""

from datetime import datetime
from unittest import mock
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.utils import timezone

from notices import sms
from notices.models import CustomerNotice, NoticePreference, NoticeTemplate
from notices.services import notices_send_waiting
from remittance.autopay import autopay_notices_send
from remittance.models import AutopayNotice

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: autopay")]
NY = ZoneInfo("America/New_York")
SCHEDULED = CustomerNotice.Kind.AUTOPAY_SCHEDULED


def test_the_notice_is_logged_once_and_emailed_to_the_autopay_address_even_with_e_mail_turned_off(enrolled):
    account, _, _ = enrolled
    NoticePreference.objects.create(account=account, by_email=False, by_text=True, text_number="+15165550100")
    account.owner.email = "owner@example.com"
    account.owner.save()
    bill = account.bills.get()
    assert autopay_notices_send([bill.pk]) == 1 and autopay_notices_send([bill.pk]) == 0
    email = CustomerNotice.objects.get(kind=SCHEDULED, channel="email")
    # Only the address given for autopay: the customer turned their other e-mail off.
    assert email.sent_to == "pat@example.org" and email.sent_at is not None
    assert "On March 2, 2026 we will debit $186.13 from your checking account ending 6789" in email.body
    text = CustomerNotice.objects.get(kind=SCHEDULED, channel="text")
    assert text.sent_to == "+15165550100" and "$186.13 will be debited" in sms.outbox[-1]["body"]
    assert not CustomerNotice.objects.filter(kind=SCHEDULED, channel="paper").exists()
    assert AutopayNotice.objects.get(bill=bill).sent_at == email.sent_at


def test_the_offices_wording_is_used_for_the_notice(enrolled):
    account, _, _ = enrolled
    NoticeTemplate.objects.create(kind=SCHEDULED, language="en", subject="Debit of {{ amount }} coming",
                                  body="We take {{ amount }} on {{ on }} from the account ending "
                                       "{{ enrolment.account_last4 }} for bill {{ bill.number }}.")
    bill = account.bills.get()
    autopay_notices_send([bill.pk])
    (message,) = [m for m in mail.outbox if m.subject.startswith("Debit")]
    assert message.subject == "Debit of $186.13 coming"
    assert message.body == f"We take $186.13 on March 2, 2026 from the account ending 6789 for bill {bill.number}."


def test_a_notice_held_through_the_quiet_hours_debits_nothing_until_it_goes(enrolled, settings):
    settings.NOTICES_QUIET_HOURS = (21, 8)
    account, _, _ = enrolled
    bill = account.bills.get()
    night = datetime(2026, 2, 2, 1, 30, tzinfo=NY)
    with mock.patch.object(timezone, "now", return_value=night):
        assert autopay_notices_send([bill.pk]) == 0
    notice = AutopayNotice.objects.get(bill=bill)
    assert notice.sent_at is None and not [m for m in mail.outbox if "Autopay" in m.subject]
    morning = datetime(2026, 2, 2, 8, 5, tzinfo=NY)
    with mock.patch.object(timezone, "now", return_value=morning):
        assert notices_send_waiting(now=morning) == 1
    notice.refresh_from_db()
    assert notice.sent_at == morning


def test_an_e_mail_the_server_refused_is_tried_again_and_only_then_counts(enrolled):
    account, _, _ = enrolled
    bill = account.bills.get()
    with mock.patch("notices.services.EmailMessage.send", side_effect=OSError("connection refused")):
        assert autopay_notices_send([bill.pk]) == 0
    failed = CustomerNotice.objects.get(kind=SCHEDULED)
    assert failed.error == "connection refused" and AutopayNotice.objects.get(bill=bill).sent_at is None
    assert autopay_notices_send([bill.pk]) == 1  # the task run again
    failed.refresh_from_db()
    assert failed.sent_at and failed.error == "" and AutopayNotice.objects.get(bill=bill).sent_at is not None
    assert CustomerNotice.objects.filter(kind=SCHEDULED).count() == 1


def test_a_debit_notice_held_overnight_is_withdrawn_when_autopay_ended_in_the_night(enrolled, settings):
    from remittance.models import AutopayEnrolment

    settings.NOTICES_QUIET_HOURS = (21, 8)
    account, _, _ = enrolled
    bill = account.bills.get()
    with mock.patch.object(timezone, "now", return_value=datetime(2026, 2, 2, 1, 30, tzinfo=NY)):
        autopay_notices_send([bill.pk])
    AutopayEnrolment.objects.filter(account=account).update(status=AutopayEnrolment.Status.CANCELLED)
    morning = datetime(2026, 2, 2, 8, 5, tzinfo=NY)
    assert notices_send_waiting(now=morning) == 0
    notice = CustomerNotice.objects.get(kind=SCHEDULED, channel="email")
    assert notice.sent_at is None and "autopay is no longer on" in notice.withdrawn_why
    assert AutopayNotice.objects.get(bill=bill).sent_at is None  # so nothing is debited under it
