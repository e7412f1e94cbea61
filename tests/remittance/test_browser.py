"""A customer pays a bill online in a browser: the portal's Pay button, the processor's page (the stand-in for
Stripe's hosted checkout), the signed webhook posted once, the portal showing the bill paid; the same webhook
replayed posts nothing, and a forged one is refused."""

import pytest

from accounts.models import PortalLink
from billing.models import Payment
from remittance.models import ProcessorEvent
from tests.browser import DESK, needs_chromium
from tests.portal.conftest import PASSWORD, billed_account, customer

pytestmark = [pytest.mark.browser, needs_chromium, pytest.mark.citation("policy: online payment")]


def test_a_customer_pays_online_and_the_portal_shows_it_paid(live_server, mineola, browser, settings, tmp_path,
                                                              standin):
    from playwright.sync_api import expect

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SITE_URL = live_server.url
    standin.webhook_url = live_server.url + "/pay/webhook/stripe/"
    account = billed_account()
    user = customer("pat@example.org")
    PortalLink.objects.create(user=user, account=account)
    page = browser.new_context(viewport=DESK).new_page()
    page.goto(live_server.url + "/portal/login/")
    page.get_by_label("Email").fill("pat@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Account " + account.account_no, exact=True).click()
    page.get_by_role("link", name="Pay $186.13 online").click()
    expect(page.get_by_label("Amount to pay")).to_have_value("186.13")
    page.get_by_role("button", name="Continue to secure payment").click()
    # The processor's page: the card is typed there, never on ours.
    expect(page.get_by_role("heading", name="Pay $186.13")).to_be_visible()
    assert page.url.startswith(standin.url)
    page.get_by_role("button", name="Pay $186.13").click()
    expect(page.get_by_role("heading", name="Thank you: your payment is posted")).to_be_visible()
    payment = Payment.objects.get()
    assert (payment.account, str(payment.amount.amount), payment.tender) == (account, "186.13", "online")
    page.goto(f"{live_server.url}/portal/accounts/{account.public_id}/")
    expect(page.get_by_text("Nothing due: thank you")).to_be_visible()
    expect(page.locator(".status-paid").first).to_be_visible()
    # The same webhook again: answered, nothing posted. A forged one: refused, nothing posted.
    (status, payload), = standin.delivered
    assert status == 200
    assert standin.deliver(payload, standin.signed(payload)) == 200
    forged = standin.event("checkout.session.completed", {**standin.sessions[list(standin.sessions)[0]],
                                                         "amount_total": 99999999})
    assert standin.deliver(forged, standin.signed(forged, secret="whsec_forged")) == 400
    assert Payment.objects.count() == 1 and ProcessorEvent.objects.count() == 1
