"""Every message once, true when it goes: two senders at once send each notice once; a message the provider refuses
is tried again with backoff, then left failed on the account's Notices tab with a clerk's "send again" and "send on
paper instead", every try recorded; a notice whose fact was undone overnight is withdrawn, never sent."""

import smtplib
import threading
import time
from datetime import datetime, timedelta
from decimal import Decimal
from unittest import mock
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.core.mail import EmailMessage
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from billing.services.payments import payment_post
from notices.models import CustomerNotice, NoticeAttempt
from notices.services import NOTICE_ATTEMPTS, notice_send, notices_send_waiting
from tests.billing.test_concurrency import in_threads
from tests.factories import AccountFactory
from tests.office.conftest import staff
from tests.portal.conftest import billed_account

NY = ZoneInfo("America/New_York")
MORNING = datetime(2026, 3, 2, 8, 5, tzinfo=NY)


def waiting_notice(account, n: int, **fields) -> CustomerNotice:
    return CustomerNotice.objects.create(**{
        "account": account, "kind": "bill_ready", "fact": f"bill-ready-test:{n}", "language": "en",
        "channel": "email", "sent_to": f"owner{n}@example.org", "subject": f"Your bill {n}", "body": "A new bill.",
        "send_after": MORNING - timedelta(hours=1), **fields})


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_senders_at_once_send_each_notice_once():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL): SQLite serializes writers, so there is no race to test")
    notices = [waiting_notice(AccountFactory(), n) for n in range(10)]
    sent, real_send, lock = [], EmailMessage.send, threading.Lock()

    def slow_send(message, *args, **kwargs):  # the provider takes its time, so the senders overlap
        time.sleep(0.05)
        with lock:
            sent.append(message.to[0])
        return 1

    with mock.patch.object(EmailMessage, "send", slow_send):
        counts = []
        in_threads(*[lambda: counts.append(notices_send_waiting(now=MORNING)) for _ in range(3)])
    assert sorted(sent) == sorted(n.sent_to for n in notices)  # ten messages for ten notices
    assert sum(counts) == 10 and CustomerNotice.objects.filter(sent_at__isnull=True).count() == 0
    assert NoticeAttempt.objects.filter(sent=True).count() == 10
    assert real_send is EmailMessage.send


@pytest.mark.django_db
def test_a_refused_message_is_tried_again_then_failed_then_sent_again_by_the_clerk(mineola, client):
    account = billed_account()
    notice = waiting_notice(account, 1)
    refused = smtplib.SMTPRecipientsRefused({"owner1@example.org": (550, b"mailbox unavailable")})
    now = MORNING
    with mock.patch.object(EmailMessage, "send", side_effect=refused):
        for attempt in range(1, NOTICE_ATTEMPTS + 1):
            assert notices_send_waiting(now=now) == 0
            notice.refresh_from_db()
            assert notice.attempts == attempt and "mailbox unavailable" in notice.error
            if attempt < NOTICE_ATTEMPTS:
                # Backoff: not tried again before its time, then tried.
                assert notice.next_try_at == now + timedelta(minutes=5 * 2 ** (attempt - 1))
                assert notices_send_waiting(now=now + timedelta(minutes=1)) == 0
                assert CustomerNotice.objects.get(pk=notice.pk).attempts == attempt
                now = notice.next_try_at
    notice.refresh_from_db()
    assert notice.failed_at is not None and notice.state.startswith(f"failed after {NOTICE_ATTEMPTS} tries")
    assert NoticeAttempt.objects.filter(notice=notice, sent=False).count() == NOTICE_ATTEMPTS
    assert notices_send_waiting(now=now + timedelta(days=1)) == 0  # left for the clerk
    client.force_login(staff("clara", "Clerk"))
    page = client.get(reverse("admin:accounts_account_change", args=[account.pk])).content.decode()
    assert "failed after 5 tries" in page and "Send again" in page and "Send on paper instead" in page
    shown = client.get(reverse("admin:notices_customernotice_change", args=[notice.pk])).content.decode()
    assert shown.count("mailbox unavailable") >= NOTICE_ATTEMPTS  # every try, with the provider's answer
    response = client.post(reverse("admin:notices_customernotice_send_again", args=[notice.pk]))
    assert response.status_code == 302
    notice.refresh_from_db()
    assert notice.sent_at is not None and mail.outbox[-1].to == ["owner1@example.org"]
    assert NoticeAttempt.objects.filter(notice=notice).count() == NOTICE_ATTEMPTS + 1
    # Another that failed goes on paper instead: the same words, to print and mail.
    other = waiting_notice(account, 2, error="mailbox unavailable", failed_at=timezone.now(), attempts=5)
    client.post(reverse("admin:notices_customernotice_on_paper", args=[other.pk]))
    paper = CustomerNotice.objects.get(fact=other.fact, channel="paper")
    assert paper.subject == other.subject and paper.sent_at is None and account.owner.name in paper.sent_to
    assert "sent on paper instead" in CustomerNotice.objects.get(pk=other.pk).error


@pytest.mark.django_db
def test_a_notice_whose_fact_was_undone_overnight_is_withdrawn(mineola):
    from django.core.management import call_command

    from tests.billing.steps import run

    account = billed_account()  # $186.13 dated 2026-02-01, due 2026-03-01
    run("assess_penalties", "--date", "2026-03-02")
    with mock.patch.object(timezone, "now", return_value=datetime(2026, 3, 2, 1, 30, tzinfo=NY)):
        call_command("notices", "--date", "2026-03-02", stdout=__import__("io").StringIO())
    late = CustomerNotice.objects.get(kind="late_notice", channel="email")
    assert late.sent_at is None  # the quiet hours: it waits for the morning
    # In the night the customer pays everything (a dispute won, a payment found): the morning sends nothing.
    owed = Decimal("186.13") + Decimal("100")  # more than enough: a credit is left
    payment_post(account_no=account.account_no, amount=owed, paid_on=datetime(2026, 3, 2).date(), reference="NIGHT")
    assert notices_send_waiting(now=MORNING) == 0
    late.refresh_from_db()
    assert late.sent_at is None and late.withdrawn_at is not None and "nothing is owed on bill" in late.withdrawn_why
    assert mail.outbox == [] and late.state.startswith("withdrawn")
    assert notice_send(late, now=MORNING) is False  # and it stays withdrawn
