"""Before a run: the bill dates the start form proposes, and the proof register of what a run would issue."""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

from billing.models import Bill, BillingException, BillingRun, BillLine, LedgerEntry, PendingCharge
from billing.runs.preview import (
    BookTotal,
    LineTotal,
    billing_date_proposals,
    billing_run_proof,
    billing_run_register,
    next_billing_dates,
)
from billing.services.charges import charge_create
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db

FEB_1 = date(2026, 2, 1)
AUG_1 = date(2026, 8, 1)


def _freeze(monkeypatch, day: date) -> None:
    """The utility's today, for the form and the refusal of the future alike."""
    monkeypatch.setattr("core.clock.today", lambda: day)
    monkeypatch.setattr("billing.admin.runs.today", lambda: day)


def _worked_accounts():
    """Book 1: the worked example, 62,500 gal → $186.13 (45.00 + 93.00 + 48.13); book 2: 20,000 gal → the
    $45.00 minimum; a monthly 2" meter in book 5; and one account with no reading, one with a lower one."""
    worked, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    minimum, meter = account_with_meter(book=2)
    read(meter, date(2026, 1, 12), 1_020_000)
    monthly, meter = account_with_meter(book=5, category="other", size="2", start=date(2025, 12, 30), value=0)
    read(meter, date(2026, 1, 29), 90_000)
    missing, _ = account_with_meter(book=1)
    lower, meter = account_with_meter(book=2)
    read(meter, date(2026, 1, 12), 999_000)
    return worked, minimum, monthly, missing, lower


# --- the bill dates -------------------------------------------------------------------------------------

@pytest.mark.citation("§ 45.29 A")
def test_next_billing_dates_are_the_books_months_and_every_first_for_monthly_meters(mineola):
    _worked_accounts()
    dates = next_billing_dates(after=date(2026, 1, 15), count=3)
    assert [(d.on, d.books, d.frequencies) for d in dates] == [
        (date(2026, 2, 1), (1, 2), ("monthly",)), (date(2026, 3, 1), (3, 4), ("monthly",)),
        (date(2026, 4, 1), (5, 6), ("monthly",))]
    # Feb 1: the four book 1-2 accounts and the monthly meter; Mar 1 and Apr 1: the monthly meter only (it is
    # in book 5, billed monthly whatever its book).
    assert [(d.accounts_due, d.unbilled) for d in dates] == [(5, 5), (1, 1), (1, 1)]
    assert dates[0].what == "Books 1, 2 and monthly meters" and dates[1].what == "Books 3, 4 and monthly meters"
    assert next_billing_dates(after=date(2026, 1, 31), count=1)[0].on == FEB_1  # "after" is not included


def test_quarterly_preset_bills_on_february_may_august_and_november_first(db):
    call_command("setup_utility", "washingtonville", "--demo", "0", "--date", "2025-01-01",
                 stdout=open("/dev/null", "w"))
    dates = next_billing_dates(after=date(2026, 1, 1), count=4)
    assert [d.on for d in dates] == [date(2026, 2, 1), date(2026, 5, 1), date(2026, 8, 1), date(2026, 11, 1)]
    assert all(d.books == () and d.frequencies == ("quarterly",) for d in dates)
    assert dates[0].what == "Quarterly meters"


def test_the_form_proposes_the_latest_date_until_it_is_billed_then_none(mineola):
    worked, minimum, *_ = _worked_accounts()
    proposals = billing_date_proposals(today=date(2026, 2, 10))
    assert proposals.initial == FEB_1 and proposals.latest.on == FEB_1
    assert [d.on for d in proposals.dates] == [FEB_1, date(2026, 3, 1), date(2026, 4, 1), date(2026, 5, 1)]
    run("run_billing", "--date", "2026-02-01")
    # The two exception accounts are still unbilled: the date stays proposed until they are billed too.
    assert billing_date_proposals(today=date(2026, 2, 10)).latest.unbilled == 2
    assert billing_date_proposals(today=date(2026, 2, 10)).initial == FEB_1
    BillingException.objects.all().delete()
    for account in type(worked).objects.filter(bills__isnull=True):
        account.status = "inactive"
        account.save(update_fields=["status"])
    # Every account due is billed: nothing is proposed (March 1 can be previewed, and issued on the day).
    assert billing_date_proposals(today=date(2026, 2, 10)).initial is None


# --- the proof register ---------------------------------------------------------------------------------

