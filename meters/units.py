"""Meter sizes and units: exact sizes, and cubic feet to gallons (7.48052 gal/ft³, whole gallons)."""

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from functools import cache

# The sizes a village sets, as written on the meter; kept as text so 5/8 stays exactly 5/8.
METER_SIZES = ("5/8", "3/4", "1", "1 1/2", "2", "3", "4", "6", "8")
GALLONS_PER_CUBIC_FOOT = Decimal("7.48052")

_ALIASES = {"1.5": "1 1/2", "1-1/2": "1 1/2", "11/2": "1 1/2", "0.625": "5/8", "0.75": "3/4",
            ".625": "5/8", ".75": "3/4", "5/8 x 3/4": "5/8", "1.0": "1"}


def normalize_size(text: str) -> str:
    """'1.5', '1-1/2', '1 1/2"' → '1 1/2'. Raises ValueError naming the sizes allowed."""
    cleaned = " ".join(str(text).replace('"', "").replace("in", "").split())
    cleaned = _ALIASES.get(cleaned, cleaned)
    if cleaned not in METER_SIZES:
        raise ValueError(f"'{text}' is not a meter size; use one of {', '.join(METER_SIZES)}")
    return cleaned


@cache
def size_inches(size: str) -> Fraction:
    whole, _, frac = size.partition(" ")
    return Fraction(whole) + (Fraction(frac) if frac else 0)


def to_gallons(register_difference: int, unit: str, places: int = 0) -> int:
    """Whole gallons (half up) for a register's advance in its steps: a meter with ``places`` counts in 10^-places
    of its unit."""
    if unit == "cf":
        gallons = Decimal(register_difference).scaleb(-places) * GALLONS_PER_CUBIC_FOOT
        return int(gallons.quantize(Decimal(1), ROUND_HALF_UP))
    if places:
        return int(Decimal(register_difference).scaleb(-places).quantize(Decimal(1), ROUND_HALF_UP))
    return int(register_difference)


def register_text(value: int, places: int = 0, *, grouped: bool = True) -> str:
    """A register kept in steps as the meter shows it: 5008216 with 2 places is "50,082.16"."""
    if not places:
        return f"{value:,}" if grouped else str(value)
    number = Decimal(value).scaleb(-places)
    return f"{number:,.{places}f}" if grouped else f"{number:.{places}f}"


def register_steps(number: Decimal, places: int) -> int:
    """A register in the meter's unit as its steps; ValueError where it has more places than the meter shows."""
    steps = number.scaleb(places)
    if steps != steps.to_integral_value():
        raise ValueError(f"{number} has more places than the meter's register shows ({places})")
    return int(steps)
