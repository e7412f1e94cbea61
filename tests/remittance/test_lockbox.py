"""The lockbox detail file: checks matched by the bill stub's scan line posted once; the rest queued with why, and
resolved by a clerk in the admin (posted to the right account, or recorded as sent back)."""

import io
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from billing.models import Payment
from core.errors import ApplicationError
from remittance.lockbox import lockbox_import
from remittance.models import PaymentException
from tests.conversion.test_check import counts
from tests.portal.conftest import billed_account

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: lockbox")]
HEADER = "deposit_date,batch,item,amount,check_number,scan_line\n"


def scan(bill) -> str:
    """The stub's scan line as the bill prints it: account, bill, amount due and after the due date, in cents."""
    return f"{bill.account.account_no}  {bill.number}  {18613:010d}  {19544:010d}"


@pytest.fixture
def bills(mineola, media):
    return [billed_account().bills.get(), billed_account().bills.get()]


def test_checks_are_matched_by_the_scan_line_and_the_rest_queued(bills):
    one, two = bills
    text = HEADER + (f"2026-02-24,7,1,186.13,1001,{scan(one)}\n"
                     "2026-02-24,7,2,50.00,1002,\n"
                     f"2026-02-24,7,3,25.00,1003,9-99999  {one.number}  0000002500  0000002600\n"
                     f"2026-02-24,7,4,10.00,1004,{two.account.account_no}  {one.number}  0000001000  0000001100\n")
    result = lockbox_import(file=text.encode(), as_of=date(2026, 2, 25))
    assert (result.posted, result.exceptions, result.skipped) == (1, 3, 0)
    payment = Payment.objects.get()
    assert (payment.account, payment.amount.amount, payment.paid_on, payment.reference, payment.tender,
            payment.check_number, payment.source) == (one.account, Decimal("186.13"), date(2026, 2, 24),
                                                      "LBX-20260224-7-1", "check", "1001", "lockbox")
    reasons = dict(PaymentException.objects.values_list("reference", "reason"))
    assert reasons == {"LBX-20260224-7-2": "no scan line (no stub in the envelope)",
                       "LBX-20260224-7-3": "account 9-99999 on the stub is not one of ours",
                       "LBX-20260224-7-4": f"bill {one.number} on the stub is not account {two.account.account_no}'s"}
    again = lockbox_import(file=text.encode(), as_of=date(2026, 2, 25))
    assert (again.posted, again.exceptions, again.skipped) == (0, 0, 4)


def test_a_bad_file_is_refused_naming_each_problem(bills, tmp_path):
    path = tmp_path / "lockbox.csv"
    path.write_text(HEADER + "2026-02-31,7,1,186.13,1001,x\n2026-02-24,7,2,12.3.4,1002,y\n")
    before = counts()
    err = io.StringIO()
    with pytest.raises(CommandError, match="rejected with 2 error"):
        call_command("import_lockbox", str(path), "--date", "2026-02-25", stdout=io.StringIO(), stderr=err)
    assert "line 2: deposit_date:" in err.getvalue() and "line 3: amount:" in err.getvalue()
    assert counts() == before


def test_a_clerk_posts_a_queued_check_to_its_account_or_records_it_sent_back(bills, admin_client):
    one, two = bills
    text = HEADER + "2026-02-24,8,1,40.00,2001,\n2026-02-24,8,2,15.00,2002,unreadable\n"
    lockbox_import(file=text.encode(), as_of=date(2026, 2, 25))
    first, second = PaymentException.objects.order_by("reference")
    url = reverse("admin:remittance_paymentexception_change", args=[first.pk])
    refused = admin_client.post(url, {"post_to": "9-99999", "resolution": ""})
    assert refused.status_code == 200 and "unknown account" in refused.content.decode()
    assert admin_client.post(url, {"post_to": two.account.account_no, "resolution": "payer's letter"}).status_code == 302
    first.refresh_from_db()
    assert first.status == "posted" and first.payment.account == two.account
    assert (first.payment.paid_on, first.payment.amount.amount) == (date(2026, 2, 24), Decimal("40.00"))
    url = reverse("admin:remittance_paymentexception_change", args=[second.pk])
    assert admin_client.post(url, {"sent_back": "on", "resolution": ""}).status_code == 200  # how, please
    assert admin_client.post(url, {"sent_back": "on", "resolution": "check mailed back 2/26"}).status_code == 302
    second.refresh_from_db()
    assert (second.status, second.payment) == ("returned", None)
    # Resolved ones are read only.
    assert admin_client.post(url, {"post_to": one.account.account_no}).status_code == 403


def test_a_repeated_row_goes_to_the_queue_and_the_rest_of_the_file_posts(bills):
    one, two = bills
    text = HEADER + (f"2026-02-24,7,1,186.13,1001,{scan(one)}\n"
                     f"2026-02-24,7,2,186.13,1002,{scan(two)}\n"
                     f"2026-02-24,7,1,186.13,1001,{scan(one)}\n"
                     f"2026-02-24,7,1,186.13,1001,{scan(one)}\n")
    result = lockbox_import(file=text.encode(), as_of=date(2026, 2, 25))
    assert (result.posted, result.exceptions, result.skipped) == (2, 2, 0)
    assert sorted(Payment.objects.values_list("reference", flat=True)) == ["LBX-20260224-7-1", "LBX-20260224-7-2"]
    queued = dict(PaymentException.objects.values_list("reference", "reason"))
    assert sorted(queued) == ["LBX-20260224-7-1/2", "LBX-20260224-7-1/3"]
    assert queued["LBX-20260224-7-1/2"].startswith("the file repeats batch 7 item 1 of line 2")
    again = lockbox_import(file=text.encode(), as_of=date(2026, 2, 25))
    assert (again.posted, again.exceptions, again.skipped) == (0, 0, 4)


@pytest.mark.parametrize("batch", ["\u0661", "\uff17", "7\u200b", "-7", "7.0", "12345678901"])
def test_batch_and_item_are_ascii_digits(bills, batch):
    text = HEADER + f"2026-02-24,{batch},1,186.13,1001,\n2026-02-24,7,{batch},186.13,1001,\n"
    with pytest.raises(ApplicationError) as caught:
        lockbox_import(file=text.encode(), as_of=date(2026, 2, 25))
    assert [(e.line, e.field) for e in caught.value.errors] == [(2, "batch"), (3, "item")]
    assert "(one to ten digits 0-9)" in caught.value.errors[0].message
    assert not Payment.objects.exists() and not PaymentException.objects.exists()


def test_lookups_cross_chunks_without_losing_a_check(bills, monkeypatch):
    """Every lookup is made in chunks (a file of 400,000 checks is more than SQLite takes in one query); with
    chunks of two, five checks of two accounts still each find theirs."""
    import core.csvimport

    monkeypatch.setattr(core.csvimport.chunked, "__defaults__", (2,))
    one, two = bills
    rows = [f"2026-02-24,8,{n},{10 + n}.00,{2000 + n},{scan(one if n % 2 else two)}" for n in range(1, 6)]
    result = lockbox_import(file=(HEADER + "\n".join(rows) + "\n").encode(), as_of=date(2026, 2, 25))
    assert (result.posted, result.exceptions) == (5, 0)
    assert Payment.objects.filter(account=one.account).count() == 3
    assert lockbox_import(file=(HEADER + "\n".join(rows) + "\n").encode(), as_of=date(2026, 2, 25)).skipped == 5
