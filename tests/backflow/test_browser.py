"""Browser tests of backflow testing: Playwright driving Debian's chromium against the live test server.

A certified tester signs in to the portal, opens "Backflow tester" and submits a passing test of an RPZ whose
last test was a year ago (a mistyped serial is refused beside its field first); the test waits for the clerk.
The clerk then opens the test in the admin and presses "Accept test", and the device's next test falls due a
year after the new test (Mineola's annual test is office policy: Chapter 45 sets no frequency).

They skip where /usr/bin/chromium is missing (``apt-get install chromium``; CI installs it), and the admin half
where the admin has no "Accept test" button (``admin:backflow_devicetest_accept``).
"""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import NoReverseMatch, reverse

from backflow.models import DeviceTest
from backflow.services import compliance as svc
from core.clock import today
from core.dates import add_months
from tests.browser import PHONE, needs_chromium
from tests.factories import AccountFactory, PremisesFactory
from tests.portal.conftest import PASSWORD, customer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.citation("policy"),
    needs_chromium,
]



@pytest.fixture
def device_a_year_since_its_test(mineola, settings, tmp_path):
    """An RPZ at 12 Willis Avenue installed two years ago and last tested (accepted) a year ago, so due about
    today; Pat, a certified tester with a portal login."""
    settings.MEDIA_ROOT = tmp_path / "media"
    day = today()
    account = AccountFactory(premises=PremisesFactory(service_address="12 Willis Avenue"))
    device = svc.device_register(account=account, type="RPZ", serial="RP-100", size="1 1/2",
                                 installed_on=add_months(day, -24), actor=None)
    earlier = svc.tester_register(certification_no="NY-1000", name="Earl Earlier",
                                  certification_expires=add_months(day, 12))
    last = add_months(day, -12)
    svc.test_record(device=device, tester=earlier, tested_on=last, result="pass", actor=None, as_of=last)
    pat = svc.tester_register(certification_no="NY-4471", name="Pat Tester", certification_expires=add_months(day, 12),
                              gauge_calibrated_on=day - timedelta(days=90))
    pat.user = customer("pat@example.org")
    pat.save(update_fields=["user"])
    return device


def submit_in_the_portal(browser, live_server) -> DeviceTest:
    """Pat signs in on a phone, opens "Backflow tester", mistypes the serial, corrects it and submits a passing
    test done today; the confirmation says the village office will review it."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(live_server.url + reverse("portal:login"))
    page.get_by_label("Email").fill("pat@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Backflow tester").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Backflow tester")
    expect(page.locator("body")).to_contain_text("NY-4471")
    page.get_by_role("link", name="Submit a test").click()
    page.get_by_label("Device serial number").fill("RP-10")
    page.get_by_label("Date tested").fill(today().isoformat())
    page.get_by_label("Pass").check()
    page.get_by_label("Check valve 1 (psid)").fill("5.4")
    page.get_by_label("Check valve 2 (psid)").fill("2.2")
    page.get_by_label("Relief valve opened at (psid)").fill("3.1")
    page.get_by_role("button", name="Submit the test").click()
    expect(page.locator("#id_serial_error")).to_have_text("No device with serial 'RP-10'")
    expect(page.get_by_label("Check valve 1 (psid)")).to_have_value("5.4")
    page.get_by_label("Device serial number").fill("RP-100")
    page.get_by_role("button", name="Submit the test").click()
    expect(page.get_by_text("Test received.")).to_be_visible()
    expect(page.locator("body")).to_contain_text("The village office will review it")
    expect(page.locator("body")).to_contain_text("12 Willis Avenue")
    page.get_by_role("link", name="Backflow tester").first.click()
    expect(page.locator("tbody tr").first).to_contain_text("Submitted: awaiting review")
    context.close()
    test = DeviceTest.objects.get(tester__certification_no="NY-4471")
    assert (test.device.serial, test.tested_on, test.result, test.status, test.submitted_online) == (
        "RP-100", today(), "pass", "submitted", True)
    return test


def test_a_tester_submits_a_test_online_and_it_waits_for_the_clerk(live_server, device_a_year_since_its_test,
                                                                   browser):
    device = device_a_year_since_its_test
    submit_in_the_portal(browser, live_server)
    # Not yet accepted: the device is still due a year after its last accepted test.
    assert svc.device_due(device, as_of=today()).due_on == add_months(add_months(today(), -12), 12)


def test_the_clerk_accepts_a_test_submitted_online_and_the_device_is_due_a_year_later(
        live_server, device_a_year_since_its_test, browser):
    from playwright.sync_api import expect

    device = device_a_year_since_its_test
    try:
        reverse("admin:backflow_devicetest_accept", args=[1])
    except NoReverseMatch:
        pytest.skip('the admin has no "Accept test" button yet (admin:backflow_devicetest_accept)')
    test = submit_in_the_portal(browser, live_server)
    get_user_model().objects.create_superuser("clerk", "clerk@example.org", PASSWORD)
    accept_path = reverse("admin:backflow_devicetest_accept", args=[test.pk])

    context = browser.new_context()
    page = context.new_page()
    page.goto(live_server.url + "/admin/")
    page.get_by_label("Username").fill("clerk")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#user-tools")).to_contain_text("clerk")
    page.goto(live_server.url + reverse("admin:backflow_devicetest_change", args=[test.pk]))
    with page.expect_response(lambda r: r.url.endswith(accept_path) and r.request.method == "POST"):
        page.get_by_role("button", name="Accept test").click()
    page.wait_for_load_state()
    context.close()

    test.refresh_from_db()
    assert test.status == "accepted" and test.reviewed_by.username == "clerk"
    assert svc.device_due(device, as_of=today()).due_on == add_months(test.tested_on, 12)
