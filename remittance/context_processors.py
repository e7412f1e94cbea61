"""What every page needs to know of payments: whether they are test payments (``TEST_PAYMENTS``, development
only), so each page says so in a band at its top."""

from django.conf import settings


def test_payments(request) -> dict:
    return {"test_payments": settings.TEST_PAYMENTS}
