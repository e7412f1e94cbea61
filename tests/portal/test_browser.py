"""Browser tests: Playwright driving Debian's chromium against the live test server.

They skip where /usr/bin/chromium is missing (``apt-get install chromium``; CI installs it). Set
``PORTAL_SCREENSHOT_DIR`` to keep phone-width screenshots of the portal pages for a look by eye.
"""

import os
import re
from datetime import date
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from meters.models import Reading
from tests.browser import PHONE, needs_chromium
from tests.factories import AccountFactory, InstallationFactory, MeterFactory

from .conftest import PASSWORD, billed_account

pytestmark = [
    pytest.mark.browser,
    needs_chromium,
]



def _shot(page, name: str) -> None:
    folder = os.environ.get("PORTAL_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def test_customer_signs_up_links_an_account_and_downloads_a_bill(live_server, mineola, browser, settings, tmp_path):
    from playwright.sync_api import expect

    settings.MEDIA_ROOT = tmp_path / "media"
    account = billed_account()
    context = browser.new_context(viewport=PHONE, accept_downloads=True)
    page = context.new_page()
    page.goto(live_server.url + "/")
    _shot(page, "1-welcome")
    page.get_by_role("link", name="Sign up").first.click()
    page.get_by_label("Email").fill("pat@example.org")
    _shot(page, "2-signup")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    (message,) = mail.outbox
    page.goto(live_server.url + re.search(r"https?://[^/\s]+(/portal/signup/finish/\S+/)", message.body).group(1))
    expect(page.get_by_text("pat@example.org")).to_be_visible()
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password again").fill(PASSWORD)
    _shot(page, "2-signup-finish")
    page.get_by_role("button", name="Finish signing up").click()
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()
    _shot(page, "3-home")

    # A wrong access code first: one generic message, and the form can be tried again.
    page.get_by_label("Account number", exact=True).fill(account.account_no)
    page.get_by_label("Access code", exact=True).fill("WRONG234")
    page.get_by_role("button", name="Link account").click()
    expect(page.locator("#id_access_code_error")).to_contain_text("do not match our records")
    _shot(page, "4-link-error")
    page.get_by_label("Account number", exact=True).fill(account.account_no)
    page.get_by_label("Access code", exact=True).fill(account.access_code.lower())
    page.get_by_role("button", name="Link account").click()
    expect(page.get_by_role("heading", name=f"Account {account.account_no}")).to_be_visible()
    expect(page.locator(".balance")).to_have_text("$186.13")
    expect(page.locator("svg.consumption-chart")).to_be_visible()
    _shot(page, "5-account")

    page.get_by_role("link", name="Feb 1, 2026 bill", exact=True).click()
    expect(page.get_by_role("heading", name=re.compile(r"^Bill "))).to_be_visible()
    # On the phone each charge's section is read under it (the Ordinance column is for wider screens).
    expect(page.locator(".narrow-only", has_text="§ 45.28 A(1), A(2)(a)").first).to_be_visible()
    _shot(page, "6-bill")
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download the bill (PDF)").click()
    download = download_info.value
    assert download.suggested_filename.startswith("water-bill-") and download.suggested_filename.endswith(".pdf")
    assert Path(download.path()).read_bytes().startswith(b"%PDF")
    # Keyboard users meet the skip link first on every page.
    page.reload()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to main content")).to_be_focused()
    context.close()


def test_clerk_starts_a_billing_run_in_the_admin_and_sees_it_finish(live_server, mineola, browser):
    from playwright.sync_api import expect

    # An account due on 2026-02-01 (book 1, read in January), created without billing it.
    account = AccountFactory(book=1)
    meter = MeterFactory()
    InstallationFactory(meter=meter, account=account, installed_on=date(2025, 7, 10))
    Reading.objects.create(meter=meter, read_on=date(2025, 7, 10), value=1_000_000, source="install")
    Reading.objects.create(meter=meter, read_on=date(2026, 1, 12), value=1_062_500)
    get_user_model().objects.create_superuser("clerk", "clerk@example.org", PASSWORD)

    context = browser.new_context()
    page = context.new_page()
    page.goto(live_server.url + "/admin/")
    page.get_by_label("Username").fill("clerk")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#user-tools")).to_contain_text("clerk")
    page.goto(live_server.url + "/admin/billing/billingrun/start/")
    page.locator("input[name=run_on]").fill("2026-02-01")
    page.get_by_role("button", name="Start billing run").click()
    expect(page.locator("body")).to_contain_text(re.compile(r"Status:\s*Done"), timeout=30_000)
    expect(page.locator("body")).to_contain_text(re.compile(r"Bills issued:\s*1(?!\d)"))
    context.close()


def test_customer_with_a_termination_notice_asks_for_the_hearing_online(live_server, mineola, browser, settings,
                                                                        tmp_path):
    from playwright.sync_api import expect

    from accounts.models import PortalLink
    from termination.models import TerminationCase
    from tests.termination.steps import delinquent_account, served_case

    settings.MEDIA_ROOT = tmp_path / "media"
    account, _ = delinquent_account()
    number = served_case(account)
    user = get_user_model().objects.create_user("quinn@example.org", "quinn@example.org", PASSWORD)
    PortalLink.objects.create(user=user, account=account)

    context = browser.new_context(viewport=PHONE, accept_downloads=True)
    page = context.new_page()
    page.goto(live_server.url + "/portal/login/")
    page.get_by_label("Email").fill("quinn@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name=f"Account {account.account_no}").click()
    box = page.locator(".notice-box")
    expect(box).to_contain_text(f"case {number}")
    expect(box).to_contain_text("$186.13")
    _shot(page, "7-account-with-termination-notice")

    box.get_by_role("link", name="See the case and ask for a hearing").click()
    expect(page.get_by_role("heading", name=f"Termination of water service: case {number}")).to_be_visible()
    _shot(page, "8-termination-case")
    with page.expect_download() as download_info:
        page.get_by_role("link", name=re.compile(r"^Notice to the occupant")).click()
    assert Path(download_info.value.path()).read_bytes().startswith(b"%PDF")

    page.get_by_role("button", name="Request a hearing").click()
    expect(page.locator(".field-error")).to_contain_text("Write your request for a hearing")
    page.get_by_label("Your written request").fill("I ask for a hearing: the bill was paid at the counter.")
    page.get_by_role("button", name="Request a hearing").click()
    expect(page.locator(".messages")).to_contain_text("Your request was received on")
    expect(page.get_by_role("button", name="Request a hearing")).to_have_count(0)
    _shot(page, "9-termination-request-received")
    context.close()
    case = TerminationCase.objects.get(number=number)
    assert case.request_via == "portal" and case.request_text.endswith("paid at the counter.")
