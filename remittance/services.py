"""Online payments: a checkout started for an account, and the processor's events turned into billing's facts.

Design overview:

* **Start** (``online_payment_start``): the amount is checked here (at least $1.00, at most what the account
  owes today), an ``OnlinePayment`` is recorded, and the processor makes a checkout page for it.
* **Events** (``processor_event_apply``) are recorded once each (``ProcessorEvent``'s unique key: a replay
  answers "already applied" and changes nothing). A payment the processor took is posted through billing's one
  payment service (``payment_post``: reference ``<PROCESSOR>-<its payment id>``, unique there too) on the day the
  processor took it, whatever day the event arrives. A refund in full or a dispute reverses it through
  billing's reversal service on its own day; if it arrives before the payment it is kept and applied with it.
  A partial refund goes to the exceptions queue for the clerk (billing reverses payments whole). A dispute the
  village wins (``charge.dispute.closed`` won, or ``charge.dispute.funds_reinstated``; whichever comes first) posts the
  payment again, once, as ``<reference>-R`` on the day the processor gave the money back: the customer's account
  is paid again, and the reversal stays in the books as what happened in between.
* **A receipt** is emailed once the payment is posted (a worker, on billing's ``payment_posted``), to the address
  the customer gave the processor or the one they signed in with; once.
"""

import uuid
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Account
from billing.models import Bill, BillFigures, Payment, PaymentReversal
from billing.ordinance import ordinance_on
from billing.selectors import account_amounts_due
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from core.clock import today
from core.dates import fmt_long_day
from core.errors import ApplicationError
from core.i18n import customer_language
from core.money import fmt_dollars

from .models import AutopayDebit, OnlinePayment, PaymentException, ProcessorEvent
from .processors import CheckoutRequest, Processor
from .processors import ProcessorEvent as EventIn

MINIMUM = Decimal("1.00")
REASONS = {"refunded": PaymentReversal.Reason.REFUNDED, "disputed": PaymentReversal.Reason.DISPUTED}


def amount_owed(account: Account, *, as_of: date) -> Decimal:
    return account_amounts_due(account_ids=[account.pk], as_of=as_of)[account.pk].amount


def latest_bill_amounts(account: Account) -> set[Decimal]:
    """The amounts printed on the account's latest bill: its total, and the total due and amount after the due
    date of its money box."""
    bill = Bill.objects.filter(account=account).exclude(status=Bill.Status.VOID).order_by("-bill_date", "-id").first()
    if bill is None:
        return set()
    amounts = {bill.total.amount}
    figures = BillFigures.objects.filter(bill=bill).values_list("total_due", "late_total").first()
    return amounts | set(figures or ())


def online_payment_start(*, processor: Processor, account: Account, amount: Decimal, as_of: date, user=None,
                         email: str = "", site: str = "") -> tuple[OnlinePayment, str]:
    """Record the payment and have the processor make its checkout page; returns it and the page's address.
    An amount below $1.00 or above what the account owes is refused naming the field."""
    owed = amount_owed(account, as_of=as_of)
    if owed <= 0:
        raise ApplicationError(_("account %(number)s owes nothing today") % {"number": account.account_no},
                               field="amount")
    if amount < MINIMUM:
        raise ApplicationError(_("%(amount)s is less than the least that can be paid online (%(least)s)") % {
            "amount": fmt_dollars(amount), "least": fmt_dollars(MINIMUM)}, field="amount")
    if amount > owed:
        raise ApplicationError(_("%(amount)s is more than account %(number)s owes today (%(owed)s)") % {
            "amount": fmt_dollars(amount), "number": account.account_no, "owed": fmt_dollars(owed)}, field="amount")
    online = OnlinePayment.objects.create(account=account, amount=amount, processor=processor.name,
                                          started_by=user if user is not None and user.is_authenticated else None,
                                          receipt_email=email or (getattr(user, "email", "") or ""))
    site = (site or settings.SITE_URL).rstrip("/")  # the view's ``core.site.site_url``
    utility = ordinance_on(as_of).utility
    checkout = processor.checkout_create(CheckoutRequest(
        reference=str(online.public_id), account_no=account.account_no, amount=amount,
        description=f"{utility.name}: water account {account.account_no}", email=online.receipt_email,
        success_url=site + reverse("remittance:done", kwargs={"public_id": online.public_id}),
        cancel_url=site + reverse("remittance:cancelled", kwargs={"public_id": online.public_id})))
    OnlinePayment.objects.filter(pk=online.pk).update(checkout_id=checkout.id)
    online.checkout_id = checkout.id
    return online, checkout.url


@dataclass(frozen=True)
class Applied:
    outcome: str
    already: bool = False  # the event was applied before: nothing was done now


