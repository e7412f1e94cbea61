"""Cleared funds: when a payment's money is the village's to pay out again.

A payment pays bills the day it is made, whatever its tender; but money the bank may still take back (a check
that can bounce, a debit that can be returned, a card payment the processor has not paid out) is not yet money
to give away. Each tender has its clearing rule, from the office's settings:

* cash, a bank file's credit and a customer's bank bill-pay credit (the bank has the money already): at once;
* a check (at the counter, by mail or through the lockbox): ``CHECK_CLEARING_DAYS`` banking days after it was
  taken, when a bounce has had time to come back;
* an autopay debit: ``ACH_CLEARING_DAYS`` banking days after it settled, when the returns window for insufficient
  or uncollected funds and a closed account (R01, R02, R03, R09) has passed;
* a card or an online payment through the processor: ``PROCESSOR_PAYOUT_DAYS`` days after it was paid, when its
  payout reaches the bank.

A refund, a transfer out and the credit shown as refundable count only cleared money
(``refundable_credit``): the account's credit less every payment not yet cleared (and not reversed), never below
zero. So a $500.00 check that leaves a $271.84 credit refunds nothing until it clears. Pure but for the one read
of the account's payments.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.conf import settings

from core.banking_days import banking_day_on_or_after, banking_days_after
from core.dates import fmt_day
from core.money import ZERO, fmt_dollars

from .balances import balances
from .models import Payment

# Tenders whose money is in the bank when the payment is taken.
AT_ONCE = (Payment.Tender.CASH, Payment.Tender.BANK_FILE, Payment.Tender.BILL_PAY)


def clears_on(*, tender: str, paid_on: date) -> date:
    """The day a payment of ``tender`` made on ``paid_on`` counts as cleared."""
    if tender in AT_ONCE:
        return paid_on
    if tender == Payment.Tender.CHECK:
        return banking_days_after(banking_day_on_or_after(paid_on), settings.CHECK_CLEARING_DAYS)
    if tender == Payment.Tender.ACH:
        return banking_days_after(banking_day_on_or_after(paid_on), settings.ACH_CLEARING_DAYS)
    return paid_on + timedelta(days=settings.PROCESSOR_PAYOUT_DAYS)  # card, online


@dataclass(frozen=True)
class Uncleared:
    """A payment whose money may still be taken back on a day."""

    payment_id: int
    reference: str
    tender: str
    amount: Decimal
    paid_on: date
    clears_on: date

    @property
    def words(self) -> str:
        tender = Payment.Tender(self.tender).label.lower()
        return (f"payment {self.reference} ({tender}, {fmt_dollars(self.amount)}, paid {fmt_day(self.paid_on)}) "
                f"clears on {fmt_day(self.clears_on)}")


def uncleared_payments(account_id: int, *, as_of: date) -> list[Uncleared]:
    """The account's payments made on or before ``as_of``, not reversed, that have not cleared by then."""
    latest = settings.CHECK_CLEARING_DAYS * 2 + settings.ACH_CLEARING_DAYS * 2 + settings.PROCESSOR_PAYOUT_DAYS + 14
    rows = (Payment.objects.filter(account_id=account_id, paid_on__lte=as_of,
                                   paid_on__gte=as_of - timedelta(days=latest), reversal__isnull=True)
            .exclude(tender__in=AT_ONCE).order_by("paid_on", "id")
            .values_list("id", "reference", "tender", "amount", "paid_on"))
    out = []
    for payment_id, reference, tender, amount, paid_on in rows:
        clears = clears_on(tender=tender, paid_on=paid_on)
        if clears > as_of:
            out.append(Uncleared(payment_id, reference, tender, amount, paid_on, clears))
    return out


@dataclass(frozen=True)
class Refundable:
    """What of an account's credit may leave it on a day: ``amount`` (cleared money only) of ``credit``, with the
    payments not yet cleared that hold the rest."""

    credit: Decimal
    amount: Decimal
    uncleared: tuple[Uncleared, ...]

    @property
    def held(self) -> Decimal:
        return self.credit - self.amount

    @property
    def words(self) -> str:
        """Why part of the credit is held, naming each payment and the day it clears ("" when nothing is held)."""
        if self.held <= ZERO:
            return ""
        return (f"{fmt_dollars(self.held)} of the credit is money not yet cleared: "
                + "; ".join(u.words for u in self.uncleared))


def refundable_credit(account_id: int, *, as_of: date) -> Refundable:
    """The account's credit at the end of ``as_of`` and what of it is cleared money (``clearing`` above)."""
    balance = balances([account_id], through=as_of)[account_id].balance
    credit = -balance if balance < ZERO else ZERO
    uncleared = uncleared_payments(account_id, as_of=as_of) if credit > ZERO else []
    held = sum((u.amount for u in uncleared), ZERO)
    return Refundable(credit=credit, amount=max(ZERO, credit - held), uncleared=tuple(uncleared))