def test_proof_register_by_book_and_line_and_writes_nothing(mineola):
    worked, minimum, monthly, missing, lower = _worked_accounts()
    counts = (Bill.objects.count(), BillLine.objects.count(), LedgerEntry.objects.count(),
              BillingException.objects.count(), BillingRun.objects.count())
    proof = billing_run_proof(run_on=FEB_1, today=FEB_1)
    assert (Bill.objects.count(), BillLine.objects.count(), LedgerEntry.objects.count(),
            BillingException.objects.count(), BillingRun.objects.count()) == counts
    assert proof.accounts_due == 5 and proof.issuable and not proof.refusal
    books = {b.book: b for b in proof.register.books}
    assert books[1] == BookTotal(book=1, bills=1, gallons=62_500, total=Decimal("186.13"))
    assert books[2] == BookTotal(book=2, bills=1, gallons=20_000, total=Decimal("45.00"))
    assert set(books) == {1, 2, 5} and books[5].gallons == 90_000
    lines = {(line.kind, line.citation): line for line in proof.register.lines}
    assert lines[("minimum", "§ 45.28 A(1), A(2)(a)")] == LineTotal("minimum", "§ 45.28 A(1), A(2)(a)", 2,
                                                                     Decimal("90.00"))
    assert proof.register.total == Decimal("231.13") + books[5].total
    assert sum((line.amount for line in proof.register.lines), Decimal("0")) == proof.register.total
    assert [(e.account_no, e.kind) for e in proof.exceptions] == [
        (lower.account_no, "lower_reading"), (missing.account_no, "no_reading")]
    assert proof.holds == []


