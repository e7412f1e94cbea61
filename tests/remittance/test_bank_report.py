"""The bank's BAI2 report read whole before anything is kept: every bad input refused with the report's line in a
clerk's words, nothing saved, and the bank-deposit pages answering afterwards on either database; a customer's
bank bill-pay credit posted to the account its reference names, or queued; and the reconciliation's other
direction, online payments the processor never paid out."""

import io
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from billing.models import Payment
from core.errors import ApplicationError
from demo.bank_files import bai2_report
from remittance.bank import deposits_reconcile
from remittance.bank_report import bai2_import
from remittance.configured import processor_configured
from remittance.models import BankDeposit, OnlinePayment, PaymentException
from tests.portal.conftest import billed_account, customer
from tests.remittance.test_deposits import DAY

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: deposits reconciliation")]
TODAY = date(2026, 3, 3)


def refusal(report: str | bytes) -> list[tuple[int | None, str]]:
    with pytest.raises(ApplicationError) as caught:
        bai2_import(report, today=TODAY)
    assert not BankDeposit.objects.exists() and not Payment.objects.filter(source="billpay").exists()
    return [(error.line, error.message) for error in caught.value.errors]


GOOD = bai2_report(DAY, [("115", 22613, "LBX1", "LOCKBOX 1")])
LINES = GOOD.splitlines()  # 01, 02, 03, 16 (line 4), 49, 98, 99


def with_line(number: int, text: str) -> str:
    lines = list(LINES)
    lines[number - 1] = text
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("report", "line", "says"), [
    (bai2_report(DAY, [("115", 10 ** 13, "B", "HUGE")]), 4, "more than an amount can be here (at most "
                                                          "$9,999,999,999.99)"),
    (bai2_report(DAY, [("115", 10 ** 30, "B", "HUGER")]), 4, "is not an amount in cents"),
    (with_line(4, "16,115,-22613,0,LBX1,,LOCKBOX 1/"), 4, "has a sign; a detail's amount is unsigned — a credit "
                                                          "is never negative"),
    (with_line(4, "16,115,226.13,0,LBX1,,LOCKBOX 1/"), 4, "'226.13' is not an amount in cents (digits 0-9 only)"),
    (with_line(4, "16,115,22613,0,LBX1,,LOCK\x00BOX/"), 4, "contains a control character (U+0000)"),
    (with_line(4, "16,115,22613,0,LBX1,,LOCK\x1bBOX/"), 4, "the report was damaged in transfer"),
    (with_line(4, "16,1X5,22613,0,LBX1,,LOCKBOX/"), 4, "'1X5' is not a BAI2 type code"),
    (with_line(4, "16,115,22613,Q,LBX1,,LOCKBOX/"), 4, "'Q' is not a BAI2 funds type"),
    (with_line(4, f"16,115,22613,0,{'R' * 81},,LOCKBOX/"), 4, "the bank reference is 81 characters long"),
    (bai2_report(DAY + timedelta(days=400), [("115", 22613, "B", "LATER")]), 2,
     "the report is as of 2027-04-06, after tomorrow (2026-03-04)"),
    (with_line(2, "02,VILLAGE,021000021,1,261399,,USD,2/"), 2, "'261399' in the group header is not a date"),
    (with_line(2, "02,VILLAGE,021000021,1,260302,,CAD,2/"), 2, "the group reports in CAD; only US dollars"),
    (with_line(3, "03,123456789,EUR/"), 3, "the account reports in EUR"),
    (with_line(1, "01,021000021,VILLAGE,260302,0800,1,,,3/"), 1, "BAI version '3'"),
    (with_line(5, "49,22613,9/"), 5, "the account trailer gives the number of records as 9 but there are 3"),
    (with_line(5, "49,22600,3/"), 5, "the account trailer gives the control total as $226.00 but its records add "
                                     "up to $226.13"),
    (with_line(6, "98,22613,2,5/"), 6, "the group trailer gives the number of accounts as 2 but there are 1"),
    (with_line(7, "99,22613,1,X/"), 7, "'X' in the file trailer is not a whole number"),
    (with_line(4, "17,115,22613,0,LBX1,,LOCKBOX/"), 4, "'17,115,22613' is not a BAI2 record"),
    (with_line(4, "98,22613,1,5/"), 4, "a group trailer (98) cannot come after the account header (03): the "
                                       "report is out of order"),
    ("\n".join(LINES[:5]) + "\n", 5, "the report ends at line 5 without its file trailer (99): it was cut short"),
    ("88,CONTINUED/\n" + GOOD, 1, "a continuation (88) with no record above it"),
    (GOOD.encode().replace(b"LOCKBOX 1", b"LOCKBOX \xe9"), 4, "byte 0xE9 is not plain text"),
])
def test_every_bad_input_is_refused_with_its_line_and_nothing_is_kept(mineola, report, line, says, admin_client):
    errors = refusal(report)
    assert any(at == line and says in message for at, message in errors), errors
    assert all("Traceback" not in m and "invalid literal" not in m and "Exception" not in m for _, m in errors)
    assert admin_client.get(reverse("admin:remittance_bankdeposit_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:deposits"), {"on": DAY.isoformat()}).status_code == 200


def test_the_command_lists_every_problem_with_its_line(mineola, tmp_path):
    report = tmp_path / "bad.bai"
    report.write_text(GOOD.replace("16,115,22613", "16,115,-22613").replace("49,22613,3", "49,22613,4"))
    with pytest.raises(CommandError) as caught:
        call_command("import_bai2", str(report), stdout=io.StringIO())
    assert str(caught.value).splitlines()[1:] == [
        "  line 4: amount: '-22613' has a sign; a detail's amount is unsigned — a credit is never negative (a debit "
        "has a debit type code) — ask the bank to send the report again"]
    assert "refused, nothing was read" in str(caught.value)


