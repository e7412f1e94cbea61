"""Open Water Rate Specification (OWRS) files: read, check, write and rate, with no database.

Design overview
---------------
An OWRS file (the California Data Collaborative's YAML format for water rates) gives, per customer class,
an ordered list of named *parts*: numbers, formulas, tier lists, maps keyed by a field of the account
(``depends_on`` + ``values``), and for ``commodity_charge`` / ``sewer_charge`` a rate type (``Tiered``,
``Budget``, ``Uniform``). ``bill`` is the formula of the bill. This module reproduces the reference
calculator, RateParser, exactly:

* ``parse`` reads the file's text into an ``OwrsFile`` (frozen; ``to_json``/``from_json`` for storage in a
  rate schedule) and checks every class statically: a file that would fail on some bill is refused as a
  whole, with the line and the part, before any bill is rated with it.
* ``bill`` rates one bill of a class from its facts (usage, meter size, the account's fields). A class's
  parts are evaluated in file order, each reading only the parts before it and the facts.
* ``dump`` writes the canonical text: ``parse(dump(f)) == f`` and a second dump is byte-identical.

What a file holds once read is in ``files``; reading and the static checks in ``read``, writing in ``write``,
rating in ``rate``.

Interpretations:
* Numbers are read from the file's text, never through a float: ``4.07`` is exactly 407/100, and all
  arithmetic is on ``Fraction``. 1 ccf is exactly 748.052 gallons.
* Usage in tiers follows RateParser's ``get_usage_in_tiers``: a tier start is the first unit billed in the
  tier, so starts 0, 15, 21, 26 put 14, 6, 5 and the rest of 27.3 ccf in the four tiers. Budget tier
  starts (numbers, names, or percentages of ``budget``) are rounded up to a whole unit first.
* Each bill line's amount is its exact quantity times its price, rounded once, half away from zero, to
  the cent; the bill's total is the sum of its lines. A formula that reads a Tiered part sees the part's
  exact (unrounded) total.
* ``bill`` written as a sum or difference of part names gives one group of lines per term, in order, a
  subtracted term's amounts negated; any other bill formula gives one line for the whole bill. A tier
  with no usage gives no line; a tier with usage at $0 does, and so does every fixed or formula part the
  bill names, even at $0.00.
* Meter-size keys are written with an inch mark (``5/8"``); keys are compared with a trailing ``"``
  dropped, whitespace collapsed and numbers written plainly, so ``5/8"`` matches the meter size "5/8".
* ``tier_usage: <field>`` (ours) makes a class's tiers count that field instead of ``usage_ccf`` (the
  Mineola export counts gallons with ``tier_usage: usage_gal``); ``Uniform`` (``price``) is one line.
"""

from .files import (
    ACCOUNT_FIELDS,
    CCF_GALLONS,
    ENGINE_FIELDS,
    PRICE_DECIMALS,
    PRICE_PARTS,
    RATE_PARTS,
    RATE_TYPES,
    Charge,
    OwrsError,
    OwrsFile,
    Part,
)
from .rate import bill
from .read import parse
from .write import dump

__all__ = [
    "CCF_GALLONS", "ENGINE_FIELDS", "ACCOUNT_FIELDS", "RATE_TYPES", "RATE_PARTS", "PRICE_PARTS",
    "PRICE_DECIMALS", "OwrsError", "Part", "Charge", "OwrsFile", "parse", "dump", "bill",
]
