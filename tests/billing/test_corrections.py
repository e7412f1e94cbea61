"""Corrected bills and what customers read: a voided and reissued bill agrees with the ledger to the cent,
is due from its own issue date, and clerks' internal notes never reach the customer."""

from datetime import date
from decimal import Decimal as D

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from billing.documents.bill import bill_views
from billing.models import Adjustment, Bill
from billing.selectors import bill_summaries
from billing.services.adjustments import adjustment_create, bill_void
from tests.billing.steps import account_with_meter, pay, read, run, statement
from tests.portal.conftest import customer

pytestmark = pytest.mark.django_db


def misread_then_corrected(mineola):
    """The worked example's $186.13 bill (62,500 gal), paid in full on 2026-02-20. The reading was 200,000
    gal short: voided on 2026-03-10, a corrected reading of 1,262,500 on 2026-01-13 (262,500 gal) is billed
    again for 2026-02-01: $45.00 + 30,000 × $3.10/1,000 = $93.00 + 212,500 × $3.85/1,000 = $818.13
    (818.125) → $956.13. The account owes 956.13 − 186.13 paid = $770.00."""
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    pay(account, "186.13", "2026-02-20", "CHK-186")
    original = Bill.objects.get()
    bill_void(bill=original, reason="meter reader keyed 1,062,500 for 1,262,500; customer called 3/9",
              as_of=date(2026, 3, 10), actor=None)
    read(meter, date(2026, 1, 13), 1_262_500)
    run("run_billing", "--date", "2026-02-01")
    return account, original, Bill.objects.exclude(status="void").get()


@pytest.mark.citation("§ 45.29 D")
def test_a_voided_and_reissued_bill_agrees_with_the_ledger_everywhere(mineola, media):
    account, original, corrected = misread_then_corrected(mineola)
    assert corrected.total.amount == D("956.13") and corrected.number == f"{original.number}-2"
    # Due from its own issue date (the void, 2026-03-10), a month later as § 45.29 D gives any bill.
    assert (corrected.bill_date, corrected.issued_on, corrected.due_date) == (
        date(2026, 2, 1), date(2026, 3, 10), date(2026, 4, 10))
    assert statement(account.account_no, "2026-03-10")["balance"] == "770.00"
    summary = bill_summaries(bills=[corrected])[corrected.pk]
    # 0.00 before (billed and paid), the void takes 186.13 off, the corrected charges 956.13.
    assert (summary.previous_balance, summary.payments, summary.other, summary.current, summary.total_due) == (
        D("0.00"), D("0.00"), D("-186.13"), D("956.13"), D("770.00"))
    view, = bill_views(bill_ids=[corrected.pk])
    assert view.total_due == "$770.00" and view.due_date == "Apr 10, 2026"
    assert view.issued_on == "Mar 10, 2026"
    # The portal says the same.
    user = customer("owner@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    page = client.get(reverse("portal:bill", kwargs={"public_id": corrected.public_id})).content.decode()
    assert "$770.00" in page and "$1,142.26" not in page and "$956.13" in page and "corrected bill issued Mar 10, 2026" in page


@pytest.mark.citation("§ 45.29 D")
@pytest.mark.citation("§ 45.29 E")
def test_a_corrected_bill_draws_no_penalty_before_its_own_due_date(mineola):
    account, _, corrected = misread_then_corrected(mineola)
    run("assess_penalties", "--date", "2026-04-10")
    assert statement(account.account_no, "2026-04-10")["charges"][-1]["kind"] == "void"  # no penalty yet
    run("assess_penalties", "--date", "2026-04-11")
    # 5% of the 770.00 still unpaid = 38.50 on 2026-04-11.
    penalty = statement(account.account_no, "2026-04-11")["charges"][-1]
    assert (penalty["kind"], penalty["date"], penalty["amount"], penalty["bill"]) == (
        "penalty", "2026-04-11", "38.50", corrected.number)


@pytest.mark.citation("policy: corrections are adjustments")
def test_internal_notes_never_reach_the_customer(mineola, media):
    account, original, corrected = misread_then_corrected(mineola)
    adjustment_create(bill=corrected, kind=Adjustment.Kind.CREDIT, amount=10, reason="goodwill; customer called 11/30",
                      as_of=date(2026, 3, 12), actor=None)
    adjustment_create(bill=corrected, kind=Adjustment.Kind.DEBIT, amount=5, reason="returned check fee per JS",
                      description="Returned check charge", as_of=date(2026, 3, 12), actor=None)
    data = statement(account.account_no, "2026-03-12")
    texts = [c["description"] for c in data["charges"]]
    assert texts == [f"Bill {original.number} voided; a corrected bill replaces it",
                     f"Credit memo on bill {corrected.number}", "Returned check charge"]
    user = customer("reader@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    for internal in ("customer called", "keyed", "goodwill", "per JS"):
        assert internal not in page
    assert "Returned check charge" in page
    # The clerk still has the notes.
    assert Bill.objects.get(pk=original.pk).void_reason.startswith("meter reader keyed")
    assert Adjustment.objects.get(kind="credit").reason == "goodwill; customer called 11/30"
