"""The one rounding rule: half-up to the cent, once per line; and the most one payment or memo may be."""

from decimal import ROUND_HALF_UP, Decimal

from waterbilling.limits import MONEY_MAX

CENT = Decimal("0.01")
ZERO = Decimal("0.00")

# A village's largest water bills run to thousands of dollars (a month of two million gallons at a
# nonprofit's $0.90 per 1,000 is $1,800); a million dollars paid on, or corrected on, one account is a
# mistyped amount (extra digits, a cents column read as dollars), not a payment or a correction. Refusing it
# costs nothing real; taking it puts millions on an account that statements, penalties and the portal then
# carry. A bill wrong by more than this is voided and billed again. Both stay well inside ``MONEY_MAX``.
PAYMENT_MAX = Decimal("999999.99")
ADJUSTMENT_MAX = Decimal("999999.99")

__all__ = ["ADJUSTMENT_MAX", "CENT", "MONEY_MAX", "PAYMENT_MAX", "ZERO", "cents", "fmt_gallons", "per_thousand",
           "percent_of"]


def cents(value: Decimal) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def per_thousand(gallons: int | Decimal, rate_per_1000: Decimal) -> Decimal:
    """Rates are per 1,000 gallons and apply pro rata to the exact gallons."""
    return cents(Decimal(gallons) * Decimal(rate_per_1000) / 1000)


def percent_of(amount: Decimal, percent: Decimal) -> Decimal:
    return cents(Decimal(amount) * Decimal(percent) / 100)


def fmt_gallons(gallons: int) -> str:
    return f"{int(gallons):,}"
