"""The app's own stand-in for a payment processor, for development and training (``TEST_PAYMENTS``, never with
debugging off): a trainee or a village trying the product pays a demo bill online and sees it posted, with no
processor account and no money moving.

It offers what ``processors.Processor`` does. ``checkout_create`` gives the address of a checkout page served
here (``test_checkout``), marked on every page "Test payments — no money moves", with *Pay* and *Cancel*. *Pay*
makes the event a processor would send (``checkout.session.completed``), signs it with an HMAC of the app's secret
key, and hands it to the webhook's own reading (``event_read``, which refuses a forged signature) and application,
then sends the browser to the payment's success page, as the processor's page would. ``payouts`` gives each day's
paid test payments arriving the next banking day, fee-free, so the deposits reconciliation has something to show.
"""

import hashlib
import hmac
import json
import time
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from urllib.parse import urlsplit

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from .processors import Checkout, CheckoutRequest, EventRefused, Payout, PayoutItem, ProcessorEvent

CENT = Decimal("0.01")


def _secret() -> bytes:
    return hashlib.sha256(f"test payments:{settings.SECRET_KEY}".encode()).digest()


def signature(payload: bytes) -> str:
    return hmac.new(_secret(), payload, hashlib.sha256).hexdigest()


class TestProcessor:
    """Test payments: the checkout page is this app's; nothing leaves it."""

    __test__ = False  # not a test case, whatever pytest thinks of the name
    name = "test"
    signature_header = "X-Test-Signature"

    def checkout_create(self, request: CheckoutRequest) -> Checkout:
        checkout_id = f"tcs_{request.reference}"
        # On the site the checkout returns to (``core.site.site_url``: wherever the demo runs).
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(request.success_url)) if request.success_url else \
            settings.SITE_URL.rstrip("/")
        return Checkout(id=checkout_id, url=origin + reverse("remittance:test_checkout",
                                                             kwargs={"checkout_id": checkout_id}))

    @staticmethod
    def paid_event(online) -> bytes:
        """The event the checkout page sends when the trainee pays: the whole checkout, paid by card."""
        return json.dumps({
            "id": f"tev_{online.public_id.hex}", "type": "checkout.session.completed", "created": int(time.time()),
            "checkout": {"id": online.checkout_id, "reference": str(online.public_id),
                         "payment_ref": f"tpi_{online.public_id.hex[:16]}",
                         "amount_cents": int(online.amount.amount * 100), "method": "card",
                         "email": online.receipt_email}}).encode()

    def event_read(self, payload: bytes, signature_given: str) -> ProcessorEvent:
        if not hmac.compare_digest(signature(payload), signature_given or ""):
            raise EventRefused("the test payment's signature is not this site's")
        try:
            event = json.loads(payload)
            checkout = event["checkout"]
            return ProcessorEvent(
                event_id=str(event["id"]), kind="paid" if event["type"] == "checkout.session.completed" else "other",
                type=str(event["type"]),
                happened_on=timezone.localtime(datetime.fromtimestamp(int(event["created"]), tz=UTC)).date(),
                checkout_id=str(checkout["id"]), reference=str(checkout["reference"]),
                payment_ref=str(checkout["payment_ref"]),
                amount=(Decimal(int(checkout["amount_cents"])) / 100).quantize(CENT),
                method=str(checkout.get("method", "")), email=str(checkout.get("email", "")))
        except (ValueError, KeyError, TypeError) as exc:
            raise EventRefused(f"malformed test event: {type(exc).__name__}") from None

    def payouts(self, *, arrived_from: date, arrived_to: date) -> list[Payout]:
        from core.banking_days import next_banking_day

        from .models import OnlinePayment

        by_day: dict[date, list[OnlinePayment]] = {}
        paid = OnlinePayment.objects.filter(processor=self.name, paid_at__isnull=False,
                                            paid_at__date__gte=arrived_from - timedelta(days=7))
        for online in paid.order_by("paid_at"):
            arrives = next_banking_day(timezone.localtime(online.paid_at).date())
            if arrived_from <= arrives <= arrived_to:
                by_day.setdefault(arrives, []).append(online)
        return [Payout(id=f"tpo_{day:%Y%m%d}", amount=sum((o.amount.amount for o in payments), Decimal("0")),
                       items=[PayoutItem(kind="charge", payment_ref=o.payment_ref, gross=o.amount.amount,
                                         fee=Decimal("0.00")) for o in payments], arrived_on=day)
                for day, payments in sorted(by_day.items())]
