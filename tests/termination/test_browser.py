"""Browser tests of termination: Playwright driving Debian's chromium against the live test server.

A customer served with a termination notice asks for the hearing in writing in the portal (the account page's
box → the case page, ``/portal/cases/<number>/``); the hearing officer then opens the case in the admin and
records the determination. The served notice is mailed 15 days before today with the hearing today, and
received 3 days ago, so a request made today is timely and the determination can be made today.

They skip where /usr/bin/chromium is missing (``apt-get install chromium``; CI installs it), and the portal
half where the portal has no case pages.
"""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import NoReverseMatch, reverse

from accounts.models import PortalLink
from core.clock import today
from termination.models import TerminationCase
from termination.services.cases import case_open, hearing_request, notice_serve
from tests.browser import PHONE, needs_chromium
from tests.portal.conftest import PASSWORD, billed_account, customer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.citation("§ 45.32", "§§ 45.33–45.34"),
    needs_chromium,
]



@pytest.fixture
def served_case(mineola, settings, tmp_path):
    """A billed, unpaid account whose owner was served by certified mail 15 days ago (received 3 days ago)
    with the hearing today; the owner uses the portal."""
    settings.MEDIA_ROOT = tmp_path / "media"
    account = billed_account()  # $186.13 billed 2026-02-01, due 2026-03-01: delinquent from 2026-03-02
    day = today()
    case = case_open(account=account, grounds="nonpayment", as_of=day - timedelta(days=17), actor=None)
    notice_serve(case=case, role="owner", method="certified_mail", article_number="7019 0700 0000 1234 5678",
                 served_on=day - timedelta(days=15), received_on=day - timedelta(days=3), hearing_on=day,
                 actor=None)
    owner = customer("owner@example.org")
    PortalLink.objects.create(user=owner, account=account)
    return TerminationCase.objects.get(pk=case.pk)


def hearing_officer():
    user = get_user_model().objects.create_user("officer", password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get(name="Hearing officer"))
    return user


def record_determination_in_the_admin(page, live_server, case: TerminationCase) -> None:
    """The hearing officer signs in to the admin, opens the case from the list and records the determination."""
    from playwright.sync_api import expect

    page.goto(live_server.url + "/admin/")
    page.get_by_label("Username").fill("officer")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#user-tools")).to_contain_text("officer")
    page.goto(live_server.url + reverse("admin:termination_terminationcase_changelist"))
    page.get_by_role("link", name=case.number).click()
    expect(page.locator("body")).to_contain_text("Hearing requested")
    expect(page.get_by_role("link", name="Issue shut-off order")).to_have_count(0)
    page.get_by_role("link", name="Record determination").click()
    page.get_by_label("Outcome").select_option("terminate")
    expect(page.get_by_label("Determined on")).to_have_value(today().isoformat())
    page.get_by_role("button", name="Record the determination").click()
    expect(page.locator(".messagelist")).to_contain_text("Determination recorded: terminate service")
    expect(page.locator("body")).to_contain_text("Termination determined: appeal window open")
    expect(page.get_by_role("link", name="Determination PDF")).to_be_visible()
    case.refresh_from_db()
    assert (case.status, case.outcome, case.by_default) == ("determined", "terminate", False)
    assert case.determination_mailed_on == today()


def test_customer_requests_the_hearing_online_and_the_hearing_officer_determines(live_server, served_case,
                                                                                  browser):
    from playwright.sync_api import expect

    case = served_case
    try:
        case_path = reverse("portal:termination_case", args=[case.number])
    except NoReverseMatch:
        pytest.skip("the portal has no termination case pages (portal:termination_case)")
    hearing_officer()
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(live_server.url + reverse("portal:login"))
    page.get_by_label("Email").fill("owner@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.goto(live_server.url + reverse("portal:account", args=[case.account.public_id]))
    page.locator(f'a[href="{case_path}"]').first.click()
    expect(page).to_have_url(live_server.url + case_path)
    page.get_by_label("Your written request").fill("The bill is wrong; I ask to be heard.")
    page.get_by_role("button", name="Request a hearing").click()
    expect(page.get_by_text("Your request was received on")).to_be_visible()
    case.refresh_from_db()
    assert case.status == "requested" and case.request_received_on == today() and not case.request_late
    assert case.request_text == "The bill is wrong; I ask to be heard."
    context.close()

    context = browser.new_context()
    record_determination_in_the_admin(context.new_page(), live_server, case)
    context.close()


def test_hearing_officer_determines_a_case_whose_request_came_online(live_server, served_case, browser):
    case = served_case
    hearing_request(case=case, received_on=today(), actor=None, via="portal", text="I ask to be heard.",
                    by="the customer online")
    hearing_officer()
    context = browser.new_context()
    record_determination_in_the_admin(context.new_page(), live_server, case)
    context.close()
