"""Fee quotes from the fee schedule in force on a date (pure, apart from the lookup)."""

from datetime import date
from decimal import Decimal

from core.errors import ApplicationError, NotFound
from core.money import MONEY_MAX, cents

from .models import Fee


def fee_in_force(*, code: str, on: date) -> Fee:
    fee = Fee.objects.filter(code=code, effective_on__lte=on).order_by("-effective_on").first()
    if fee is None:
        codes = ", ".join(sorted(set(Fee.objects.values_list("code", flat=True))))
        raise NotFound(f"no fee '{code}' in force on {on}; fees: {codes}", field="code")
    return fee


def fees_in_force(*, on: date) -> list[Fee]:
    """The fee schedule on a date: each code's version in force then, by code; a code not yet in force
    on the date is left out."""
    fees = (Fee.objects.filter(code=code, effective_on__lte=on).order_by("-effective_on").first()
            for code in sorted(set(Fee.objects.values_list("code", flat=True))))
    return [fee for fee in fees if fee is not None]


def fee_quote(fee: Fee, *, basis: Decimal | None = None) -> Decimal:
    """A flat fee is its amount; a pro-rata fee (§ 45.28 B: $1.50 per $1,000 of construction cost) is
    basis × rate, half-up to the cent. The basis and the fee are each at most what an amount column holds."""
    if fee.rate is not None:
        if basis is None or basis <= 0:
            raise ApplicationError(f"{fee.description} ({fee.citation}) is computed from a cost; give a "
                                   "positive 'basis' in dollars", field="basis")
        if basis > MONEY_MAX:
            raise ApplicationError(f"${basis:,.2f} is more than a basis may be (at most ${MONEY_MAX:,.2f})",
                                   field="basis")
        amount = basis * fee.rate
        if amount > MONEY_MAX:
            raise ApplicationError(f"the fee on ${basis:,.2f} would be ${amount:,.2f}, more than a charge may be "
                                   f"(at most ${MONEY_MAX:,.2f})", field="basis")
        return cents(amount)
    return fee.amount.amount
