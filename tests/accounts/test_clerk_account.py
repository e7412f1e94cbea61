"""The clerk's account, as the Clerk role works it: an exact number (or a scanned bill stub) opens the account, the
accounts opened last are a click away, a late charge is waived from its ledger line, a credit reads as a credit, the
bill page says who voids it, and the account says how its bills go and whether autopay is on.

The account is Mineola's worked bill: $186.13 billed 2026-02-01, due March 1 (§ 45.29 D); the first late charge,
$9.31, posted on March 2."""

from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from billing.models import LedgerEntry, PenaltyWaiver
from billing.services.payments import payment_post
from tests.billing.steps import run
from tests.office.conftest import staff
from tests.termination.steps import delinquent_account

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: the clerk's account")]


@pytest.fixture
def clerk(client, mineola):
    client.force_login(staff("clara", "Clerk"))
    return client


def account_page(client, account) -> str:
    return client.get(reverse("admin:accounts_account_change", args=[account.pk])).content.decode()


def test_a_number_or_a_scanned_stub_opens_the_account_and_a_name_lists(clerk):
    account, bill = delinquent_account(occupant=False)
    other, _ = delinquent_account(occupant=False)
    listing = reverse("admin:accounts_account_changelist")
    opened = clerk.get(listing, {"q": account.account_no})
    assert opened.status_code == 302 and opened.url == reverse("admin:accounts_account_change", args=[account.pk])
    dashless = clerk.get(listing, {"q": account.account_no.replace("-", "")})
    assert dashless.url == opened.url
    stub = f"{account.account_no}  {bill.number}  0000018613  0000000000"  # as the bill prints its scan line
    assert clerk.get(listing, {"q": stub}).url == opened.url
    named = clerk.get(listing, {"q": account.owner.name.split()[0]})
    assert named.status_code == 200  # a name lists, never opens
    # Opened, each is remembered on the list, the last first.
    account_page(clerk, account)
    account_page(clerk, other)
    html = clerk.get(listing).content.decode()
    recent = html[html.index('id="recent-accounts"'):]
    assert recent.index(other.account_no) < recent.index(account.account_no)
    assert "An account number (or a bill stub scanned) opens the account" in html


def test_the_clerk_waives_a_late_charge_from_its_ledger_line(clerk):
    account, _ = delinquent_account(occupant=False)
    run("assess_penalties", "--date", "2026-03-05")
    charge = LedgerEntry.objects.get(account=account, kind="penalty")
    html = account_page(clerk, account)
    bill = account.bills.get()
    assert f'href="{reverse("admin:billing_adjustment_add")}?bill={bill.pk}"' in html  # adjust from the bill's line
    waive = reverse("admin:billing_penalty_waive", args=[charge.pk])
    assert f'href="{waive}?next=' in html and "Waive this charge" in html
    form = clerk.get(waive)
    assert form.status_code == 200
    done = clerk.post(waive, {"reason": "first late payment in 20 years",
                              "next": reverse("admin:accounts_account_change", args=[account.pk])})
    assert done.status_code == 302 and done.url == reverse("admin:accounts_account_change", args=[account.pk])
    waiver = PenaltyWaiver.objects.get(entry=charge)
    assert waiver.status == "approved" and waiver.requested_by.username == "clara"
    assert "Waive this charge" not in account_page(clerk, account)  # corrected to nothing: the line is gone


def test_a_credit_reads_as_a_credit_and_the_account_says_how_it_is_billed(clerk):
    account, _ = delinquent_account(occupant=False)
    payment_post(account_no=account.account_no, amount=Decimal("193.13"), paid_on=date(2026, 2, 20), reference="C")
    html = account_page(clerk, account)
    assert "Credit <span class=\"big\">$7.00</span>" in html and "−$7.00</span>" not in html
    card = html[html.index('id="glance-delivery"'):]
    assert "Bills: <strong>by mail</strong>" in card and "Autopay: off" in card


def test_the_bill_page_says_who_voids_it(clerk, client):
    _, bill = delinquent_account(occupant=False)
    page = clerk.get(reverse("admin:billing_bill_change", args=[bill.pk])).content.decode()
    assert "voided (or voided and billed again with the reading corrected) by a supervisor: ask one" in page
    assert "Void bill" not in page
    client.force_login(staff("sam", "Supervisor"))
    page = client.get(reverse("admin:billing_bill_change", args=[bill.pk])).content.decode()
    assert "Void bill" in page and 'id="who-voids"' not in page
