"""The same check twice: a lockbox check with the same account, check number and amount as another in the file (two
item numbers for one check) or as a payment posted in the last ``DUPLICATE_CHECK_DAYS`` days goes to the exceptions
queue naming the other; the reconciliation names the item behind the gap; a clerk posts what is owed, a supervisor
what is more (docs/architecture.md, event table)."""

from datetime import date
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from billing.models import Payment
from demo.bank_files import bai2_report
from remittance.bank import deposits_reconcile
from remittance.bank_report import bai2_import
from remittance.lockbox import lockbox_import
from remittance.models import PaymentException
from tests.office.conftest import staff
from tests.portal.conftest import billed_account

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: lockbox")]
HEADER = "deposit_date,batch,item,amount,check_number,scan_line\n"
DAY = date(2026, 2, 24)


def scan(bill) -> str:
    return f"{bill.account.account_no}  {bill.number}  {18613:010d}  {19544:010d}"


@pytest.fixture
def bill(mineola, media):
    return billed_account().bills.get()


def test_one_check_under_two_item_numbers_posts_once(bill):
    text = HEADER + (f"{DAY},7,1,61.00,3101,{scan(bill)}\n"
                     f"{DAY},7,2,61.00,3101,{scan(bill)}\n")
    result = lockbox_import(file=text.encode(), as_of=DAY)
    assert (result.posted, result.exceptions) == (1, 1)
    assert list(Payment.objects.values_list("reference", flat=True)) == ["LBX-20260224-7-1"]
    held = PaymentException.objects.get()
    assert held.reference == "LBX-20260224-7-2"
    assert held.reason.startswith("the same account, check number and amount as line 2 (LBX-20260224-7-1): one check "
                                  "read twice, or two checks?")
    # The bank deposited $61.00; the reconciliation expects both items and names the one held.
    bai2_import(bai2_report(DAY, [("115", 6100, "LBX1", "LOCKBOX 1")]))
    lockbox = {line.channel: line for line in deposits_reconcile(on=DAY).lines}["lockbox"]
    assert (lockbox.expected, lockbox.deposited) == (Decimal("122.00"), Decimal("61.00"))
    assert "held as the same check read twice: LBX-20260224-7-2 ($61.00)" in lockbox.detail


def test_a_check_deposited_again_within_the_window_is_held(bill):
    lockbox_import(file=(HEADER + f"{DAY},7,1,61.00,3101,{scan(bill)}\n").encode(), as_of=DAY)
    later = date(2026, 3, 10)
    result = lockbox_import(file=(HEADER + f"{later},2,1,61.00,3101,{scan(bill)}\n").encode(), as_of=later)
    assert (result.posted, result.exceptions) == (0, 1)
    assert PaymentException.objects.get().reason.startswith(
        "the same account, check number and amount as payment LBX-20260224-7-1, posted in the last 45 days")
    # Another check number, or the same one for another amount, is another check.
    result = lockbox_import(file=(HEADER + f"{later},2,2,61.00,3102,{scan(bill)}\n"
                                           f"{later},2,3,20.00,3101,{scan(bill)}\n").encode(), as_of=later)
    assert (result.posted, result.exceptions) == (2, 0)


def test_the_clerk_posts_what_is_owed_and_the_supervisor_what_is_more(bill):
    text = HEADER + f"{DAY},8,1,500.00,4001,\n{DAY},8,2,100.00,4002,\n"
    lockbox_import(file=text.encode(), as_of=DAY)
    large, small = PaymentException.objects.order_by("reference")
    clerk = Client()
    clerk.force_login(staff("clara", "Clerk"))
    url = reverse("admin:remittance_paymentexception_change", args=[large.pk])
    refused = clerk.post(url, {"post_to": bill.account.account_no, "resolution": ""})
    assert refused.status_code == 200
    assert (f"$500.00 is more than account {bill.account.account_no} owed on 2026-02-24 ($186.13): the rest would "
            "stand as a credit, so a supervisor posts it") in refused.content.decode()
    small_url = reverse("admin:remittance_paymentexception_change", args=[small.pk])
    assert clerk.post(small_url, {"post_to": bill.account.account_no, "resolution": "payer's letter"}).status_code \
        == 302
    supervisor = Client()
    supervisor.force_login(staff("sam", "Supervisor"))
    assert supervisor.post(url, {"post_to": bill.account.account_no, "resolution": "called"}).status_code == 302
    assert sorted(Payment.objects.values_list("amount", flat=True)) == [Decimal("100.00"), Decimal("500.00")]
