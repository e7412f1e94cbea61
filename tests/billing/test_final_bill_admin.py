"""The final-bill pages in the admin: preview then issue, the closing letter PDF, the move to a new account."""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from accounts.models import Account
from billing.models import Bill
from tests.billing.steps import account_with_meter, read, run
from tests.factories import clerk_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def clerk_client(client, mineola):
    client.force_login(User.objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-only-9"))
    return client


@pytest.fixture
def account(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    return account


def test_preview_shows_the_lines_and_writes_nothing_then_issue(clerk_client, account):
    url = reverse("admin:billing_bill_final", args=[account.pk])
    assert b"Preview" in clerk_client.get(url).content
    data = {"read_on": "2026-05-12", "reading": "1080500", "close": "on"}
    page = clerk_client.post(url, {**data, "_preview": "Preview"})
    assert page.status_code == 200
    text = page.content.decode()
    assert "pro rata 100/181 days" in text and "$46.41" in text and "Issue final bill" in text
    assert Bill.objects.count() == 1
    response = clerk_client.post(url, {**data, "_issue": "Issue final bill"})
    bill = Bill.objects.get(final=True)
    assert response.status_code == 302 and response.url == reverse("admin:billing_bill_change", args=[bill.pk])
    assert bill.total.amount == Decimal("46.41")
    assert Account.objects.get(pk=account.pk).status == "closed"


def test_a_refusal_shows_under_its_field(clerk_client, account):
    url = reverse("admin:billing_bill_final", args=[account.pk])
    page = clerk_client.post(url, {"read_on": "2026-05-12", "reading": "1000", "_preview": "Preview"})
    assert page.status_code == 200 and page.context["form"].errors["reading"]
    assert Bill.objects.count() == 1


def test_closing_letter_pdf_and_figures(clerk_client, account):
    url = reverse("admin:billing_bill_closing_letter", args=[account.pk])
    response = clerk_client.get(url, {"closing_on": "2026-05-20"})
    assert response["Content-Type"] == "application/pdf" and response.content.startswith(b"%PDF")
    page = clerk_client.get(url, {"closing_on": "2026-05-20", "view": "figures"})
    assert b"Estimate" in page.content
    page = clerk_client.get(url, {"closing_on": "2026-01-01"})
    assert page.status_code == 200 and page.context["form"].errors["closing_on"]


def test_move_opens_the_new_account(clerk_client, account):
    url = reverse("admin:billing_account_move", args=[account.pk])
    response = clerk_client.post(url, {"on": "2026-05-12", "final_reading": "1080500", "new_account_no": "1-7777",
                                       "owner_name": "Pat Buyer", "owner_address": "9 Elm St\nMineola, NY 11501"})
    new = Account.objects.get(account_no="1-7777")
    assert response.status_code == 302 and new.owner.name == "Pat Buyer" and new.premises_id == account.premises_id
    assert Account.objects.get(pk=account.pk).status == "closed"


def test_pages_need_the_permissions(client, account):
    user = User.objects.create_user("viewer", is_staff=True)
    client.force_login(user)
    for name in ("billing_bill_final", "billing_account_move", "billing_bill_closing_letter"):
        assert client.get(reverse(f"admin:{name}", args=[account.pk])).status_code == 403


def test_a_clerk_may_issue_a_final_bill(client, account):
    client.force_login(clerk_user())
    assert client.get(reverse("admin:billing_bill_final", args=[account.pk])).status_code == 200


def test_a_final_reading_far_above_normal_use_is_warned_and_needs_checking(clerk_client, account):
    """The account used 62,500 gal in 186 days (336 gal/day); 200,000 gal in the 120 days to May 12 (1,667 gal/day)
    is over 4× that: the preview warns, and the bill issues only once the clerk ticks that the reading was checked."""
    url = reverse("admin:billing_bill_final", args=[account.pk])
    data = {"read_on": "2026-05-12", "reading": "1262500", "close": "on"}
    text = clerk_client.post(url, {**data, "_preview": "Preview"}).content.decode()
    assert 'id="high-usage"' in text and "200,000 gal in 120 days (1,667 gal/day) is over 4× the average of 336" in text
    refused = clerk_client.post(url, {**data, "_issue": "Issue final bill"})
    assert refused.status_code == 200 and refused.context["form"].errors["reading_checked"]
    assert not Bill.objects.filter(final=True).exists()
    normal = clerk_client.post(url, {**data, "reading": "1080500", "_preview": "Preview"}).content.decode()
    assert "Issue final bill" in normal and 'id="high-usage"' not in normal  # a normal reading is not warned
    issued = clerk_client.post(url, {**data, "reading_checked": "on", "_issue": "Issue final bill"})
    assert issued.status_code == 302 and Bill.objects.filter(final=True).exists()
