"""The outer bounds every value from outside is held to: what the database can hold, and what a date can be.

Every amount column is numeric(12, 2) (``billing.models.money_field``): at most $9,999,999,999.99.
PostgreSQL refuses a larger amount with a numeric-overflow error. SQLite stores it anyway, and from then on
every read of that row fails with ``decimal.InvalidOperation``: the account's statement, the portal and the
penalty run for every account. So the bound is checked where values come in (the CSV parsers, the API, the
admin forms), with a message a clerk can act on. Business bounds tighter than this one (a single payment, a
memo) sit with the code they belong to (``core.money``).

``DATE_FLOOR``: nothing in a water utility's books is dated before 1900. A date before it is a mistyped year
(``0026`` for ``2026``), and taking it would make a period of two thousand years.
"""

from datetime import date
from decimal import Decimal

MONEY_MAX_DIGITS = 12
MONEY_DECIMAL_PLACES = 2
MONEY_MAX = Decimal(10 ** (MONEY_MAX_DIGITS - MONEY_DECIMAL_PLACES)) - Decimal("0.01")

DATE_FLOOR = date(1900, 1, 1)
