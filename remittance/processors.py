"""Payment processors: the interface every one offers, and the first adapter, Stripe.

Design overview:

* **A processor hosts the checkout.** ``checkout_create`` asks it for a page where the customer types the card or
  bank details (they never touch our servers) and gives back its id and address; ``event_read`` reads a webhook
  the processor sent, refusing (``EventRefused``) one whose signature is not the processor's, and says what it
  means in the processor's own words turned into ours (``ProcessorEvent``: paid, pending, failed, expired,
  refunded, disputed, or other).
* **Configured from the environment** (``settings.STRIPE_SECRET_KEY``, ``STRIPE_WEBHOOK_SECRET``; ``STRIPE_API_BASE``
  points the client elsewhere, as the tests' stand-in does). Without keys there is no processor
  (``configured.processor_configured`` gives None) and the portal says how to pay by mail or at the office instead.
* **A registry** (``PROCESSORS``) names each adapter, so a second processor is a class and a setting.
* **Test payments** (``TEST_PAYMENTS``, development only): the app's own stand-in (``test_processor``), so the demo
  shows online payment with no processor account and no money moving.
"""

from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Protocol

from django.utils import timezone

CENT = Decimal("0.01")


# Seconds to wait for the processor's answer before it counts as down (its library's own default is 80).
TIMEOUT_SECONDS = 20


class EventRefused(Exception):
    """A webhook that is not the processor's (its signature does not verify) or cannot be read."""


class ProcessorUnavailable(Exception):
    """The processor could not be reached, or answered with an error instead of what was asked: the page or
    command that asked says so and goes on with what it has (nothing is charged or posted)."""


@dataclass(frozen=True)
class Checkout:
    id: str
    url: str


@dataclass(frozen=True)
class CheckoutRequest:
    reference: str  # ours: the online payment's public id
    account_no: str
    amount: Decimal
    description: str
    success_url: str
    cancel_url: str
    email: str = ""


@dataclass(frozen=True)
class ProcessorEvent:
    """A webhook event in our words."""

    event_id: str
    kind: str  # paid, pending, failed, expired, refunded, disputed, reinstated (a dispute won), other
    type: str  # the processor's own name for it
    happened_on: date  # the day it happened, in the utility's time zone (not the day it reached us)
    checkout_id: str = ""
    reference: str = ""  # ours, as we gave it to the processor (the online payment's public id)
    payment_ref: str = ""  # the processor's id of the payment
    amount: Decimal | None = None
    amount_refunded: Decimal | None = None
    method: str = ""  # card, us_bank_account…
    email: str = ""


@dataclass(frozen=True)
class PayoutItem:
    kind: str  # charge, refund, other
    payment_ref: str  # the processor's payment id the item is of ("" for other items)
    gross: Decimal  # negative for a refund
    fee: Decimal


@dataclass(frozen=True)
class Payout:
    id: str
    amount: Decimal
    items: list[PayoutItem]
    arrived_on: date


class Processor(Protocol):
    name: str
    signature_header: str  # the request header its webhooks are signed in

    def checkout_create(self, request: CheckoutRequest) -> Checkout: ...

    def event_read(self, payload: bytes, signature: str) -> ProcessorEvent: ...

    def payouts(self, *, arrived_from: date, arrived_to: date) -> list[Payout]: ...


def _day(timestamp: int) -> date:
    return timezone.localtime(datetime.fromtimestamp(timestamp, tz=UTC)).date()


def _dollars(cents) -> Decimal | None:
    if cents is not None and (isinstance(cents, bool) or not isinstance(cents, int) or not 0 <= cents < 10**11):
        raise ValueError(f"an amount of {str(cents)[:20]!r} cents is not one")
    return None if cents is None else (Decimal(int(cents)) / 100).quantize(CENT)


