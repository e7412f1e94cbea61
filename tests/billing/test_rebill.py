"""Void a bill and bill it again in one step, its closing reading corrected: the worked example's misread
(1,062,500 keyed for 1,262,500) billed again at $956.13 from the corrected reading, issued the day of the void,
in no billing run; a corrected reading that breaks a rule voids nothing; a corrected reading that makes the
bill high is the Supervisor's review, not held again."""

from datetime import date
from decimal import Decimal as D

import pytest
from django.test import Client
from django.urls import reverse

from billing.models import Bill, BillingException, BillingRun
from billing.services.rebill import bill_rebill
from core.errors import ApplicationError
from meters.models import Reading
from tests.billing.steps import account_with_meter, pay, read, run, statement
from tests.office.conftest import staff

pytestmark = pytest.mark.django_db


def misread(mineola):
    """The worked example's bill, from a reading keyed 200,000 gal short, paid in full on 2026-02-20."""
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    pay(account, "186.13", "2026-02-20", "CHK-186")
    return account, meter, Bill.objects.get()


@pytest.mark.citation("§ 45.29 D")
def test_the_misread_bill_is_billed_again_from_the_corrected_reading_in_no_run(mineola):
    account, meter, bill = misread(mineola)
    runs = BillingRun.objects.count()
    done = bill_rebill(bill=bill, reason="reader keyed 1,062,500 for 1,262,500", reading=1_262_500,
                       as_of=date(2026, 3, 10), actor=None)
    # $45.00 + 30,000 × $3.10/1,000 = $93.00 + 212,500 × $3.85/1,000 = $818.13 → $956.13.
    new = done.bill
    assert (new.total.amount, new.gallons, new.number) == (D("956.13"), 262_500, f"{bill.number}-2")
    assert (new.bill_date, new.issued_on, new.due_date, new.run_id) == (
        date(2026, 2, 1), date(2026, 3, 10), date(2026, 4, 10), None)
    assert BillingRun.objects.count() == runs
    bill.refresh_from_db()
    assert bill.status == Bill.Status.VOID
    assert bill.void_reason.endswith("; the reading of Jan 12, 2026 corrected from 1,062,500 to 1,262,500")
    reading = Reading.objects.get(meter=meter, read_on=date(2026, 1, 12))
    assert reading.value == 1_262_500 and "corrected from 1,062,500" in reading.note
    assert reading.history.earliest("history_date").value == 1_062_500  # what was keyed, kept
    assert statement(account.account_no, "2026-03-10")["balance"] == "770.00"
    assert done.words == (f"Bill {bill.number} is void and bill {new.number} replaces it: $956.13 (was $186.13), "
                          "due Apr 10, 2026.")


def test_billed_again_without_a_reading_the_same_bill_comes_out(mineola):
    _, _, bill = misread(mineola)
    done = bill_rebill(bill=bill, reason="the bill was lost in the mail", as_of=date(2026, 3, 10), actor=None)
    assert done.bill.total.amount == D("186.13") and done.bill.number == f"{bill.number}-2"


def test_a_corrected_reading_that_breaks_a_rule_voids_nothing(mineola):
    account, meter, bill = misread(mineola)
    with pytest.raises(ApplicationError) as refused:
        bill_rebill(bill=bill, reason="typo", reading=900_000, as_of=date(2026, 3, 10), actor=None)
    assert refused.value.errors[0].field == "value" and "lower" in refused.value.errors[0].message
    bill.refresh_from_db()
    assert bill.status == Bill.Status.ISSUED and Bill.objects.count() == 1
    assert Reading.objects.get(meter=meter, read_on=date(2026, 1, 12)).value == 1_062_500
    assert statement(account.account_no, "2026-03-10")["balance"] == "0.00"


def test_a_corrected_reading_that_makes_the_bill_high_is_not_held_again(mineola):
    account, meter = account_with_meter(book=1, start=date(2024, 7, 10))
    read(meter, date(2025, 1, 12), 1_030_000)
    run("run_billing", "--date", "2025-02-01")
    read(meter, date(2025, 7, 12), 1_060_000)
    run("run_billing", "--date", "2025-08-01")
    read(meter, date(2026, 1, 12), 1_090_000)
    run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get(bill_date=date(2026, 2, 1))
    done = bill_rebill(bill=bill, reason="the register was misread: 1,390,000", reading=1_390_000,
                       as_of=date(2026, 3, 10), actor=None)
    assert done.bill is not None and done.bill.gallons == 330_000  # over 4× the 30,000 a half year before
    released = BillingException.objects.get(account=account, bill_date=date(2026, 2, 1))
    assert released.status == BillingException.Status.RELEASED and "rebilling" in released.detail


def test_the_supervisor_voids_and_bills_again_from_the_bills_page(mineola):
    _, _, bill = misread(mineola)
    supervisor = staff("sam", "Supervisor")
    client = Client()
    client.force_login(supervisor)
    page = client.get(reverse("admin:billing_bill_change", args=[bill.pk])).content.decode()
    url = reverse("admin:billing_bill_rebill", args=[bill.pk])
    assert url in page and "Void and bill again" in page
    form = client.get(url)
    assert form.status_code == 200 and "1,062,500 gal on Jan 12, 2026" in form.content.decode()
    refused = client.post(url, {"reason": "misread", "reading": "12x"})
    assert refused.status_code == 400 and Bill.objects.count() == 1
    done = client.post(url, {"reason": "misread", "reading": "1,262,500"})
    new = Bill.objects.exclude(status=Bill.Status.VOID).get()
    assert done.status_code == 302, done.context["form"].errors
    assert done["Location"] == reverse("admin:billing_bill_change", args=[new.pk])
    assert new.total.amount == D("956.13")
    clerk = staff("clara", "Clerk")
    client.force_login(clerk)
    assert client.get(reverse("admin:billing_bill_rebill", args=[new.pk])).status_code == 403
