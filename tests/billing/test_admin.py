"""The billing office in the admin: starting a run, reading bills, voiding, memos, payment batches."""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from billing.models import Adjustment, Bill, BillingException, BillingRun, Payment
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db


@pytest.fixture
def clerk_client(client, mineola):
    user = User.objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-only-9")
    client.force_login(user)
    return client


@pytest.fixture
def billed(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    return account, Bill.objects.get()


def test_start_run_from_admin_and_see_counts(clerk_client, django_capture_on_commit_callbacks):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    page = clerk_client.get(reverse("admin:billing_billingrun_start"))
    assert b"Start billing run" in page.content
    with django_capture_on_commit_callbacks(execute=True):  # the run is handed to the workers on commit
        response = clerk_client.post(reverse("admin:billing_billingrun_start"), {"run_on": "2026-02-01"})
    response = clerk_client.get(response.url)
    run_ = BillingRun.objects.get()
    assert response.request["PATH_INFO"] == reverse("admin:billing_billingrun_change", args=[run_.pk])
    html = response.content.decode()
    assert "Status: <strong>Done</strong>" in html and "Bills issued: <strong>1</strong>" in html
    assert "$186.13" in html


def test_start_run_refuses_the_future(clerk_client):
    response = clerk_client.post(reverse("admin:billing_billingrun_start"), {"run_on": "2099-02-01"})
    assert response.status_code == 200 and b"nothing is billed in the future" in response.content
    assert not BillingRun.objects.exists()


@pytest.fixture
def clerk_on_a_real_site(client, mineola_real_site):
    user = User.objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-only-9")
    client.force_login(user)
    return client


def test_start_run_on_sample_rates_needs_the_box_ticked_and_records_it(clerk_on_a_real_site,
                                                                       django_capture_on_commit_callbacks):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    url = reverse("admin:billing_billingrun_start")
    page = clerk_on_a_real_site.get(url).content.decode()
    assert 'name="accept_sample_rates"' in page and "Accept sample rates" in page
    assert "is the preset&#x27;s sample schedule" in page or "is the preset's sample schedule" in page

    refused = clerk_on_a_real_site.post(url, {"run_on": "2026-02-01"})
    html = refused.content.decode()
    assert refused.status_code == 200 and "sample rates are not for real bills" in html
    assert not BillingRun.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = clerk_on_a_real_site.post(url, {"run_on": "2026-02-01", "accept_sample_rates": "on"})
    run_ = BillingRun.objects.get()
    assert response.url == reverse("admin:billing_billingrun_change", args=[run_.pk])
    assert run_.accept_sample_rates and run_.started_by.username == "clerk"
    assert Bill.objects.get().total.amount == Decimal("186.13")
    assert "Accepted sample rates" in clerk_on_a_real_site.get(response.url).content.decode()


def test_utility_page_says_whether_it_is_a_demo_site(clerk_on_a_real_site, mineola_real_site):
    url = reverse("admin:ordinance_utility_change", args=[mineola_real_site.pk])
    html = clerk_on_a_real_site.get(url).content.decode()
    assert "Demo/training site" in html and "No: a real site" in html
    assert "Demo/training site" in clerk_on_a_real_site.get(reverse("admin:ordinance_utility_changelist")).content.decode()
    mineola_real_site.is_demo_site = True
    mineola_real_site.save()
    assert "Yes: billing on the preset&#x27;s sample rates is allowed" in clerk_on_a_real_site.get(url).content.decode()


def test_utility_page_shows_the_payment_order_as_office_policy(clerk_client, mineola):
    html = clerk_client.get(reverse("admin:ordinance_utility_change", args=[mineola.pk])).content.decode()
    assert "What a payment pays first" in html and "Principal first" in html
    assert "Office policy, not in the ordinance" in html and 'name="payment_order"' not in html


def test_bill_page_is_read_only_and_shows_lines_with_citations(clerk_client, billed):
    _, bill = billed
    html = clerk_client.get(reverse("admin:billing_bill_change", args=[bill.pk])).content.decode()
    assert "§ 45.28 A(1), A(2)(a)" in html and "48.13" in html
    assert 'name="gallons"' not in html and "Void bill" in html
    assert f'href="{reverse("admin:billing_bill_pdf", args=[bill.pk])}">Bill PDF</a>' in html
    response = clerk_client.post(reverse("admin:billing_bill_change", args=[bill.pk]), {"gallons": 1})
    assert response.status_code == 403
    bill.refresh_from_db()
    assert bill.gallons == 62500


def test_void_keeps_the_record(clerk_client, billed):
    _, bill = billed
    clerk_client.post(reverse("admin:billing_bill_void", args=[bill.pk]),
                      {"reason": "Misread meter", "description": "Bill replaced: meter reading corrected"})
    bill.refresh_from_db()
    assert bill.status == "void" and bill.void_reason == "Misread meter" and bill.voided_by.username == "clerk"
    assert bill.void_description == "Bill replaced: meter reading corrected"
    assert bill.ledger.get(kind="void").description == "Bill replaced: meter reading corrected"


def test_credit_memo_from_admin(clerk_client, billed):
    _, bill = billed
    response = clerk_client.post(reverse("admin:billing_adjustment_add"),
                                 {"bill": bill.number, "kind": "credit", "amount": "20.00", "reason": "Leak allowance"})
    assert response.status_code == 302
    memo = Adjustment.objects.get()
    assert memo.amount.amount == Decimal("20.00") and memo.created_by.username == "clerk"
    assert memo.entry.amount.amount == Decimal("-20.00")
    # The internal note stays with the clerk; the customer reads a plain wording.
    assert memo.reason == "Leak allowance" and memo.entry.description == f"Credit memo on bill {bill.number}"


def test_payment_batch_posts_all_or_nothing(clerk_client, billed):
    account, _ = billed
    url = reverse("admin:billing_payment_batch")
    assert b"Running total" in clerk_client.get(url).content
    form = {"form-TOTAL_FORMS": "2", "form-INITIAL_FORMS": "0",
            "form-0-account_no": account.account_no, "form-0-amount": "100.00", "form-0-paid_on": "2026-02-10",
            "form-0-reference": "R1",
            "form-1-account_no": "nope", "form-1-amount": "5", "form-1-paid_on": "2026-02-10", "form-1-reference": "R2"}
    bad = clerk_client.post(url, form)
    assert b"row 2: account_no" in bad.content and not Payment.objects.exists()
    form["form-1-account_no"] = account.account_no
    response = clerk_client.post(url, form, follow=True)
    assert b"Posted 2 payments totalling $105.00" in response.content
    assert Payment.objects.count() == 2


def test_release_held_bill_action(clerk_client, billed):
    account, _ = billed
    meter = account.installations.get().meter
    read(meter, date(2026, 7, 10), 1_462_500)
    run("run_billing", "--date", "2026-08-01")
    held = BillingException.objects.get()
    clerk_client.post(reverse("admin:billing_billingexception_changelist"),
                      {"action": "release", "_selected_action": [held.pk]})
    held.refresh_from_db()
    assert held.status == "released" and held.resolved_by.username == "clerk"
