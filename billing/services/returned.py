"""The fee for a payment that came back unpaid (a returned check, a bank debit returned by the customer's bank).

The preset's own fee is charged where its fee schedule has one (``RETURNED_FEE_CODES``, with its section);
otherwise the office's policy (``Utility.returned_payment_fee``, labelled "office policy" on the bill), and where
that is 0.00 none. The fee waits for the account's next bill like any fee charged between bills.
"""

from datetime import date
from decimal import Decimal

from django.db import transaction
from djmoney.money import Money

from accounts.models import Account
from core.errors import NotFound
from ordinance.selectors import installed_utility

from ..districts import account_district
from ..fees import fee_in_force
from ..models import PendingCharge
from ..signals import charge_posted
from .charges import charge_add

RETURNED_FEE_CODES = ("returned_check", "returned_payment")
POLICY_CODE = "returned_payment"
POLICY_CITATION = "policy"


def returned_payment_fee_charge(*, account: Account, as_of: date, what: str, actor=None) -> PendingCharge | None:
    """Charge the returned-payment fee to ``account`` (in the caller's transaction); None when there is none.
    ``what`` says which payment came back, for the charge's note."""
    for code in RETURNED_FEE_CODES:
        try:
            fee_in_force(code=code, on=as_of, district=account_district(account.pk, on=as_of))
        except NotFound:
            continue
        return charge_add(account=account, code=code, as_of=as_of, actor=actor, note=what)
    utility = installed_utility()
    amount = utility.returned_payment_fee if utility is not None else Decimal("0.00")
    if amount <= 0:
        return None
    charge = PendingCharge.objects.create(
        account=account, code=POLICY_CODE, kind=PendingCharge.Kind.FEE,
        description="Returned payment fee (office policy)", citation=POLICY_CITATION, amount=Money(amount, "USD"),
        quantity=Decimal(1), rate=amount, note=what, charged_on=as_of, earliest_bill_on=as_of, created_by=actor)
    transaction.on_commit(lambda: charge_posted.send(sender=PendingCharge, charge_id=charge.pk))
    return charge
