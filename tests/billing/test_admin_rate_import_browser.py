"""A supervisor adopts new rates from an OWRS file, in Debian's chromium through Playwright: the rate
schedules → "Import an OWRS rate file" → upload and check → preview a 5/8" bill of 20,422 gallons →
activate. The figures are worked out in ``test_admin_rate_import.py`` ($152.28).

Skips where /usr/bin/chromium is missing (``apt-get install chromium``; CI installs it).
"""

import re
from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from billing.models import RateSchedule
from tests.billing.test_admin_rate_import import CLASS_MAP, OWRS
from tests.browser import DESK, needs_chromium

pytestmark = [
    pytest.mark.browser,
    needs_chromium,
]

PASSWORD = "pw-for-browser-tests-7"


@pytest.fixture
def supervisor(mineola):
    user = get_user_model().objects.create_user("supervisor", password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get(name="Supervisor"))
    return user


def test_upload_preview_and_activate_an_owrs_file(live_server, supervisor, browser):
    from playwright.sync_api import expect

    page = browser.new_context(viewport=DESK).new_page()
    page.goto(live_server.url + "/admin/billing/rateschedule/")
    page.get_by_label("Username").fill("supervisor")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    page.get_by_role("link", name="Import an OWRS rate file").click()
    page.locator("#id_owrs_file").set_input_files(
        {"name": "rates.owrs", "mimeType": "application/yaml", "buffer": OWRS.encode()})
    page.get_by_label("Effective on").fill("2027-01-01")
    page.get_by_label("Class map").fill(CLASS_MAP)
    page.get_by_role("button", name="Check the file").click()

    expect(page.locator("#owrs-mapping")).to_contain_text("RESIDENTIAL_SINGLE")
    expect(page.locator("#owrs-mapping")).to_contain_text("COMMERCIAL")
    assert not RateSchedule.objects.filter(effective_on=date(2027, 1, 1)).exists()  # checked, not saved

    page.locator("#id_category").select_option("one_two_family")
    page.locator("#id_meter_size").select_option("5/8")
    page.locator("#id_gallons").fill("20422")
    page.get_by_role("button", name="Preview a bill").click()
    expect(page.locator("#owrs-preview-total")).to_have_text("$152.28")
    expect(page.locator("#owrs-preview-bill")).to_contain_text("$23.16")

    page.get_by_role("button", name="Activate this schedule").click()
    expect(page.locator("ul.messagelist")).to_contain_text(
        "Rate schedule effective 2027-01-01 added; bills dated 2027-01-01 and later are rated by it.")
    schedule = RateSchedule.objects.get(effective_on=date(2027, 1, 1))
    assert schedule.rules["structure"] == "owrs" and schedule.citation == "Resolution 2026-14"
    assert re.search(rf"/admin/billing/rateschedule/{schedule.pk}/change/$", page.url)
    expect(page.get_by_role("link", name="Download as OWRS")).to_be_visible()
