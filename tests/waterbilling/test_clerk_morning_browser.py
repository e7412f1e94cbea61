"""A clerk's morning in the admin, in Debian's chromium through Playwright: the dashboard → find an account
by its owner's name → read its running-balance ledger → reprint its bill → post a counter payment and
print the receipt → preview a billing run and issue it.

The village is Mineola's preset. One account is the worked example of docs/ordinances.md (62,500 gal billed
2026-02-01: $186.13, unpaid since, so penalties stand on it); another, in book 9, was read in November and
is due on the book's latest billing date, June 1 or December 1 (§ 45.29 A: books 9–10 are billed then).

Skips where /usr/bin/chromium is missing (``apt-get install chromium``; CI installs it).
"""

import os
import re
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command

from billing.models import Bill, BillingRun, Payment
from core.clock import today
from meters.models import Reading
from tests.browser import DESK, needs_chromium
from tests.factories import AccountFactory, CustomerFactory, InstallationFactory, MeterFactory, clerk_user
from tests.portal.conftest import PASSWORD, billed_account

pytestmark = [
    pytest.mark.browser,
    needs_chromium,
]



def book_9_billing_date() -> date:
    """The latest of book 9's billing dates (June 1, December 1) on or before today."""
    now = today()
    return max(d for year in (now.year - 1, now.year) for d in (date(year, 6, 1), date(year, 12, 1)) if d <= now)


@pytest.fixture
def morning(mineola, settings, tmp_path):
    """The worked-example account (owner Margaret Quinlan), penalties assessed to today, and a book 9
    account read three weeks before the book's latest billing date, due on it."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.BILL_PDFS_ON_ISSUE = False
    quinlan = billed_account(owner=CustomerFactory(name="Margaret Quinlan",
                                                   mailing_address="12 Willis Avenue\nMineola, NY 11501"))
    call_command("assess_penalties", "--date", today().isoformat(), "--no-progress", stdout=open(os.devnull, "w"))
    due_today = AccountFactory(book=9)
    meter = MeterFactory()
    InstallationFactory(meter=meter, account=due_today, installed_on=date(2026, 5, 10))
    Reading.objects.create(meter=meter, read_on=date(2026, 5, 10), value=500_000, source="install")
    Reading.objects.create(meter=meter, read_on=book_9_billing_date() - timedelta(days=20), value=530_000)
    user = clerk_user("clerk")
    user.set_password(PASSWORD)
    user.save()
    return {"quinlan": quinlan, "due_today": due_today}


def test_a_clerks_morning(live_server, morning, browser):
    from playwright.sync_api import expect

    quinlan = morning["quinlan"]
    bill = quinlan.bills.get()
    page = browser.new_context(viewport=DESK).new_page()

    # Sign in: the admin home is the dashboard of today's work.
    page.goto(live_server.url + "/admin/")
    page.get_by_label("Username").fill("clerk")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name=re.compile("Today's work"))).to_be_visible()
    expect(page.locator("#dashboard-shortcuts")).to_contain_text("Post a payment")

    # Find the account by its owner's name, from the dashboard's one box.
    page.get_by_label("Find an account").fill("quinlan")
    page.get_by_role("button", name="Search").click()
    page.get_by_role("link", name=quinlan.account_no).click()
    expect(page.locator("body")).to_contain_text("Margaret Quinlan")

    # The account opens as an inquiry, on its summary; its running-balance ledger is a tab: the $186.13 bill, then
    # each penalty (§ 45.29 E) with the balance after it.
    page.get_by_role("tab", name="Payments and ledger").click()
    ledger = page.locator("#account-ledger")
    expect(ledger).to_be_visible()
    expect(ledger).to_contain_text(bill.number)
    expect(ledger).to_contain_text("186.13")
    expect(ledger).to_contain_text("9.31")  # 5% of $186.13, half-up, on 2026-03-02
    expect(ledger).to_contain_text("195.44")  # the balance after it

    # Reprint its bill: the link serves the bill rendered again, a PDF.
    page.get_by_role("tab", name="Bills").click()
    reprint = page.locator("#account-bills").get_by_role("link", name="reprint")
    response = page.request.get(live_server.url + reprint.get_attribute("href"))
    assert response.ok and response.headers["content-type"] == "application/pdf"
    assert response.body().startswith(b"%PDF-")

    # Post a counter payment: the counter opens on the account, showing the name and the amount due.
    page.get_by_role("link", name="Post a payment").click()
    expect(page.locator("#counter-name")).to_have_text("Margaret Quinlan")
    due_text = page.locator("#counter-due").inner_text()
    assert due_text.startswith("$")
    # One account box; "Pay past due" fills the amount with what is past due (the bill and its late charges).
    assert page.locator("input[name=account_no]").count() == 1
    past_due = page.locator("#counter-past-due").inner_text().replace("$", "").replace(",", "")
    page.get_by_role("button", name=re.compile("Pay past due")).click()
    expect(page.get_by_label("Amount ($)")).to_have_value(past_due)
    # Typing another account looks it up as it is typed, with its own buttons.
    page.get_by_label("Account number").fill(morning["due_today"].account_no)
    expect(page.locator("#counter-account")).to_contain_text("due now $")
    page.get_by_label("Account number").fill(quinlan.account_no)
    expect(page.locator("#counter-fill")).to_contain_text("Pay past due")
    page.get_by_label("Amount ($)").fill("50.00")
    page.get_by_role("combobox", name="Tender").select_option("cash")
    page.get_by_label("Cash tendered ($)").fill("60")
    page.get_by_role("button", name="Post payment").click()
    expect(page.locator("#counter-posted")).to_contain_text("Posted $50.00")
    expect(page.locator("#counter-posted")).to_contain_text("Cash tendered $60.00, change $10.00")
    payment = Payment.objects.get(account=quinlan)
    assert (payment.amount.amount, payment.tender, payment.paid_on) == (Decimal("50.00"), "cash", today())
    # Print the receipt (it opens in a tab of its own).
    with page.context.expect_page() as receipt_tab:
        page.get_by_role("link", name="Print receipt").click()
    receipt = page.request.get(receipt_tab.value.url)
    assert receipt.ok and receipt.body().startswith(b"%PDF-")

    # Preview today's billing run: the proof register before anything is issued.
    page.goto(live_server.url + "/admin/")
    page.get_by_role("link", name="Start or preview a billing run").click()
    page.get_by_role("textbox", name="Bill date").fill(book_9_billing_date().isoformat())
    page.get_by_role("button", name="Preview").click()
    expect(page.get_by_role("heading", name="Bills by book")).to_be_visible()
    expect(page.locator("body")).to_contain_text("76.00")
    assert not Bill.objects.filter(account=morning["due_today"]).exists()  # a preview writes nothing
    page.get_by_role("button", name="Issue these bills").click()
    run = BillingRun.objects.get(run_on=book_9_billing_date(), dry_run=False)
    expect(page.locator("body")).to_contain_text("Bills issued")
    assert run.bills_created == 1
    new_bill = Bill.objects.get(account=morning["due_today"], bill_date=book_9_billing_date())
    # 30,000 gal: $45.00 minimum (20,000 gal) + 10,000 gal × $3.10 = $31.00 (§ 45.28 A, sample schedule).
    assert new_bill.total.amount == Decimal("76.00")
