import pytest

from .standin import SECRET_KEY, WEBHOOK_SECRET, StripeStandIn


@pytest.fixture
def standin(settings):
    """The stand-in for Stripe, and the settings that point the real client at it."""
    server = StripeStandIn()
    settings.STRIPE_SECRET_KEY, settings.STRIPE_WEBHOOK_SECRET = SECRET_KEY, WEBHOOK_SECRET
    settings.STRIPE_API_BASE = server.url
    yield server
    server.close()
