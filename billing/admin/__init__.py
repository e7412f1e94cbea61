"""The billing office in the admin: the ordinance's schedules and fees, runs and their exceptions, bills
(read-only), payments and the counter, corrections, charges between bills, deposits, penalties, final bills.

Issued bills never change here: the bill page is read-only and offers "Void" and credit/debit memos,
which are new records with a reason and the clerk. Writes go through the services, as everywhere.
The account page's billing part (``AccountBillingAdmin``) is composed in ``waterbilling/admin.py``.
"""

from . import amendments, bills, charges, districts, penalties, rates  # noqa: F401  (each registers its admins)
from .account import AccountBillingAdmin
from .payments import PaymentAdmin
from .runs import BillingRunAdmin

__all__ = ["AccountBillingAdmin", "BillingRunAdmin", "PaymentAdmin"]