class StripeProcessor:
    """Stripe Checkout through the ``stripe`` library: card and US bank account payments on Stripe's page."""

    name = "stripe"
    signature_header = "Stripe-Signature"
    # Stripe's event types, as ours.
    KINDS = {"checkout.session.async_payment_succeeded": "paid", "checkout.session.async_payment_failed": "failed",
             "checkout.session.expired": "expired", "charge.refunded": "refunded",
             "charge.dispute.created": "disputed", "charge.dispute.funds_reinstated": "reinstated"}

    def __init__(self, *, secret_key: str, webhook_secret: str, api_base: str = ""):
        import stripe

        self._stripe = stripe
        self._webhook_secret = webhook_secret
        self._client = stripe.StripeClient(secret_key, base_addresses={"api": api_base} if api_base else None,
                                           max_network_retries=2,
                                           http_client=stripe.new_default_http_client(timeout=TIMEOUT_SECONDS))

    @contextmanager
    def _asking(self, what: str):
        """Ask Stripe for ``what``; any error of its library (the network down, a timeout, Stripe's own error or a
        key it refuses) becomes ``ProcessorUnavailable`` naming what was asked and what went wrong."""
        try:
            yield
        except self._stripe.StripeError as exc:
            said = (getattr(exc, "user_message", None) or str(exc) or type(exc).__name__).split("\n")[0][:200]
            raise ProcessorUnavailable(f"Stripe could not be asked for {what}: {type(exc).__name__}: {said}") \
                from None

    def checkout_create(self, request: CheckoutRequest) -> Checkout:
        params = {
            "mode": "payment",
            "payment_method_types": ["card", "us_bank_account"],
            "line_items": [{"quantity": 1, "price_data": {
                "currency": "usd", "unit_amount": int(request.amount * 100),
                "product_data": {"name": request.description}}}],
            "client_reference_id": request.reference,
            "metadata": {"account_no": request.account_no, "reference": request.reference},
            "payment_intent_data": {"metadata": {"account_no": request.account_no, "reference": request.reference}},
            "success_url": request.success_url,
            "cancel_url": request.cancel_url,
        }
        if request.email:
            params["customer_email"] = request.email
        with self._asking("a checkout page"):
            session = self._client.v1.checkout.sessions.create(params, {"idempotency_key": request.reference})
        return Checkout(id=session.id, url=session.url)

    def event_read(self, payload: bytes, signature: str) -> ProcessorEvent:
        try:
            event = self._stripe.Webhook.construct_event(payload, signature, self._webhook_secret)
        except (self._stripe.SignatureVerificationError, ValueError) as exc:
            raise EventRefused(str(exc).split("\n")[0][:200]) from None
        try:
            return self._event(event)
        except (AttributeError, TypeError, ValueError, KeyError) as exc:
            # Signed, but not an event of the shape the processor documents: refused (400) and logged, never a 500.
            raise EventRefused(f"malformed event {getattr(event, 'id', '?')}: {type(exc).__name__}: "
                               f"{str(exc)[:150]}") from None

    def _event(self, event) -> ProcessorEvent:
        data = event.data.object
        if not hasattr(data, "to_dict"):
            raise TypeError(f"data.object is a {type(data).__name__}, not an object")
        obj = data.to_dict()  # plain dicts, nested too
        if not isinstance(event.id, str) or not isinstance(event.type, str) or not isinstance(event.created, int):
            raise TypeError("the event's id, type or created time is missing")
        happened_on = _day(event.created)
        if event.type.startswith("checkout.session."):
            kind = self.KINDS.get(event.type, "other")
            if event.type == "checkout.session.completed":
                kind = "paid" if obj.get("payment_status") in ("paid", "no_payment_required") else "pending"
            details = obj.get("customer_details") or {}
            return ProcessorEvent(event_id=event.id, kind=kind, type=event.type, happened_on=happened_on,
                                  checkout_id=obj.get("id", ""), reference=obj.get("client_reference_id") or "",
                                  payment_ref=obj.get("payment_intent") or "",
                                  amount=_dollars(obj.get("amount_total")),
                                  method=(obj.get("payment_method_types") or [""])[0],
                                  email=details.get("email") or obj.get("customer_email") or "")
        if event.type in ("charge.refunded", "charge.dispute.created"):
            return ProcessorEvent(event_id=event.id, kind=self.KINDS[event.type], type=event.type,
                                  happened_on=happened_on, payment_ref=obj.get("payment_intent") or "",
                                  reference=(obj.get("metadata") or {}).get("reference", ""),
                                  amount=_dollars(obj.get("amount")),
                                  amount_refunded=_dollars(obj.get("amount_refunded")))
        if event.type == "charge.dispute.funds_reinstated" or (
                event.type == "charge.dispute.closed" and obj.get("status") == "won"):
            # The village won the dispute: the processor gives the money back, and the payment stands again.
            return ProcessorEvent(event_id=event.id, kind="reinstated", type=event.type, happened_on=happened_on,
                                  payment_ref=obj.get("payment_intent") or "", amount=_dollars(obj.get("amount")))
        return ProcessorEvent(event_id=event.id, kind="other", type=event.type, happened_on=happened_on)


    def payouts(self, *, arrived_from: date, arrived_to: date) -> list[Payout]:
        """The payouts arriving in the bank from ``arrived_from`` to ``arrived_to`` (both included), each with the
        charges and refunds in it. Stripe dates a payout's arrival at midnight UTC of its day."""
        start = int(datetime(arrived_from.year, arrived_from.month, arrived_from.day, tzinfo=UTC).timestamp())
        end = int(datetime(arrived_to.year, arrived_to.month, arrived_to.day, tzinfo=UTC).timestamp()) + 86_400
        found = []
        with self._asking("its payouts"):
            for payout in self._client.v1.payouts.list({"arrival_date": {"gte": start, "lt": end},
                                                        "limit": 100}).auto_paging_iter():
                items = []
                for bt in self._client.v1.balance_transactions.list({"payout": payout.id, "limit": 100,
                                                                     "expand": ["data.source"]}).auto_paging_iter():
                    row = bt.to_dict()
                    if row.get("type") == "payout":
                        continue
                    source = row.get("source") if isinstance(row.get("source"), dict) else {}
                    kind = {"charge": "charge", "payment": "charge", "refund": "refund"}.get(row.get("type"), "other")
                    items.append(PayoutItem(kind=kind, payment_ref=source.get("payment_intent") or "",
                                            gross=_dollars(row.get("amount")), fee=_dollars(row.get("fee"))))
                found.append(Payout(id=payout.id, amount=_dollars(payout.amount), items=items,
                                    arrived_on=datetime.fromtimestamp(payout.arrival_date, tz=UTC).date()))
        return found


PROCESSORS = {StripeProcessor.name: StripeProcessor}
