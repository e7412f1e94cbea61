"""The account as an inquiry, in Debian's chromium, signed in as the Clerk, on a desk (1,280 px) and a phone
(375 px): it opens read-only on its summary, with tabs for its parts (a click, the arrow keys or the address's
fragment chooses one); every action is a button to its own form above the tabs, clear of the heading; the
account's fields are edited on purpose, from "Edit the account", and saving comes back to the inquiry.
"""

import pytest
from django.urls import reverse

from accounts.models import Account
from tests.browser import DESK, NARROW, needs_chromium, screen
from tests.factories import clerk_user
from tests.portal.conftest import PASSWORD, billed_account

pytestmark = [pytest.mark.browser, needs_chromium, pytest.mark.django_db(transaction=True)]

TABS = ["Summary", "Bills", "Payments and ledger", "Readings", "Notes", "Work orders", "Notices",
        "Cases and plans", "Account details"]


@pytest.fixture
def clerk_page(mineola, browser, live_server, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.BILL_PDFS_ON_ISSUE = False
    user = clerk_user("clerk")
    user.set_password(PASSWORD)
    user.save()

    def open_as_clerk(viewport):
        page = browser.new_context(viewport=viewport).new_page()
        page.goto(live_server.url + "/admin/login/")
        page.get_by_label("Username").fill("clerk")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        return page

    return open_as_clerk


@pytest.mark.parametrize("viewport", [DESK, NARROW], ids=["1280px", "375px"])
def test_the_account_opens_as_a_read_only_inquiry_with_tabs(clerk_page, live_server, viewport):
    from playwright.sync_api import expect

    account = billed_account()
    page = clerk_page(viewport)
    page.goto(live_server.url + reverse("admin:accounts_account_change", args=[account.pk]))

    heading = page.get_by_role("heading", name=f"Account {account.account_no}", exact=True)
    expect(heading).to_be_visible()
    tabs = page.get_by_role("tab")
    expect(tabs).to_have_text(TABS)
    expect(page.get_by_role("tab", name="Summary")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#account-glance")).to_be_visible()
    expect(page.locator("#account-bills")).to_be_hidden()
    # Read-only: no field to type in, no Save.
    assert page.locator("#account_form select, #account_form input[type=text]").count() == 0
    assert page.locator("input[name=_save]").count() == 0
    # The actions sit in their own row under the heading, never over it.
    actions = page.get_by_role("navigation", name="Actions on this account")
    expect(actions.get_by_role("link", name="Post a payment")).to_be_visible()
    assert heading.bounding_box()["y"] + heading.bounding_box()["height"] <= actions.bounding_box()["y"]
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    screen(page, f"account-inquiry-{viewport['width']}")

    # A tab shows its part alone; the arrow keys move along the tabs.
    page.get_by_role("tab", name="Bills").click()
    expect(page.locator("#account-bills")).to_be_visible()
    expect(page.locator("#account-bills")).to_contain_text(account.bills.get().number)
    expect(page.locator("#account-glance")).to_be_hidden()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Payments and ledger")).to_be_focused()
    expect(page.locator("#account-ledger")).to_be_visible()
    expect(page.locator("#account-ledger")).to_contain_text("186.13")
    page.get_by_role("tab", name="Readings").click()
    expect(page.locator("#account-readings")).to_contain_text("Jan 12, 2026")
    screen(page, f"account-inquiry-readings-{viewport['width']}")
    # The address's fragment opens its tab (where a note's form comes back to).
    page.goto(live_server.url + reverse("admin:accounts_account_change", args=[account.pk]) + "#account-notes")
    expect(page.get_by_role("tab", name="Notes")).to_have_attribute("aria-selected", "true")

    # Edited on purpose: the form, saved, comes back to the inquiry.
    page.get_by_role("link", name="Edit the account").click()
    expect(page.get_by_role("heading", name=f"Edit account {account.account_no}")).to_be_visible()
    page.get_by_label("Status").select_option(Account.Status.VACANT)
    page.locator("input[name=_save]").click()
    expect(page.get_by_role("heading", name=f"Account {account.account_no}", exact=True)).to_be_visible()
    expect(page.locator("#account-glance")).to_contain_text("Status: Vacant")
    account.refresh_from_db()
    assert account.status == Account.Status.VACANT
