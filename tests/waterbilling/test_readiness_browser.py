"""The Supervisor, in Debian's chromium through Playwright, signs in, follows the home page's *Before going live*
to the readiness page, and reads what is left to settle — a page that passes WCAG 2.1 AA (axe).

Skips where /usr/bin/chromium is missing (``apt-get install chromium``; CI installs it)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from tests.browser import DESK, axe_violations, needs_chromium
from tests.portal.conftest import PASSWORD

pytestmark = [pytest.mark.browser, needs_chromium]


def test_the_supervisor_reads_what_is_left_before_going_live(live_server, mineola, browser):
    from playwright.sync_api import expect

    user = get_user_model().objects.create_user("supervisor", password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get(name="Supervisor"))
    page = browser.new_context(viewport=DESK).new_page()
    page.goto(live_server.url + "/admin/")
    page.get_by_label("Username").fill("supervisor")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    section = page.locator("#dashboard-readiness")
    expect(section).to_contain_text("to settle before going live")
    section.get_by_role("link", name=re.compile("to settle before going live")).click()
    expect(page.get_by_role("heading", name="Go-live readiness")).to_be_visible()
    table = page.get_by_role("table", name="What to settle before going live")
    expect(table).to_contain_text("holds the preset's sample rates")
    expect(table).to_contain_text("no backups are configured")
    assert axe_violations(page) == []
