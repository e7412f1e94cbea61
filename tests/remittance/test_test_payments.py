"""Test payments (``TEST_PAYMENTS``, development only): the app's own stand-in for the processor. The demo's customer
pays on the app's checkout page, marked "Test payments — no money moves", and the payment is posted through the
webhook's own reading, which refuses a forged signature; the deposits reconciliation sees its payout. With debugging
off the setting is refused, and the readiness check lists it.

The account is docs/ordinances.md's Mineola example: billed $186.13 on 2026-02-01, due March 1.
"""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import PortalLink
from billing.models import Payment
from remittance.configured import processor_configured
from remittance.models import OnlinePayment
from remittance.test_processor import TestProcessor, signature
from tests.portal.conftest import billed_account, customer

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: online payment")]


@pytest.fixture
def test_payments(settings, mineola, media):
    settings.TEST_PAYMENTS = True
    settings.SITE_URL = "http://testserver"
    account = billed_account()
    user = customer("pat@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return account, client


def _checkout(account, client) -> tuple[OnlinePayment, str]:
    started = client.post(reverse("remittance:pay_linked", kwargs={"public_id": account.public_id}),
                          {"amount": "186.13", "email": "pat@example.org"})
    assert started.status_code == 302, started.content.decode()[:2000]
    online = OnlinePayment.objects.get()
    assert started["Location"] == f"http://testserver/pay/test-checkout/{online.checkout_id}/"
    return online, started["Location"].removeprefix("http://testserver")


def test_the_customer_pays_on_the_test_checkout_and_the_payment_is_posted(test_payments):
    account, client = test_payments
    assert isinstance(processor_configured(), TestProcessor)
    portal = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert "Test payments — no money moves" in portal and "Pay $186.13 online" in portal
    online, page = _checkout(account, client)
    shown = client.get(page).content.decode()
    assert "Test payments — no money moves" in shown and "Pay $186.13 (test)" in shown
    assert not Payment.objects.exists()
    paid = client.post(page, {"pay": "1"})
    assert paid["Location"] == reverse("remittance:done", kwargs={"public_id": online.public_id})
    online.refresh_from_db()
    assert online.status == "paid" and online.payment.amount.amount == Decimal("186.13")
    assert online.payment.account == account and online.payment.paid_on == timezone.localdate()
    done = client.get(paid["Location"]).content.decode()
    assert "Thank you: your payment is posted" in done


def test_a_cancelled_test_checkout_posts_nothing(test_payments):
    account, client = test_payments
    online, page = _checkout(account, client)
    cancelled = client.post(page, {"cancel": "1"})
    assert cancelled["Location"] == reverse("remittance:cancelled", kwargs={"public_id": online.public_id})
    assert not Payment.objects.exists()


def test_the_test_webhook_refuses_a_forged_signature_and_applies_a_signed_event_once(test_payments):
    account, client = test_payments
    online, _page = _checkout(account, client)
    payload = TestProcessor.paid_event(online)
    webhook = reverse("remittance:webhook", kwargs={"processor_name": "test"})
    forged = Client().post(webhook, payload, content_type="application/json", HTTP_X_TEST_SIGNATURE="0" * 64)
    assert forged.status_code == 400 and not Payment.objects.exists()
    for _ in range(2):
        signed = Client().post(webhook, payload, content_type="application/json",
                               HTTP_X_TEST_SIGNATURE=signature(payload))
        assert signed.status_code == 200
    assert Payment.objects.count() == 1
    # The payout: the day's test payments arrive the next banking day, whole.
    day = timezone.localdate()
    payouts = TestProcessor().payouts(arrived_from=day, arrived_to=day + timedelta(days=7))
    assert [(p.amount, [i.payment_ref for i in p.items]) for p in payouts] == [
        (Decimal("186.13"), [OnlinePayment.objects.get().payment_ref])]


def test_without_test_payments_the_test_checkout_is_not_there(mineola, media, settings):
    settings.TEST_PAYMENTS = False
    assert Client().get("/pay/test-checkout/tcs_x/").status_code == 404


def test_test_payments_are_listed_by_the_readiness_check(settings, mineola):
    from waterbilling.readiness import readiness_findings

    settings.TEST_PAYMENTS = True
    found = [f for f in readiness_findings() if "test payments are on" in f.what]
    assert len(found) == 1 and "TEST_PAYMENTS off" in found[0].fix


def test_the_pay_button_leads_back_to_wherever_the_demo_runs(test_payments, settings):
    """In development the site's address is the one the request came in on: a demo served on another name or port
    sends its customer to its own checkout and back, whatever SITE_URL says (``core.site``)."""
    account, client = test_payments
    settings.DEBUG, settings.SITE_URL = True, "http://127.0.0.1:8000"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "demo.village.test"]
    started = client.post(reverse("remittance:pay_linked", kwargs={"public_id": account.public_id}),
                          {"amount": "186.13", "email": "pat@example.org"}, HTTP_HOST="demo.village.test:8042")
    online = OnlinePayment.objects.get()
    assert started["Location"] == f"http://demo.village.test:8042/pay/test-checkout/{online.checkout_id}/"


def test_readiness_names_a_site_url_the_office_does_not_reach_the_site_by(settings, mineola, client):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    settings.DEBUG, settings.SITE_URL = False, "https://water.mineola.example"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "billing.mineola.example", "water.mineola.example"]
    boss = get_user_model().objects.create_user("sam", is_staff=True)
    boss.groups.add(Group.objects.get(name="Supervisor"))
    client.force_login(boss)
    page = client.get(reverse("admin:readiness"), secure=True, HTTP_HOST="billing.mineola.example").content.decode()
    assert ("SITE_URL is https://water.mineola.example, but this page was reached at "
            "https://billing.mineola.example") in page
    page = client.get(reverse("admin:readiness"), secure=True, HTTP_HOST="water.mineola.example").content.decode()
    assert "but this page was reached at" not in page
