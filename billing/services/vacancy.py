"""A claim for a deduction because premises stood vacant with the water shut off (Washingtonville § 169-23).

The preset says whether, and from how long a vacancy, a deduction is allowed: the fee for shutting off water
to vacant premises carries ``params.vacancy_deduction`` (``min_months``, ``citation``). A claim for a
shorter vacancy is refused naming the section and the earliest day the vacancy could have ended.
**Interpretation:** the deduction is the minimum charge of every bill whose whole service period lies
within the vacancy (no water passed; the minimum is what it was billed), each credited on its own bill.
"""

from datetime import date
from decimal import Decimal

from django.db import transaction

from accounts.models import Account
from core.clock import refuse_future
from core.dates import add_months
from core.errors import ApplicationError, FieldError
from core.money import fmt_dollars

from ..fees import fee_rule, fees_in_force
from ..models import Adjustment, Bill
from .adjustments import adjustment_create


def vacancy_rule(*, on: date) -> tuple[int, str]:
    """The preset's vacancy deduction rule in force on a date: (the fewest months, the citation)."""
    for fee in fees_in_force(on=on):
        if rule := fee_rule(fee).params.get("vacancy_deduction"):
            return int(rule["min_months"]), rule["citation"]
    raise ApplicationError("the preset allows no deduction for vacancy", field="account_no")


@transaction.atomic(durable=True)
def vacancy_deduction_claim(*, account: Account, vacant_from: date, vacant_until: date, as_of: date,
                            actor) -> list[Adjustment]:
    """Credit the minimum charges of the bills a vacancy of at least the preset's months covers; refused,
    changing nothing, naming every field."""
    errors: list[FieldError] = []
    try:
        refuse_future(as_of, doing="credited")
        refuse_future(vacant_until, field="vacant_until", doing="claimed")
    except ApplicationError as exc:
        errors.extend(exc.errors)
    months, citation = vacancy_rule(on=vacant_from)
    earliest_end = add_months(vacant_from, months)
    if vacant_until < earliest_end:
        errors.append(FieldError(field="vacant_until", message=(
            f"a vacancy from {vacant_from} to {vacant_until} is less than {months} months: no claim for deduction "
            f"owing to vacancy is allowed for a shorter period ({citation}); the earliest end is {earliest_end}")))
    bills = [bill for bill in Bill.objects.filter(account=account, period_start__gte=vacant_from,
                                                  period_end__lte=vacant_until)
             .exclude(status=Bill.Status.VOID).prefetch_related("lines").order_by("bill_date")]
    minimums = [(bill, sum((line.amount.amount for line in bill.lines.all() if line.kind == "minimum"),
                           Decimal("0.00"))) for bill in bills]
    minimums = [(bill, amount) for bill, amount in minimums if amount > 0]
    if not errors and not minimums:
        errors.append(FieldError(field="vacant_from", message=(
            f"no bill of account {account.account_no} has its whole service period between {vacant_from} and "
            f"{vacant_until}: nothing to deduct")))
    if errors:
        raise ApplicationError(errors=errors)
    return [adjustment_create(
        bill=bill, kind=Adjustment.Kind.CREDIT, amount=amount, as_of=as_of, actor=actor,
        reason=f"Vacancy {vacant_from} – {vacant_until}, water shut off at the owner's request ({citation})",
        description=f"Vacancy deduction ({citation}): minimum charge {fmt_dollars(amount)} on bill {bill.number}")
        for bill, amount in minimums]
