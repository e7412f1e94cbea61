"""The Clerk's day with the bank, in Debian's chromium through Playwright, signed in as the Clerk (never as a
superuser): read the lockbox file on the exceptions queue, post the check that matched no stub to its account,
read the bank's BAI2 report (a damaged one first: refused by line, nothing kept) and reconcile the day's deposits.

Skips where /usr/bin/chromium is missing (``apt-get install chromium``; CI installs it)."""

import re

import pytest

from billing.models import Payment
from demo.bank_files import bai2_report
from remittance.models import BankDeposit
from tests.browser import DESK, needs_chromium
from tests.factories import clerk_user
from tests.portal.conftest import PASSWORD, billed_account
from tests.remittance.test_lockbox import HEADER, scan
from tests.remittance.test_role_days import DAY

pytestmark = [pytest.mark.browser, needs_chromium]


def test_the_clerks_day_with_the_bank(live_server, mineola, media, browser, tmp_path):
    from playwright.sync_api import expect

    one, two = billed_account().bills.get(), billed_account().bills.get()
    (tmp_path / "lockbox.csv").write_text(HEADER + f"{DAY},7,1,186.13,1001,{scan(one)}\n{DAY},7,2,186.13,1002,\n")
    (tmp_path / "bad.bai").write_text("01,BANK,VILLAGE/\n")
    (tmp_path / "day.bai").write_text(bai2_report(DAY, [("115", 37226, "LBX7", "LOCKBOX 7")]))
    user = clerk_user("clerk")
    user.set_password(PASSWORD)
    user.save()
    page = browser.new_context(viewport=DESK).new_page()
    page.goto(live_server.url + "/admin/")
    page.get_by_label("Username").fill("clerk")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    # The lockbox file, from the exceptions queue.
    page.goto(live_server.url + "/admin/remittance/paymentexception/")
    page.get_by_role("link", name="Import CSV").click()
    page.get_by_label("CSV file").set_input_files(str(tmp_path / "lockbox.csv"))
    page.get_by_label("Import date").fill("2026-02-25")
    page.get_by_role("button", name="Import").click()
    expect(page.locator("ul.messagelist")).to_contain_text("Imported lockbox.csv")
    # The check with no stub: the clerk posts it to the account the payer named.
    page.get_by_role("row", name=re.compile("LBX-20260224-7-2")).get_by_role("link").first.click()
    page.get_by_label("Post it to account").fill(two.account.account_no)
    page.get_by_label("Note").fill("the payer called")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("ul.messagelist")).to_contain_text(f"posted to account {two.account.account_no}")
    assert Payment.objects.filter(account__in=[one.account, two.account]).count() == 2

    # The BAI2 report: a damaged one is refused by line and keeps nothing; the day's is read.
    page.goto(live_server.url + "/admin/remittance/bankdeposit/")
    page.get_by_role("link", name="Read a BAI2 report").click()
    page.get_by_label("File from the bank").set_input_files(str(tmp_path / "bad.bai"))
    page.get_by_role("button", name="Read the report").click()
    expect(page.get_by_role("alert")).to_contain_text("Refused: nothing was kept")
    assert not BankDeposit.objects.exists()
    page.get_by_label("File from the bank").set_input_files(str(tmp_path / "day.bai"))
    page.get_by_role("button", name="Read the report").click()
    expect(page.locator("ul.messagelist")).to_contain_text("1 credit(s) added")

    # The deposits reconciliation of the day.
    page.goto(live_server.url + f"/admin/deposits/?on={DAY}")
    expect(page.get_by_role("heading", name="Deposits reconciliation")).to_be_visible()
