"""Which processor this site takes online payments through: the one the environment configures
(``processors.StripeProcessor`` with both Stripe keys), the app's own stand-in with ``TEST_PAYMENTS``
(development only, ``test_processor.TestProcessor``), or none — and then the portal says how to pay by mail or
at the office. Apart from both adapters, so neither knows the other."""

from django.conf import settings

from .processors import Processor, StripeProcessor
from .test_processor import TestProcessor


def processor_configured() -> Processor | None:
    if settings.TEST_PAYMENTS:
        return TestProcessor()
    if not (settings.STRIPE_SECRET_KEY and settings.STRIPE_WEBHOOK_SECRET):
        return None
    return StripeProcessor(secret_key=settings.STRIPE_SECRET_KEY, webhook_secret=settings.STRIPE_WEBHOOK_SECRET,
                           api_base=settings.STRIPE_API_BASE)
