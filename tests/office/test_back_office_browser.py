"""The back office in a browser, as a clerk and a supervisor use it: a payment plan entered and then defaulted by a
missed installment; a run's print file made and its e-mails sent from the run's page; a credit refunded."""

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core import mail

from arrears.models import PaymentPlan, PlanInstallment
from arrears.services import plans_review
from billing.ledger.selectors import account_balances
from billing.models import BillingRun
from core.clock import today
from office.models import Refund
from ordinance.models import Utility
from tests.billing.steps import account_with_meter, read
from tests.billing.steps import run as run_command
from tests.browser import DESK, needs_chromium
from tests.office.conftest import staff
from tests.termination.steps import delinquent_account

pytestmark = [pytest.mark.browser, needs_chromium]


def signed_in(browser, live_server, username: str):
    page = browser.new_context(viewport=DESK, accept_downloads=True).new_page()
    page.goto(live_server.url + "/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "pw")
    page.click("input[type=submit]")
    return page


def test_a_clerk_enters_a_plan_and_a_missed_installment_defaults_it(live_server, mineola, browser, settings,
                                                                     tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    account, _ = delinquent_account(occupant=False)
    staff("clara", "Clerk")
    page = signed_in(browser, live_server, "clara")
    page.goto(f"{live_server.url}/admin/arrears/paymentplan/add/?account={account.account_no}")
    page.fill("#id_total", "186.13")
    page.fill("#id_down_payment", "36.13")
    page.fill("#id_installments", "3")
    page.click("input[type=submit]")
    page.wait_for_selector("text=print its letter for the customer")
    plan = PaymentPlan.objects.get()
    assert "In good standing" in page.inner_text("body")
    # Time passes (the plan's dates moved back 90 days): nothing was paid, and the nightly job reviews the plans.
    PaymentPlan.objects.filter(pk=plan.pk).update(started_on=plan.started_on - timedelta(days=90))
    for installment in PlanInstallment.objects.filter(plan=plan):
        PlanInstallment.objects.filter(pk=installment.pk).update(due_on=installment.due_on - timedelta(days=90))
    assert plans_review(as_of=today()) == {"defaulted": 1, "completed": 0}
    page.reload()
    body = page.inner_text("body")
    assert "Defaulted: an installment was missed" in body and "unpaid after 10 days' grace" in body


def test_a_clerk_prints_a_runs_mail_file_and_sends_its_emails(live_server, mineola, browser, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    Utility.objects.update(bill_emails_wait=True)
    accounts = []
    for _ in range(2):  # one bill for paper, one for a paperless owner
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_062_500)
        accounts.append(account)
    run_command("run_billing", "--date", "2026-02-01")
    paperless = accounts[1]
    paperless.owner.email = "owner@example.org"
    paperless.owner.save()
    paperless.paperless = True
    paperless.save()
    run = BillingRun.objects.latest("id")
    staff("clara", "Clerk")
    page = signed_in(browser, live_server, "clara")
    page.goto(f"{live_server.url}/admin/billing/billingrun/{run.pk}/change/")
    page.click("#make-print-file")
    page.wait_for_selector("a.print-file")
    with page.expect_download() as download:
        page.click("a.print-file")
    assert open(download.value.path(), "rb").read(5) == b"%PDF-"
    assert "1 waiting" in page.inner_text(".run-emails")
    page.click("#send-emails")
    page.wait_for_selector("text=e-mail(s) sent.")
    assert "0 waiting" in page.inner_text(".run-emails")
    assert [m.to for m in mail.outbox] == [["owner@example.org"]]


def test_a_clerk_asks_and_a_supervisor_refunds_a_credit(live_server, overpaid, browser, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    staff("clara", "Clerk")
    staff("sam", "Supervisor")
    clerk = signed_in(browser, live_server, "clara")
    clerk.goto(f"{live_server.url}/admin/office/refund/add/?account={overpaid.account_no}")
    assert "$63.87" in clerk.inner_text(".service-facts")
    clerk.fill("#id_amount", "63.87")
    clerk.fill("#id_reason", "Sold the house; asked for the overpayment back.")
    clerk.click("input[type=submit]")
    clerk.wait_for_selector("text=waits for a supervisor's approval")
    refund = Refund.objects.get()

    supervisor = signed_in(browser, live_server, "sam")
    supervisor.goto(f"{live_server.url}/admin/office/refund/{refund.pk}/change/")
    supervisor.click("text=Approve or refuse")
    supervisor.check("input[value=approve]")
    supervisor.click("input[type=submit]")
    supervisor.wait_for_selector("text=on the check register for accounts payable")
    assert account_balances([overpaid.pk], through=today())[overpaid.pk].balance == Decimal("0.00")
    supervisor.goto(f"{live_server.url}/admin/office/refund/check-register/")
    supervisor.fill("#id_start", date(2026, 1, 1).isoformat())
    with supervisor.expect_download() as download:
        supervisor.click("input[type=submit]")
    register = open(download.value.path()).read()
    assert refund.number in register and "63.87" in register
