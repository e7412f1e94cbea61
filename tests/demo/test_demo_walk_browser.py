"""The demo ``make run`` serves, walked in Debian's chromium as each person would, never as a superuser: the
printed customer pays a bill online on the test checkout and turns autopay on (``scripts/demo_walk.py``, the same
walk one runs against ``make run``); the Clerk prepares the day's autopay debit file; a Supervisor approves it and
downloads it for the bank; the Clerk reads the bank's returns file the demo wrote; the Treasurer exports the
journal. Every page says test payments move no money.

Skips where /usr/bin/chromium is missing (``apt-get install chromium``; CI installs it)."""

import csv
import importlib.util
import io
import re
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.utils import timezone

from billing.models import Payment, PaymentReversal
from office.journal import CSV_HEADER
from remittance.models import AchFile, AutopayEnrolment
from tests.browser import DESK, needs_chromium

pytestmark = [pytest.mark.browser, needs_chromium, pytest.mark.citation("policy: roles")]
ROOT = Path(__file__).resolve().parents[2]


def _demo_walk():
    spec = importlib.util.spec_from_file_location("demo_walk", ROOT / "scripts" / "demo_walk.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _admin_sign_in(browser, url: str, username: str, password: str):
    page = browser.new_context(viewport=DESK, accept_downloads=True).new_page()
    page.goto(url + "/admin/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    return page


@pytest.mark.long(60)
def test_the_demo_walked_by_the_customer_the_clerk_the_supervisor_and_the_treasurer(live_server, settings, media,
                                                                                  browser, tmp_path):
    from playwright.sync_api import expect

    settings.DEBUG = True  # demo_bootstrap runs only in development mode
    settings.TEST_PAYMENTS = True
    settings.BANK_ACCOUNT_KEY = Fernet.generate_key().decode()
    settings.ACH_ODFI_ROUTING, settings.ACH_ODFI_NAME = "011000015", "TEST BANK"
    settings.ACH_COMPANY_ID, settings.ACH_COMPANY_NAME = "9999999999", "TEST VILLAGE"
    settings.SITE_URL = live_server.url
    out = io.StringIO()
    call_command("demo_bootstrap", "--demo", "60", stdout=out, stderr=out)
    said = out.getvalue()
    customer = re.search(r"Customer portal: \S+\n  username: (\S+)\n  password: (\S+)\n", said)
    staff = re.search(r"Staff, one login per role \([^)]*\).*\n  password: (\S+)\n", said)
    returns = re.search(r"the bank's returns file for the file made three days ago: (\S+)", said)
    assert customer and staff and returns, said

    # The customer: pays online on the test checkout, turns autopay on.
    page = browser.new_context(viewport=DESK).new_page()
    walked = _demo_walk().walk(page, url=live_server.url, email=customer.group(1), password=customer.group(2),
                               say=lambda words: None)
    assert "is posted" not in walked["receipt"] and walked["amount"] in walked["receipt"]
    assert Payment.objects.filter(source="online:test").count() == 1
    assert AutopayEnrolment.objects.filter(email=customer.group(1), status="active").exists()

    # The Clerk prepares the day's debit file: listed, nothing posted.
    password = staff.group(1)
    clerk = _admin_sign_in(browser, live_server.url, "clerk", password)
    expect(clerk.locator(".test-payments")).to_contain_text("no money moves")
    clerk.goto(live_server.url + "/admin/remittance/achfile/")
    clerk.get_by_role("link", name="Prepare the debit file").click()
    clerk.get_by_role("button", name="Prepare the file").click()
    expect(clerk.get_by_text("Waiting for a supervisor or an approver who did not prepare it")).to_be_visible()
    debits = clerk.get_by_role("table", name=re.compile("The debits it will post"))
    expect(debits.locator("tbody tr")).to_have_count(3)
    file = AchFile.objects.get(status="pending")
    assert not Payment.objects.filter(reference__startswith=f"ACH-{file.pk}-").exists()

    # A Supervisor approves it and downloads it for the bank.
    supervisor = _admin_sign_in(browser, live_server.url, "supervisor", password)
    supervisor.goto(live_server.url + "/admin/remittance/achfile/")
    supervisor.get_by_role("link", name="Waiting for a supervisor: see its debits").click()
    supervisor.get_by_role("button", name="Approve: post the debits").click()
    expect(supervisor.get_by_text(re.compile(r"approved: 3 debit\(s\)"))).to_be_visible()
    with supervisor.expect_download() as download:
        supervisor.get_by_role("link", name="Download the file for the bank").click()
    text = Path(download.value.path()).read_text()
    assert text.startswith("101") and download.value.suggested_filename.endswith("-A.txt")
    assert Payment.objects.filter(reference__startswith=f"ACH-{file.pk}-").count() == 3

    # The Clerk reads the bank's returns file the demo wrote (the debit of the file made three days ago).
    clerk.goto(live_server.url + "/admin/remittance/achfile/")
    clerk.get_by_role("link", name="Read a returns file").click()
    clerk.get_by_label("File from the bank").set_input_files(returns.group(1))
    clerk.get_by_role("button", name="Read the returns").click()
    expect(clerk.get_by_text(re.compile(r"1 debit\(s\) returned and reversed"))).to_be_visible()
    assert PaymentReversal.objects.filter(payment__reference__startswith="ACH-").count() == 1

    # The Treasurer exports the journal.
    treasurer = _admin_sign_in(browser, live_server.url, "treasurer", password)
    treasurer.goto(live_server.url + "/admin/office/dayclose/")
    treasurer.get_by_role("link", name="General ledger journal").click()
    with treasurer.expect_download() as journal:
        treasurer.get_by_role("button", name="Download CSV").click()
    rows = list(csv.reader(io.StringIO(Path(journal.value.path()).read_text())))
    assert rows[0] == list(CSV_HEADER) and len(rows) > 1  # today's payments, the debits and the return
    assert {row[1] for row in rows[1:]} == {timezone.localdate().isoformat()}
