"""The account list on a clerk's 1280-px screen: the balance and past-due columns are in sight without scrolling."""

import pytest
from django.contrib.auth import get_user_model

from tests.browser import DESK, needs_chromium
from tests.portal.conftest import billed_account

pytestmark = [pytest.mark.browser, needs_chromium]


def test_balance_and_past_due_are_in_sight_at_1280_px(live_server, mineola, browser, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    account = billed_account()  # a long owner's name and service address, as a village's list has them
    account.owner.name = "Main Street Holdings Limited Liability Company, c/o Property Managers"
    account.owner.save()
    account.premises.service_address = "1234 Old Country Road, Apartment 5B, Rear Entrance off Willis Avenue"
    account.premises.save()
    get_user_model().objects.create_superuser("clerk", "clerk@example.org", "pw-Clerk-2026!")
    page = browser.new_context(viewport=DESK).new_page()
    page.goto(live_server.url + "/admin/login/")
    page.fill("#id_username", "clerk")
    page.fill("#id_password", "pw-Clerk-2026!")
    page.click("input[type=submit]")
    page.goto(live_server.url + "/admin/accounts/account/")
    for column in ("column-balance", "column-past_due"):
        box = page.locator(f"th.{column}").bounding_box()
        assert box is not None and box["x"] + box["width"] <= DESK["width"], (column, box)
    assert page.locator("td.field-balance").first.inner_text() == "$186.13"


def test_the_account_list_on_a_phone_passes_axe_as_the_clerk(live_server, mineola, browser, settings, tmp_path):
    """At 375 px, as the Clerk: the list with its recently opened accounts, its links' contrast included."""
    from django.contrib.auth.models import Group

    from tests.browser import NARROW, axe_violations

    settings.MEDIA_ROOT = tmp_path / "media"
    account = billed_account()
    clerk = get_user_model().objects.create_user("clara", password="pw-Clerk-2026!", is_staff=True)
    clerk.groups.add(Group.objects.get(name="Clerk"))
    page = browser.new_context(viewport=NARROW).new_page()
    page.goto(live_server.url + "/admin/login/")
    page.fill("#id_username", "clara")
    page.fill("#id_password", "pw-Clerk-2026!")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}/admin/accounts/account/{account.pk}/change/")
    page.goto(live_server.url + "/admin/accounts/account/")
    assert page.locator("#recent-accounts").inner_text().endswith(account.account_no)
    assert axe_violations(page) == []
