"""The clerk's reworked screens and the customer's case page, in Debian's chromium on a desk (1,280 px) and a phone
(375 px), each signed in as the role that does the work: the Supervisor voids a misread bill and bills it again from
the corrected reading, with no run added; the Clerk's "Pay past due" fills the counter's amount; the aging report
narrowed to a book fits the screen; the delinquency list narrowed and ordered; an alert "do not shut off" set from
the account holds the shut-off and shows on the crew's day sheet; the dashboard fits without the list of every
page; the customer's case page names one amount that stops the shut-off.

With $SCREENS_DIR set (``make screens``), each keeps a picture of its page for the clerk's guide (docs/screens/).
"""

import io
import re
from datetime import date

import pytest
from django.core.management import call_command
from django.urls import reverse

from accounts.models import AccountAlert, PortalLink
from billing.models import Bill, BillingRun
from core.clock import today
from fieldwork.services import field_order_create
from termination.models import TerminationCase
from tests.billing.steps import account_with_meter, read
from tests.browser import DESK, NARROW, needs_chromium, screen
from tests.office.conftest import staff
from tests.portal.conftest import PASSWORD, billed_account, customer
from tests.reports.steps import ON, billed_village
from tests.termination.steps import delinquent_account, refused, terminated_case

pytestmark = [pytest.mark.browser, needs_chromium, pytest.mark.django_db(transaction=True)]

SIZES = pytest.mark.parametrize("viewport", [DESK, NARROW], ids=["1280px", "375px"])


