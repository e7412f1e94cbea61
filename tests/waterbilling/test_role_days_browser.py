"""Each role's day in Debian's chromium through Playwright, signed in as that role (never the superuser), with axe
run on every page visited: the crew on a 375 px phone records a shut-off and a restore from its day sheet; the
hearing officer records a hearing and its determination on one lawful day from the docket; the clerk opens an account
by its number and waives a late charge from its ledger line; a supervisor withdraws their own refund request and an
approver approves the one asked again.

The accounts are Mineola's worked bill: $186.13 billed 2026-02-01, due March 1, unpaid (§ 45.29 D).
Skips where /usr/bin/chromium is missing (``apt-get install chromium``; CI installs it)."""

import re
from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from billing.models import PenaltyWaiver
from billing.services.payments import payment_post
from office.models import Refund
from termination.models import TerminationCase
from tests.billing.steps import run
from tests.browser import DESK, NARROW, axe_violations, needs_chromium, screen
from tests.termination.steps import delinquent_account, served_case, term, terminated_case

pytestmark = [pytest.mark.browser, needs_chromium, pytest.mark.django_db(transaction=True)]
PASSWORD = "a-long-pass-phrase-9"


def member(username: str, role: str):
    user = get_user_model().objects.create_user(username, password=PASSWORD, is_staff=True,
                                                first_name=username.title())
    user.groups.add(Group.objects.get(name=role))
    return user


def signed_in(browser, live_server, username: str, viewport=DESK):
    from playwright.sync_api import expect

    page = browser.new_context(viewport=viewport).new_page()
    page.goto(live_server.url + "/admin/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name=re.compile("Today's work"))).to_be_visible()
    return page


def clean(page) -> None:
    assert axe_violations(page) == [], page.url


def test_the_crew_records_a_shut_off_and_a_restore_from_a_phone(live_server, browser, mineola):
    from playwright.sync_api import expect

    account, _ = delinquent_account(occupant=False)
    number = terminated_case(account, occupant=False)
    term("shutoff", number, date_="2026-05-05")
    member("fred", "Field crew")
    page = signed_in(browser, live_server, "fred", viewport=NARROW)
    clean(page)
    page.get_by_role("link", name="Today's day sheet").first.click()
    expect(page.locator(".day-sheet")).to_contain_text(account.premises.service_address)
    clean(page)
    screen(page, "crew-day-sheet")
    page.get_by_role("link", name=re.compile(r"Record the shut-off")).click()
    clean(page)
    page.get_by_role("button", name="Record the shut-off").click()
    expect(page.locator(".messagelist")).to_contain_text("Service shut off on")
    assert TerminationCase.objects.get(number=number).status == "shut_off"
    payment_post(account_no=account.account_no, amount=Decimal("600.00"), paid_on=date(2026, 5, 6), reference="P")
    page.get_by_role("link", name="Restore service").click()
    clean(page)
    page.get_by_role("button", name="Restore service").click()
    expect(page.locator(".messagelist")).to_contain_text("Service restored on")
    clean(page)
    expect(page.get_by_role("link", name="Dismiss")).to_have_count(0)  # the office's steps are not the crew's


def test_the_hearing_officer_records_the_hearing_and_its_determination_from_the_docket(live_server, browser, mineola):
    from playwright.sync_api import expect

    account, _ = delinquent_account(occupant=False)
    number = served_case(account, occupant=False)
    term("request", number, "--received-on", "2026-04-10", date_="2026-04-10")
    member("olga", "Hearing officer")
    page = signed_in(browser, live_server, "olga")
    page.get_by_role("link", name=re.compile("at or past its hearing date")).click()
    expect(page.locator("#docket")).to_contain_text(number)
    clean(page)
    screen(page, "hearing-docket")
    page.get_by_role("link", name="Hearing and determination").click()
    expect(page.get_by_label("Held and determined on")).to_have_value("2026-04-16")
    clean(page)
    page.get_by_label("Who appeared").fill("the owner")
    page.get_by_label("Proof heard").fill("the bill of Feb 1 is unpaid")
    page.get_by_label("Outcome").select_option("terminate")
    page.get_by_label("Notice of the determination mailed on").fill("2026-04-16")
    page.get_by_role("button", name="Record the hearing and the determination").click()
    expect(page.locator(".messagelist")).to_contain_text("Hearing held and determination recorded on Apr 16, 2026")
    case = TerminationCase.objects.get(number=number)
    assert (case.status, case.determined_on, case.attendance) == ("determined", date(2026, 4, 16), "the owner")
    clean(page)


def test_the_clerk_opens_an_account_by_number_and_waives_a_late_charge(live_server, browser, mineola):
    from playwright.sync_api import expect

    account, _ = delinquent_account(occupant=False)
    run("assess_penalties", "--date", "2026-03-05")
    member("clara", "Clerk")
    page = signed_in(browser, live_server, "clara")
    page.get_by_label("Find an account").fill(account.account_no)
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("heading", name=f"Account {account.account_no}")).to_be_visible()
    clean(page)
    page.get_by_role("tab", name="Payments and ledger").click()
    page.get_by_role("link", name="Waive this charge").first.click()
    clean(page)
    page.get_by_label("Reason").fill("first late payment in 20 years")
    page.get_by_role("button", name=re.compile("Waive")).click()
    expect(page.get_by_role("heading", name=f"Account {account.account_no}")).to_be_visible()
    assert PenaltyWaiver.objects.get(account=account).status == "approved"


def test_a_supervisor_withdraws_their_request_and_an_approver_approves_the_next(live_server, browser, mineola):
    from playwright.sync_api import expect

    account, _ = delinquent_account(occupant=False)
    payment_post(account_no=account.account_no, amount=Decimal("250.00"), paid_on=date(2026, 2, 20), reference="C")
    boss, _mayor = member("sam", "Supervisor"), member("mayor", "Approver")
    from core.clock import today
    from office.services import refund_request

    mine = refund_request(account=account, amount=Decimal("63.87"), reason="moved away", as_of=today(), actor=boss)
    page = signed_in(browser, live_server, "sam")
    page.goto(f"{live_server.url}/admin/office/refund/{mine.pk}/change/")
    expect(page.locator("#approval-who")).to_contain_text("Mayor (Approver)")
    clean(page)
    page.get_by_role("link", name="Withdraw my request").click()
    clean(page)
    page.get_by_label("Why (optional)").fill("the owner will pick it up at the window")
    page.get_by_role("button", name="Withdraw my request").click()
    expect(page.locator(".messagelist")).to_contain_text("is withdrawn: nobody will decide it")
    assert Refund.objects.get(pk=mine.pk).status == "withdrawn"
    again = refund_request(account=account, amount=Decimal("63.87"), reason="by check after all", as_of=today(),
                           actor=boss)
    page = signed_in(browser, live_server, "mayor")
    page.get_by_role("link", name="1 refund for you to approve or refuse").click()
    page.get_by_role("link", name=again.number).click()
    page.get_by_role("link", name="Approve or refuse").click()
    clean(page)
    page.get_by_label(re.compile("Approve: post it")).check()
    page.get_by_role("button", name="Record the decision").click()
    expect(page.locator(".messagelist")).to_contain_text(f"Refund {again.number} approved")
    assert Refund.objects.get(pk=again.pk).decided_by.username == "mayor"
