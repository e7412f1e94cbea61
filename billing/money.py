"""The one rounding rule: half-up to the cent, once per line."""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
ZERO = Decimal("0.00")


def cents(value: Decimal) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def per_thousand(gallons: int | Decimal, rate_per_1000: Decimal) -> Decimal:
    """Rates are per 1,000 gallons and apply pro rata to the exact gallons."""
    return cents(Decimal(gallons) * Decimal(rate_per_1000) / 1000)


def percent_of(amount: Decimal, percent: Decimal) -> Decimal:
    return cents(Decimal(amount) * Decimal(percent) / 100)


def fmt_gallons(gallons: int) -> str:
    return f"{int(gallons):,}"