@pytest.fixture
def sign_in(mineola, browser, live_server, settings, tmp_path):
    """A page signed in to the admin as a new user of the group, at the viewport."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.BILL_PDFS_ON_ISSUE = False

    def signed_in(username: str, group: str, viewport):
        user = staff(username, group)
        user.set_password(PASSWORD)
        user.save()
        page = browser.new_context(viewport=viewport).new_page()
        page.goto(live_server.url + "/admin/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        return page

    return signed_in


def fits(page, viewport) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], "the page scrolls sideways"


@SIZES
def test_the_supervisor_bills_a_misread_bill_again_from_the_corrected_reading(sign_in, live_server, viewport):
    from playwright.sync_api import expect

    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    call_command("run_billing", "--date", "2026-02-01", "--no-progress", stdout=io.StringIO())
    bill, runs = Bill.objects.get(), BillingRun.objects.count()
    page = sign_in("sam", "Supervisor", viewport)
    page.goto(live_server.url + reverse("admin:billing_bill_change", args=[bill.pk]))
    page.get_by_role("link", name="Void and bill again").click()
    expect(page.locator("body")).to_contain_text("1,062,500 gal on Jan 12, 2026")
    page.get_by_label("Internal note").fill("reader keyed 1,062,500 for 1,262,500")
    page.get_by_label("Corrected closing reading").fill("1,262,500")
    fits(page, viewport)
    screen(page, f"rebill-{viewport['width']}")
    page.get_by_role("button", name="Void and bill again").click()
    expect(page.locator(".messagelist")).to_contain_text(f"bill {bill.number}-2 replaces it: $956.13 (was $186.13)")
    new = Bill.objects.exclude(status=Bill.Status.VOID).get()
    assert new.total.amount == 956.13 or str(new.total.amount) == "956.13"
    assert BillingRun.objects.count() == runs  # no run added
    page.goto(live_server.url + reverse("admin:billing_billingrun_changelist"))
    expect(page.locator("#result_list tbody tr")).to_have_count(runs)


@SIZES
def test_pay_past_due_fills_the_counters_amount(sign_in, live_server, viewport):
    from playwright.sync_api import expect

    account = billed_account()
    call_command("assess_penalties", "--date", today().isoformat(), "--no-progress", stdout=io.StringIO())
    page = sign_in("clara", "Clerk", viewport)
    page.goto(live_server.url + reverse("admin:billing_payment_counter") + f"?account={account.account_no}")
    expect(page.locator("#counter-name")).to_have_text(account.owner.name)
    past_due = page.locator("#counter-past-due").inner_text().replace("$", "").replace(",", "")
    page.get_by_role("button", name=re.compile("Pay past due")).click()
    expect(page.get_by_label("Amount ($)")).to_have_value(past_due)
    fits(page, viewport)
    screen(page, f"counter-{viewport['width']}")


@SIZES
def test_the_aging_report_narrowed_to_a_book_fits_the_screen(sign_in, live_server, viewport):
    from playwright.sync_api import expect

    billed_village()
    page = sign_in("clara", "Clerk", viewport)
    page.goto(live_server.url + reverse("admin:reports"))
    form = page.locator("#report-aging")
    form.get_by_label("As of").fill(ON)
    form.get_by_label("Book").fill("3")
    form.get_by_role("button", name="Go").click()
    result = page.locator("#report-aging-1")
    expect(result.locator("tbody tr")).to_have_count(2)  # the account and the total
    expect(result).to_contain_text("3-0001")
    expect(result).not_to_contain_text("1-0001")
    expect(page.locator("#report-result")).to_contain_text("Only book 3: 1 account of 4.")
    fits(page, viewport)
    if viewport is DESK:
        balance = result.get_by_role("columnheader", name=re.compile("Balance"))
        box = balance.bounding_box()
        assert box["x"] + box["width"] <= viewport["width"], "the Balance column is on the screen"
    # A column's header orders the rows by it.
    page.locator("#report-aging-1").get_by_role("link", name="Balance").click()
    expect(page.locator("#report-aging-1 th[aria-sort]")).to_have_attribute("aria-sort", "descending")
    screen(page, f"aging-report-{viewport['width']}")


@SIZES
def test_the_delinquency_list_narrowed_and_ordered(sign_in, live_server, viewport):
    from playwright.sync_api import expect

    first, _ = delinquent_account()
    second, _ = delinquent_account(occupant=False)
    type(first).objects.filter(pk=second.pk).update(book=2)
    page = sign_in("clara", "Clerk", viewport)
    page.goto(live_server.url + reverse("admin:termination_terminationcase_delinquent") + "?as_of=2026-03-20")
    expect(page.locator("#delinquent-count")).to_contain_text("2 accounts, $372.26")
    page.get_by_label("Book").fill("2")
    page.get_by_role("button", name="Narrow the list").click()
    expect(page.locator("#delinquent-count")).to_contain_text("1 account, $186.13 of the 2 listed")
    expect(page.locator("#delinquent-accounts")).to_contain_text(second.account_no)
    page.get_by_role("link", name="Amount").click()
    expect(page.locator("#delinquent-accounts th[aria-sort]")).to_contain_text("Amount")
    fits(page, viewport)
    screen(page, f"delinquency-list-{viewport['width']}")


@SIZES
def test_an_alert_do_not_shut_off_holds_the_shutoff_and_shows_on_the_day_sheet(sign_in, live_server, viewport):
    from playwright.sync_api import expect

    account, _ = delinquent_account(occupant=False)
    number = terminated_case(account, occupant=False)
    page = sign_in("clara", "Clerk", viewport)
    page.goto(live_server.url + reverse("admin:accounts_account_change", args=[account.pk]))
    page.get_by_role("link", name="Add an alert").click()
    page.get_by_label("Kind").select_option("no_shutoff")
    page.get_by_label("Note").fill("elderly resident; call first")
    page.get_by_label("Starts on").fill("2026-05-01")
    page.locator("input[name=_save]").click()
    assert AccountAlert.objects.get(account=account).kind == "no_shutoff"
    said = refused("shutoff", number, date_="2026-05-05")
    assert "account alert: Do not shut off without the supervisor" in said
    assert TerminationCase.objects.get(number=number).status != "ordered"
    page.goto(live_server.url + reverse("admin:accounts_account_change", args=[account.pk]))
    expect(page.locator("#account-glance")).to_contain_text("Do not shut off without the supervisor")
    field_order_create(account=account, kind="reread", reason="reading looks high", scheduled_on=today(),
                       actor=None)
    page.goto(live_server.url + reverse("admin:fieldwork_fieldorder_day"))
    expect(page.locator("body")).to_contain_text("Do not shut off without the supervisor (elderly resident; call first)")
    fits(page, viewport)
    screen(page, f"day-sheet-alert-{viewport['width']}")


@SIZES
def test_the_dashboard_fits_without_the_list_of_every_page(sign_in, live_server, viewport):
    from playwright.sync_api import expect

    page = sign_in("clara", "Clerk", viewport)
    expect(page.get_by_role("heading", name=re.compile("Today's work"))).to_be_visible()
    expect(page.locator("#all-pages")).not_to_have_attribute("open", "")
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height <= (1_400 if viewport is DESK else 3_200), f"the dashboard is {height} px tall"
    screen(page, f"dashboard-{viewport['width']}")
    page.get_by_text("Every page of the office, by app").click()
    expect(page.locator("#reports-pages")).to_be_visible()
    fits(page, viewport)


@SIZES
def test_the_customers_case_page_names_one_amount(browser, live_server, mineola, settings, tmp_path, viewport):

    settings.MEDIA_ROOT = tmp_path / "media"
    account, _ = delinquent_account(occupant=False)
    number = terminated_case(account, occupant=False)
    user = customer("owner@example.org")
    PortalLink.objects.create(user=user, account=account)
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(live_server.url + reverse("portal:login"))
    page.get_by_label("Email").fill("owner@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name=re.compile("Sign in")).click()
    page.goto(live_server.url + reverse("portal:termination_case", kwargs={"number": number}))
    text = page.locator("main").inner_text()
    assert len(re.findall(r"To stop the shut-off, pay", text)) == 1
    assert "pay now" not in text.lower()
    assert "Amount delinquent" not in text  # the case's own amount is "the case is for", everywhere
    fits(page, viewport)
    screen(page, f"portal-case-{viewport['width']}")