def test_proof_shows_holds_for_high_usage_with_the_detail(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    read(meter, date(2026, 7, 10), 1_462_500)  # 400,000 gal in 179 days vs 62,500 in 186: far over 4×
    proof = billing_run_proof(run_on=AUG_1, today=AUG_1)
    assert proof.register.bills == 0 and proof.exceptions == []
    [hold] = proof.holds
    assert hold.account_id == account.pk and hold.kind == "high_usage" and "held for review" in hold.detail


def test_preview_totals_are_what_issuing_writes(mineola, django_capture_on_commit_callbacks):
    worked, *_ = _worked_accounts()
    charge_create(account=worked, code="connect", as_of=date(2026, 1, 20), actor=None)  # $50.00, § 45.28 F
    proof = billing_run_proof(run_on=FEB_1, today=FEB_1)
    assert ("fee", "$50.00") in [(line.kind, f"${line.amount}") for line in proof.register.lines]
    assert proof.charges == 1
    from billing.runs.lifecycle import billing_run_start

    with django_capture_on_commit_callbacks(execute=True):
        issued = billing_run_start(run_on=FEB_1)
    issued.refresh_from_db()
    assert issued.status == "done" and PendingCharge.objects.get().bill is not None
    register = billing_run_register(run=issued)
    assert register == proof.register
    assert register.total == issued.total_billed.amount == Decimal("281.13") + register.books[-1].total
    assert sorted((e.account_id, e.kind, e.detail) for e in issued.exceptions.all()) == sorted(
        (e.account_id, e.kind, e.detail) for e in proof.exceptions)


def test_proof_refuses_a_date_too_far_ahead_and_one_without_rates(mineola):
    with pytest.raises(ApplicationError, match="more than 45 days after today") as refused:
        billing_run_proof(run_on=date(2026, 4, 1), today=FEB_1)
    assert refused.value.errors[0].field == "run_on"
    with pytest.raises(ApplicationError, match="no rate schedule is in force"):
        billing_run_proof(run_on=date(2001, 2, 1), today=FEB_1)
    future = billing_run_proof(run_on=date(2026, 3, 1), today=FEB_1)
    assert future.future and not future.issuable


# --- the admin's start and preview pages -----------------------------------------------------------------

@pytest.fixture
def clerk(client, mineola):
    client.force_login(User.objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-only-9"))
    return client


def test_start_page_proposes_the_date_and_lists_the_books_due(clerk, monkeypatch):
    _freeze(monkeypatch, date(2026, 2, 10))
    _worked_accounts()
    html = clerk.get(reverse("admin:billing_billingrun_start")).content.decode()
    assert 'name="run_on" value="2026-02-01"' in html
    assert "Books 1, 2 and monthly meters" in html and "(proposed)" in html
    assert 'href="?run_on=2026-03-01"' in html
    # A proposal clicked fills the date in.
    html = clerk.get(reverse("admin:billing_billingrun_start") + "?run_on=2026-03-01").content.decode()
    assert 'name="run_on" value="2026-03-01"' in html
    assert 'name="_preview"' in html and "Start billing run" in html
    mistyped = clerk.get(reverse("admin:billing_billingrun_start") + "?run_on=2026-02-31")
    assert mistyped.status_code == 200 and 'name="run_on" value="2026-02-01"' in mistyped.content.decode()


def test_preview_page_then_issue_these_bills(clerk, monkeypatch, django_capture_on_commit_callbacks):
    _freeze(monkeypatch, date(2026, 2, 10))
    worked, minimum, monthly, missing, lower = _worked_accounts()
    response = clerk.post(reverse("admin:billing_billingrun_start"), {"run_on": "2026-02-01", "_preview": "Preview"})
    assert response.status_code == 302
    assert response.url == reverse("admin:billing_billingrun_preview") + "?run_on=2026-02-01"
    page = clerk.get(response.url)
    html = page.content.decode()
    assert page.status_code == 200 and not Bill.objects.exists()
    assert "$186.13" in html and "$45.00" in html and "§ 45.28 A(1), A(2)(a)" in html and "$90.00" in html
    assert reverse("admin:accounts_account_change", args=[missing.pk]) in html
    assert "No reading in the read window" in html and "Reading lower than the previous one" in html
    assert "Issue these bills" in html and "Back" in html
    total = billing_run_proof(run_on=FEB_1, today=FEB_1).register.total
    assert f"${total:,.2f}" in html

    with django_capture_on_commit_callbacks(execute=True):
        issued = clerk.post(reverse("admin:billing_billingrun_start"), {"run_on": "2026-02-01", "_issue": "1"})
    run_ = BillingRun.objects.get()
    assert issued.url == reverse("admin:billing_billingrun_change", args=[run_.pk])
    assert Bill.objects.count() == 3 and run_.total_billed.amount == total


def test_preview_linked_without_a_date_shows_the_proposed_one(clerk, monkeypatch):
    _freeze(monkeypatch, date(2026, 2, 10))
    _worked_accounts()
    response = clerk.get(reverse("admin:billing_billingrun_preview"))
    assert response.status_code == 302
    assert response.url == reverse("admin:billing_billingrun_preview") + "?run_on=2026-02-01"


def test_a_near_future_date_is_previewed_not_issued(clerk, monkeypatch):
    _freeze(monkeypatch, date(2026, 1, 20))
    _worked_accounts()
    html = clerk.get(reverse("admin:billing_billingrun_preview") + "?run_on=2026-02-01").content.decode()
    assert "$186.13" in html and "this is a preview only" in html and "Issue these bills" not in html
    far = clerk.get(reverse("admin:billing_billingrun_preview") + "?run_on=2026-04-01")
    assert far.status_code == 200 and "more than 45 days after today" in far.content.decode()
    refused = clerk.post(reverse("admin:billing_billingrun_start"), {"run_on": "2026-02-01"})
    assert "nothing is billed in the future" in refused.content.decode() and not BillingRun.objects.exists()
    bad = clerk.get(reverse("admin:billing_billingrun_preview") + "?run_on=2026-02-31")
    assert bad.status_code == 200 and "Enter a valid date" in bad.content.decode()


@pytest.fixture
def clerk_on_a_real_site(client, mineola_real_site):
    client.force_login(User.objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-only-9"))
    return client


def test_sample_rate_refusal_on_the_preview_is_the_start_pages(clerk_on_a_real_site, monkeypatch):
    _freeze(monkeypatch, date(2026, 2, 10))
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    start = clerk_on_a_real_site.post(reverse("admin:billing_billingrun_start"), {"run_on": "2026-02-01"})
    start_refusal = start.context["form"].errors["accept_sample_rates"][0]
    assert "sample rates are not for real bills" in start_refusal
    preview = clerk_on_a_real_site.get(reverse("admin:billing_billingrun_preview") + "?run_on=2026-02-01")
    assert preview.context["proof"].refusal == start_refusal
    html = preview.content.decode()
    assert "Issue these bills" not in html and "$186.13" in html
    accepted = clerk_on_a_real_site.get(reverse("admin:billing_billingrun_preview")
                                        + "?run_on=2026-02-01&accept_sample_rates=1")
    html = accepted.content.decode()
    assert not accepted.context["proof"].refusal and "Issue these bills" in html
    assert 'name="accept_sample_rates" value="on"' in html


def test_preview_needs_the_permission_to_view_runs(client, mineola):
    client.force_login(User.objects.create_user("reader", "r@example.org", "pw-for-tests-only-9", is_staff=True))
    assert client.get(reverse("admin:billing_billingrun_preview") + "?run_on=2026-02-01").status_code == 403