def processor_event_apply(processor_name: str, event: EventIn) -> Applied:
    """Apply one processor event, once."""
    with transaction.atomic():
        online = _online_for(processor_name, event)
        try:
            with transaction.atomic():
                record = ProcessorEvent.objects.create(processor=processor_name, event_id=event.event_id,
                                                       kind=event.type[:80], outcome="", online_payment=online)
        except IntegrityError:
            return Applied(outcome="already applied", already=True)
        if online is None:
            outcome = "not a payment of ours" if event.kind != "other" else "nothing to do"
        else:
            online = OnlinePayment.objects.select_for_update().get(pk=online.pk)
            outcome = _apply(online, event)
        ProcessorEvent.objects.filter(pk=record.pk).update(outcome=outcome[:300])
    return Applied(outcome=outcome)


def _online_for(processor_name: str, event: EventIn) -> OnlinePayment | None:
    """By the processor's checkout, by our reference (a charge carries it in its metadata), or by the processor's
    payment id."""
    found = OnlinePayment.objects.filter(processor=processor_name)
    if event.checkout_id:
        return found.filter(checkout_id=event.checkout_id).first()
    if event.reference:
        try:
            return found.filter(public_id=uuid.UUID(event.reference)).first()
        except ValueError:
            pass
    if event.payment_ref:
        return found.filter(payment_ref=event.payment_ref).first()
    return None


def _apply(online: OnlinePayment, event: EventIn) -> str:
    if event.payment_ref and not online.payment_ref:
        online.payment_ref = event.payment_ref
        online.save(update_fields=["payment_ref"])
    if event.kind == "paid":
        return _paid(online, event)
    if event.kind in REASONS:
        if event.kind == "refunded" and event.amount_refunded is not None and event.amount is not None \
                and event.amount_refunded < event.amount:
            return _partial_refund(online, event)
        online.reversed_on, online.reversal_reason = event.happened_on, event.kind
        online.save(update_fields=["reversed_on", "reversal_reason"])
        if online.payment is None:
            return f"{event.kind} before the payment was reported: kept, applied when it is"
        return _reverse(online)
    if event.kind == "reinstated":
        return _reinstate(online, event)
    if event.kind in ("failed", "expired") and online.status == OnlinePayment.Status.OPEN:
        online.status = OnlinePayment.Status.EXPIRED
        online.save(update_fields=["status"])
        return f"checkout {event.kind}: nothing posted"
    if event.kind == "pending":
        return "the processor is waiting for the bank: posted when it confirms"
    return "nothing to do"


def _partial_refund(online: OnlinePayment, event: EventIn) -> str:
    """Part of a payment refunded at the processor: the payment stands (a payment is reversed whole), and the refund
    goes to the exceptions queue for the clerk to take off the account's credit (``source`` ``refund:``)."""
    paid = online.payment.reference if online.payment is not None else f"checkout {online.checkout_id}"
    reference = f"{online.processor.upper()}-{event.payment_ref or online.checkout_id}-REFUND-{event.event_id}"[:80]
    reason = (f"the processor refunded {fmt_dollars(event.amount_refunded)} of {paid} ({fmt_dollars(event.amount)}) "
              f"on account {online.account.account_no}: take it off the account's credit, then record it here")
    _, created = PaymentException.objects.get_or_create(reference=reference, defaults={
        "source": f"refund:{online.processor}", "tender": Payment.Tender.ONLINE, "received_on": event.happened_on,
        "amount": event.amount_refunded, "read": paid[:200], "reason": reason[:200]})
    return f"partial refund: to the exceptions queue as {reference}" if created else f"{reference} is queued already"


def _paid(online: OnlinePayment, event: EventIn) -> str:
    if online.payment is not None:
        return f"already posted as {online.payment.reference}"
    amount = event.amount if event.amount is not None else online.amount.amount
    reference = f"{online.processor.upper()}-{event.payment_ref or event.checkout_id}"
    if amount != online.amount.amount:
        # Signed by the processor, but not what the customer was asked for here: the money is not ours to post
        # by guess. A clerk posts it (or sends it back) from the exceptions queue.
        reason = (f"the processor reports {fmt_dollars(amount)} paid for a checkout of "
                  f"{fmt_dollars(online.amount.amount)} on account {online.account.account_no}")
        _, created = PaymentException.objects.get_or_create(reference=reference, defaults={
            "source": f"online:{online.processor}", "tender": Payment.Tender.ONLINE, "received_on": event.happened_on,
            "amount": amount, "read": f"checkout {online.checkout_id}"[:200], "reason": reason[:200]})
        return f"{reason}: to the exceptions queue as {reference}" if created else f"{reference} is queued already"
    payment_post(account_no=online.account.account_no, amount=amount, paid_on=event.happened_on,
                 reference=reference, source=f"online:{online.processor}", tender=Payment.Tender.ONLINE)
    online.payment = Payment.objects.get(reference__iexact=reference)
    online.status, online.paid_at = OnlinePayment.Status.PAID, timezone.now()
    online.receipt_email = online.receipt_email or event.email
    online.save(update_fields=["payment", "status", "paid_at", "receipt_email"])
    said = f"posted {fmt_dollars(amount)} as {reference} on {event.happened_on}"
    if online.reversed_on is not None:
        return f"{said}; {_reverse(online)}"
    return said  # the receipt follows billing's payment_posted (receivers.py)


