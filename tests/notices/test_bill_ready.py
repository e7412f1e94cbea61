"""Bill ready: the day a bill is issued, its customer hears it is ready, with its total, the balance with it and its
due date; by text where they consented, by e-mail where the bill comes on paper (a paperless customer's e-mail
carries the bill itself), never on paper; once.

Mineola's example: 62,500 gal billed $186.13 on 2026-02-01, due March 1."""

import io
import json
from datetime import date

import pytest
from django.core import mail
from django.core.management import call_command

from notices import sms
from notices.models import CustomerNotice, NoticePreference
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db
READY = CustomerNotice.Kind.BILL_READY


def billed(account_no: str, *, email="", paperless=False, language="en"):
    account, meter = account_with_meter(book=1, account_no=account_no)
    account.owner.email = email
    account.owner.save()
    account.paperless, account.language = paperless, language
    account.save()
    read(meter, date(2026, 1, 12), 1_062_500)
    return account


@pytest.fixture
def notices(django_capture_on_commit_callbacks):
    def run_notices(day: str) -> dict:
        out = io.StringIO()
        with django_capture_on_commit_callbacks(execute=True):
            call_command("notices", "--date", day, "--json", stdout=out)
        return json.loads(out.getvalue())
    return run_notices


def test_the_bill_ready_notice_goes_the_day_the_bill_is_issued_each_way_once(mineola, notices):
    paper = billed("1-0001", email="paper@example.com")
    texted = billed("1-0002", paperless=True, email="paperless@example.com")
    NoticePreference.objects.create(account=texted, by_text=True, text_number="+15165550100")
    nothing = billed("1-0003")  # no e-mail, no texts: the paper bill is all
    run("run_billing", "--date", "2026-02-01")
    assert notices("2026-01-31")["notices"] == []
    found = notices("2026-02-01")
    ready = [n for n in found["notices"] if n["kind"] == "bill_ready"]
    assert [(n["account_no"], n["amount"], n["balance"], n["due_date"]) for n in ready] == [
        ("1-0001", "186.13", "186.13", "2026-03-01"), ("1-0002", "186.13", "186.13", "2026-03-01"),
        ("1-0003", "186.13", "186.13", "2026-03-01")]
    told = sorted(CustomerNotice.objects.filter(kind=READY).values_list("account__account_no", "channel"))
    assert told == [("1-0001", "email"), ("1-0002", "text")]
    email = CustomerNotice.objects.get(account=paper, kind=READY)
    assert email.subject == "Your water bill for account 1-0001 is ready"
    assert "This bill: $186.13" in email.body and "Due: March 1, 2026" in email.body and "/portal/bills/" in email.body
    assert "Your water bill for account 1-0002 is ready" in sms.outbox[-1]["body"]
    assert not CustomerNotice.objects.filter(account=nothing).exists()
    sent = len(mail.outbox)
    assert notices("2026-02-01")["given"] == 0 and len(mail.outbox) == sent  # once


def test_bill_ready_in_spanish_and_turned_off(mineola, notices):
    spanish = billed("1-0001", email="es@example.com", language="es")
    off = billed("1-0002", email="off@example.com")
    NoticePreference.objects.create(account=off, kinds_off=["bill_ready"])
    run("run_billing", "--date", "2026-02-01")
    notices("2026-02-01")
    (notice,) = CustomerNotice.objects.filter(kind=READY)
    assert notice.account == spanish and notice.language == "es"
    assert notice.subject == "Su factura de agua de la cuenta 1-0001 está lista" and "1 de marzo de 2026" in notice.body
