"""The one rounding rule: half-up to the cent, once per line; and the most one payment or memo may be."""

from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

from core.limits import MONEY_MAX

CENT = Decimal("0.01")
ZERO = Decimal("0.00")

# A village's largest water bills run to thousands of dollars (a month of two million gallons at a
# nonprofit's $0.90 per 1,000 is $1,800); a million dollars paid on, or corrected on, one account is a
# mistyped amount (extra digits, a cents column read as dollars), not a payment or a correction. Refusing it
# costs nothing real; taking it puts millions on an account that statements, penalties and the portal then
# carry. A bill wrong by more than this is voided and billed again. Both stay well inside ``MONEY_MAX``.
PAYMENT_MAX = Decimal("999999.99")
ADJUSTMENT_MAX = Decimal("999999.99")

__all__ = ["ADJUSTMENT_MAX", "CENT", "MONEY_MAX", "PAYMENT_MAX", "ZERO", "cents", "fmt_amount", "fmt_dollars",
           "fmt_gallons", "fmt_rate", "per_thousand", "percent_of"]


def cents(value: Decimal) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def per_thousand(gallons: int | Decimal, rate_per_1000: Decimal) -> Decimal:
    """Rates are per 1,000 gallons and apply pro rata to the exact gallons."""
    return cents(Decimal(gallons) * Decimal(rate_per_1000) / 1000)


def percent_of(amount: Decimal, percent: Decimal) -> Decimal:
    return cents(Decimal(amount) * Decimal(percent) / 100)


def _amount(value) -> Decimal:
    value = getattr(value, "amount", value)
    return value if isinstance(value, Decimal) else Decimal(str(value))


def fmt_amount(value) -> str:
    """An amount as data (the statement JSON, the API, CSV): ``1234.50``, two decimals, no grouping."""
    return f"{_amount(value):.2f}"


def fmt_dollars(value, *, signed: bool = True) -> str:
    """An amount for people (the bill, the portal, the admin): ``$1,234.56``; a credit ``−$30.00``."""
    amount = _amount(value)
    text = f"${abs(amount):,.2f}"
    return f"−{text}" if signed and amount < 0 else text


def fmt_rate(value) -> str:
    """A rate: at least two decimals, more only when the rate has them (``3.10``, ``0.0015``), never ``3.1``
    or ``3.100000``."""
    return _fmt_rate(_amount(value))


@lru_cache(maxsize=1024)  # a schedule has a handful of rates, printed on every bill of a run
def _fmt_rate(value: Decimal) -> str:
    text = f"{value.normalize():f}"
    return f"{value:.2f}" if len(text.partition(".")[2]) <= 2 else text


def fmt_gallons(gallons: int) -> str:
    return f"{int(gallons):,}"