def _reverse(online: OnlinePayment) -> str:
    payment = online.payment
    if PaymentReversal.objects.filter(payment=payment).exists():
        return f"{payment.reference} was reversed already"
    payment_reverse(payment=payment, reversed_on=max(online.reversed_on, payment.paid_on),
                    reason=REASONS[online.reversal_reason], actor=None,
                    note=f"{online.processor}: the payment was {online.reversal_reason} (reported by the processor)")
    online.status = OnlinePayment.Status.REVERSED
    online.save(update_fields=["status"])
    return f"reversed {payment.reference}: {online.reversal_reason}"


def _reinstate(online: OnlinePayment, event: EventIn) -> str:
    """A dispute won: the reversed payment is posted again, once; a dispute not yet applied is forgotten."""
    if online.reinstated_id is not None:
        return f"dispute won: posted again already as {online.reinstated.reference}"
    if online.reversal_reason != "disputed":
        return "dispute won, but the payment was not reversed for a dispute: nothing to do"
    if online.payment is None or online.status != OnlinePayment.Status.REVERSED:
        online.reversed_on, online.reversal_reason = None, ""
        online.save(update_fields=["reversed_on", "reversal_reason"])
        return "dispute won before it was applied: the payment stands as reported"
    original = online.payment
    reference = f"{original.reference}-R"
    paid_on = max(event.happened_on, online.reversed_on)
    payment_post(account_no=online.account.account_no, amount=original.amount.amount, paid_on=paid_on,
                 reference=reference, source=f"online:{online.processor}", tender=Payment.Tender.ONLINE)
    online.reinstated = Payment.objects.get(reference__iexact=reference)
    online.status = OnlinePayment.Status.PAID
    online.save(update_fields=["reinstated", "status"])
    return (f"dispute won: {fmt_dollars(original.amount.amount)} posted again as {reference} on {paid_on} "
            f"(reversed on {online.reversed_on})")


def receipts_send(payment_ids) -> int:
    """Email the receipt of each posted online or autopay payment among ``payment_ids`` that has an address, once
    (marked before sending, unmarked if the mail server refuses, so a retry sends what did not go)."""
    sent = _autopay_receipts_send(payment_ids)
    for online in OnlinePayment.objects.filter(payment_id__in=list(payment_ids), status=OnlinePayment.Status.PAID,
                                               receipt_sent_at__isnull=True).exclude(receipt_email="") \
            .select_related("account__premises", "payment"):
        if not OnlinePayment.objects.filter(pk=online.pk, receipt_sent_at__isnull=True).update(
                receipt_sent_at=timezone.now()):
            continue  # another worker has it
        payment = online.payment
        utility = ordinance_on(payment.paid_on).utility
        with customer_language(online.account):
            body = render_to_string("remittance/email/receipt.txt", {
                "online": online, "payment": payment, "account": online.account, "utility": utility,
                "amount": fmt_dollars(payment.amount.amount),
                "paid_on": fmt_long_day(payment.paid_on)})
            subject = _("Receipt: payment to water account %(number)s") % {"number": online.account.account_no}
        try:
            EmailMessage(subject=subject, body=body, to=[online.receipt_email]).send()
        except Exception:
            OnlinePayment.objects.filter(pk=online.pk).update(receipt_sent_at=None)
            raise
        sent += 1
    return sent


def _autopay_receipts_send(payment_ids) -> int:
    """The receipts of those autopay debits among ``payment_ids`` that have settled (their file's effective day has
    come): until then the money is not the village's yet, and the portal shows the debit as scheduled."""
    return _debit_receipts(AutopayDebit.objects.filter(payment_id__in=list(payment_ids),
                                                       file__effective_on__lte=today()))


def autopay_receipts_settled(*, as_of: date) -> dict:
    """The nightly step: a receipt for each autopay debit settled by ``as_of`` and not returned, once."""
    return {"autopay_receipts": _debit_receipts(AutopayDebit.objects.filter(file__effective_on__lte=as_of))}


def _debit_receipts(debits) -> int:
    sent = 0
    for debit in debits.filter(receipt_sent_at__isnull=True, returned_code="").select_related(
            "enrolment", "account__premises", "payment", "file"):
        if not AutopayDebit.objects.filter(pk=debit.pk, receipt_sent_at__isnull=True).update(
                receipt_sent_at=timezone.now()):
            continue
        payment = debit.payment
        with customer_language(debit.account):
            body = render_to_string("remittance/email/receipt.txt", {
                "payment": payment, "account": debit.account, "utility": ordinance_on(payment.paid_on).utility,
                "amount": fmt_dollars(payment.amount.amount), "autopay_last4": debit.enrolment.account_last4,
                "paid_on": fmt_long_day(payment.paid_on)})
            subject = _("Receipt: autopay for water account %(number)s") % {"number": debit.account.account_no}
        try:
            EmailMessage(subject=subject, body=body, to=[debit.enrolment.email]).send()
        except Exception:
            AutopayDebit.objects.filter(pk=debit.pk).update(receipt_sent_at=None)
            raise
        sent += 1
    return sent