def test_a_report_of_tomorrow_and_a_continued_text_are_read(mineola):
    report = bai2_report(TODAY + timedelta(days=1), [("115", 100, "B1", "LOCKBOX")]).replace(
        "LOCKBOX/", "LOCKBOX\n88,DEPOSIT 7/").replace("49,100,3", "49,100,4").replace("98,100,1,5", "98,100,1,6")
    report = report.replace("99,100,1,7", "99,100,1,8")
    assert bai2_import(report, today=TODAY).added == 1
    assert BankDeposit.objects.get().text == "LOCKBOX DEPOSIT 7"


@pytest.fixture
def accounts(mineola, media):
    return billed_account(), billed_account()


def test_a_bill_pay_credit_posts_to_the_account_its_reference_names_and_another_is_queued(accounts, admin_client):
    first, second = accounts
    dashless = second.account_no.replace("-", "")
    report = bai2_report(DAY, [("165", 18613, "T1", "RPPS BILL PAYMENT"), ("165", 5000, "T2", "CHECKFREE"),
                               ("165", 7500, "T3", "RPPS LUMP SUM"), ("165", 1200, "T4", "BILL PAY 99999")])
    report = report.replace("16,165,18613,0,T1,", f"16,165,18613,0,T1,{first.account_no}") \
        .replace("16,165,5000,0,T2,", f"16,165,5000,0,T2,{dashless}")
    result = bai2_import(report, today=TODAY)
    assert (result.added, result.billpay_posted, result.billpay_queued) == (4, 2, 2)
    assert "bill pay: 2 posted, 2 to the exceptions queue" in str(result)
    paid = {p.account_id: (p.amount.amount, p.tender, p.source, p.paid_on) for p in Payment.objects.filter(
        source="billpay")}
    assert paid == {first.pk: (Decimal("186.13"), "bill_pay", "billpay", DAY),
                    second.pk: (Decimal("50.00"), "bill_pay", "billpay", DAY)}
    assert BankDeposit.objects.filter(channel="billpay", payment__isnull=False).count() == 2
    queued = {e.amount.amount: e.reason for e in PaymentException.objects.filter(source="billpay")}
    assert queued[Decimal("75.00")].startswith("the bank's credit names no account")
    assert queued[Decimal("12.00")].startswith("the bank's credit names no account")
    assert bai2_import(report, today=TODAY).added == 0  # read again: nothing more posted or queued
    assert Payment.objects.filter(source="billpay").count() == 2 and PaymentException.objects.count() == 2
    lines = {line.channel: (line.expected, line.deposited) for line in deposits_reconcile(on=DAY).lines}
    assert lines["billpay"] == (Decimal("323.13"), Decimal("323.13"))
    exception = PaymentException.objects.get(amount=Decimal("75.00"))
    page = admin_client.get(reverse("admin:remittance_paymentexception_change", args=[exception.pk]))
    assert page.status_code == 200


def test_a_bill_pay_credit_naming_an_unknown_account_is_queued_with_the_reference(accounts):
    report = bai2_report(DAY, [("165", 18613, "T1", "RPPS")]).replace("16,165,18613,0,T1,", "16,165,18613,0,T1,77-7777")
    assert bai2_import(report, today=TODAY).billpay_queued == 1
    assert PaymentException.objects.get().reason == "the reference '77-7777' names no account of ours"
    assert PaymentException.objects.get().tender == "bill_pay"


def paid_online(standin, account, amount: str, paid: datetime) -> OnlinePayment:
    user = customer(f"c{account.pk}@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    client.post(reverse("remittance:pay_linked", kwargs={"public_id": account.public_id}), {"amount": amount})
    online = OnlinePayment.objects.get(account=account)
    event = standin.complete(online.checkout_id, created=int(paid.timestamp()))
    Client().post("/pay/webhook/stripe/", event, content_type="application/json",
                  HTTP_STRIPE_SIGNATURE=standin.signed(event))
    online.refresh_from_db()
    assert online.payment is not None
    return online


def test_an_online_payment_the_processor_never_paid_out_is_listed_after_its_usual_delay(accounts, standin, settings,
                                                                                       tmp_path):
    settings.PROCESSOR_PAYOUT_DAYS = 4
    first, second = accounts
    paid_out = paid_online(standin, first, "100.00", datetime(2026, 3, 1, 15, tzinfo=UTC))
    missing = paid_online(standin, second, "40.00", datetime(2026, 3, 1, 16, tzinfo=UTC))
    standin.payout([paid_out.checkout_id], arrival=int(datetime(2026, 3, 3, tzinfo=UTC).timestamp()))
    processor = processor_configured()
    assert deposits_reconcile(on=date(2026, 3, 4), processor=processor).not_paid_out == []  # within the delay
    result = deposits_reconcile(on=date(2026, 3, 5), processor=processor)
    assert [o.pk for o in result.not_paid_out] == [missing.pk] and not result.matches
    out = io.StringIO()
    call_command("reconcile_deposits", "--date", "2026-03-05", stdout=out)
    assert (f"posted online, in no payout since: {missing.payment.reference} $40.00 paid 2026-03-01 by account "
            f"{second.account_no}") in out.getvalue()
    standin.payout([missing.checkout_id], arrival=int(datetime(2026, 3, 6, tzinfo=UTC).timestamp()))
    assert deposits_reconcile(on=date(2026, 3, 6), processor=processor).not_paid_out == []
