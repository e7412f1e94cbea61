"""The processor may be down. The deposits reconciliation (page and command) reconciles every other channel, says
the processor could not be reached and never reads as matching; the customer's payment page says so and charges
nothing. Never a 500, never a traceback."""

import io
import json
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from billing.models import Payment
from billing.services.payments import payment_post
from remittance.bank import deposits_reconcile
from remittance.configured import processor_configured
from remittance.models import OnlinePayment
from tests.office.conftest import staff
from tests.portal.conftest import billed_account, customer

from .standin import SECRET_KEY, WEBHOOK_SECRET

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: deposits reconciliation")]
DAY = date(2026, 3, 2)


@pytest.fixture
def down(mineola, media, settings):
    """Stripe configured, and nothing listening where it is asked (a closed port: the connection is refused)."""
    settings.STRIPE_SECRET_KEY, settings.STRIPE_WEBHOOK_SECRET = SECRET_KEY, WEBHOOK_SECRET
    settings.STRIPE_API_BASE = "http://127.0.0.1:9"
    account = billed_account()
    payment_post(account_no=account.account_no, amount=Decimal("50.00"), paid_on=DAY,
                 reference="CTR-1", source="counter", tender="cash")
    return account


def test_the_reconciliation_reconciles_the_rest_and_says_what_it_could_not_reach(down):
    result = deposits_reconcile(on=DAY, processor=processor_configured())
    assert not result.matches
    assert len(result.unreached) == 1 and result.unreached[0].startswith("Stripe could not be asked for its payouts")
    lines = {line.channel: line for line in result.lines}
    assert lines["counter"].expected == Decimal("50.00")
    assert lines["processor"].detail == "not matched: the processor could not be reached"


def test_the_page_answers_as_the_treasurer_opens_it(down):
    client = Client()
    client.force_login(staff("tess", "Treasurer"))
    response = client.get(reverse("admin:deposits"), {"on": DAY.isoformat()})
    page = response.content.decode()
    assert response.status_code == 200
    assert "not complete: the processor could not be reached" in page
    assert 'class="errornote" role="alert">Stripe could not be asked for its payouts' in page
    assert "Counter: the cash and checks taken that day" in page


def test_the_command_prints_what_it_has_and_what_it_could_not_reach(down):
    out, err = io.StringIO(), io.StringIO()
    call_command("reconcile_deposits", "--date", DAY.isoformat(), stdout=out, stderr=err)
    assert out.getvalue().startswith(f"Deposits of {DAY}: not complete: the processor could not be reached")
    assert "Counter: the cash and checks taken that day: expected $50.00" in out.getvalue()
    assert "Stripe could not be asked for its payouts" in err.getvalue() and "Traceback" not in err.getvalue()
    out = io.StringIO()
    call_command("reconcile_deposits", "--date", DAY.isoformat(), "--format", "json", stdout=out, stderr=io.StringIO())
    said = json.loads(out.getvalue())
    assert said["matches"] is False and said["unreached"][0].startswith("Stripe could not be asked")


def test_the_customer_is_told_and_nothing_is_charged(down):
    account = billed_account()
    user = customer("pat@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    response = client.post(reverse("remittance:pay_linked", kwargs={"public_id": account.public_id}),
                           {"amount": "100.00"})
    assert response.status_code == 400
    assert "The payment service cannot be reached just now; nothing was charged" in response.content.decode()
    assert not OnlinePayment.objects.exclude(checkout_id="").exists()
    assert not Payment.objects.filter(tender="online").exists()
