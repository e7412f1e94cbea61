import pytest
from cryptography.fernet import Fernet
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from tests.portal.conftest import billed_account, customer

from .standin import SECRET_KEY, WEBHOOK_SECRET, StripeStandIn

BANK_ACCOUNT = "000123456789"
ROUTING = "011000015"  # a real ABA number: 3·(0+0+0) + 7·(1+0+1) + (1+0+5) = 20


@pytest.fixture
def standin(settings):
    """The stand-in for Stripe, and the settings that point the real client at it."""
    server = StripeStandIn()
    settings.STRIPE_SECRET_KEY, settings.STRIPE_WEBHOOK_SECRET = SECRET_KEY, WEBHOOK_SECRET
    settings.STRIPE_API_BASE = server.url
    yield server
    server.close()


@pytest.fixture
def bank(settings):
    settings.BANK_ACCOUNT_KEY = Fernet.generate_key().decode()
    settings.ACH_ODFI_ROUTING, settings.ACH_ODFI_NAME = "021000021", "First Village Bank"
    settings.ACH_COMPANY_ID, settings.ACH_COMPANY_NAME = "1234567890", "MINEOLA WATER"
    return settings


@pytest.fixture
def enrolled(mineola, media, bank):
    account = billed_account()
    user = customer("pat@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    url = reverse("remittance:autopay", kwargs={"public_id": account.public_id})
    form = {"action": "enrol", "holder_name": "Pat Payer", "routing_number": ROUTING, "account_number": BANK_ACCOUNT,
            "account_number_again": BANK_ACCOUNT, "account_type": "checking", "email": "pat@example.org",
            "agree": "on"}
    response = client.post(url, form, REMOTE_ADDR="203.0.113.9")
    assert response.status_code == 302, response.content.decode()[:3000]
    return account, client, url
