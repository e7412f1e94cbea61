"""What a meter test at the customer's request costs: the preset's meter test fee, or none and a credit.

The meter facts — the request, the gallons that actually passed and what the register showed — are the
meters app's (``meters.models.MeterTest``). The money is billing's, by the fee of the schedule in force on
the test day whose rule is ``meter_test`` (``billing.fees.MeterTestFee``):

* Washingtonville § 169-22: $20, except no charge when the meter registers **over** 3% more water than
  actually passes (exactly 3% is charged); then the water a fast meter overbilled is credited;
* Old Westbury § 210-30 A: $25 when the meter is accurate to the state's standard; no charge when not.

A charged test goes through ``charge_add`` onto the account's next bill as a fee line with its citation.
Credits are credit memos (``adjustment_create``) on the bills the test covers.

Interpretations:
* **The bills a test covers**: the live bills of the account whose end reading is the tested meter's, read
  on or before the test day and after the meter's previous settled test (or its installation).
* **Overbilled water on a bill**: the meter registered ``registered / actual`` times what passed, so the
  water that passed is the bill's gallons × actual / registered, half-up to the gallon. The bill's water
  lines are rated again at those gallons under the bill's own rate schedule (a bill's minimum stays its
  minimum), and the difference is the credit; a bill whose water the correction does not change gets none.
"""

from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from django.db import transaction

from core.clock import refuse_future
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars
from meters.models import MeterTest
from meters.services import meter_test_settled

from ..districts import account_district
from ..fees import fee_in_force, fee_rule, fee_with_rule
from ..models import Adjustment, Bill, PendingCharge
from ..ordinance import ordinance_on, rate_structure_for
from ..rating import EarlierBill, RatingInput
from .adjustments import adjustment_create
from .charges import charge_add

WATER_LINE_KINDS = ("minimum", "consumption", "nonprofit")


@dataclass
class MeterTestSettlement:
    test: MeterTest
    words: str
    charge: PendingCharge | None = None
    credits: list[Adjustment] = field(default_factory=list)


def bills_covered(*, test: MeterTest) -> list[Bill]:
    """The live bills the test covers (above), oldest first."""
    earlier = (MeterTest.objects.filter(meter_id=test.meter_id, settled_on__isnull=False,
                                        tested_on__lt=test.tested_on).order_by("-tested_on")
               .values_list("tested_on", flat=True).first())
    bills = (Bill.objects.filter(account_id=test.account_id, end_reading__meter_id=test.meter_id,
                                 end_reading__read_on__lte=test.tested_on)
             .exclude(status=Bill.Status.VOID).select_related("rate_schedule", "account")
             .prefetch_related("lines").order_by("bill_date", "id"))
    if earlier is not None:
        bills = bills.filter(end_reading__read_on__gt=earlier)
    return list(bills)


def overbilled_credit(*, bill: Bill, actual: Decimal, registered: Decimal) -> tuple[int, Decimal]:
    """(gallons that passed, the water charge overbilled) of one bill, rated again (above)."""
    passed = int((Decimal(bill.gallons) * actual / registered).quantize(Decimal(1), ROUND_HALF_UP))
    billed = sum((line.amount.amount for line in bill.lines.all() if line.kind in WATER_LINE_KINDS), ZERO)
    rates = rate_structure_for(bill.rate_schedule.rules)
    year_start = ordinance_on(bill.bill_date).calendar.billable_year_start(book=bill.account.book, on=bill.bill_date)
    in_year = (Bill.objects.filter(account_id=bill.account_id, bill_date__gte=year_start, bill_date__lt=bill.bill_date)
               .exclude(status=Bill.Status.VOID))
    annual_minimum_charged, year_to_date = rates.year_so_far(
        (EarlierBill(b.frequency, b.includes_annual_minimum, b.schedule_gallons) for b in in_year),
        frequency=bill.frequency)
    meter_size = bill.end_reading.meter.size if bill.end_reading_id else ""
    rated = rates.rate(RatingInput(frequency=bill.frequency, category=bill.account.category, gallons=passed,
                                   meter_size=meter_size, annual_minimum_charged=annual_minimum_charged,
                                   year_to_date_gallons=year_to_date, units=bill.account.units,
                                   facts=bill.account.rate_fields or {}))
    rerated = sum((line.amount for line in rated.lines if line.kind in WATER_LINE_KINDS), ZERO)
    return passed, max(billed - rerated, ZERO)


@transaction.atomic(durable=True)
def meter_test_settle(*, test: MeterTest, as_of: date, actor, code: str | None = None) -> MeterTestSettlement:
    """Settle a tested meter test by the preset's meter test fee: charge the fee for the next bill, or charge
    nothing and (where the fee says so) credit the overbilled water. Refused, changing nothing, when the test
    has no result, is settled already, or the preset has no meter test fee."""
    refuse_future(as_of, field="as_of", doing="settled")
    test = MeterTest.objects.select_for_update().select_related("meter", "account").get(pk=test.pk)
    if test.tested_on is None or test.error_percent is None:
        raise ApplicationError("the meter has not been tested yet; record the test's result first", field="tested_on")
    if test.settled_on is not None:
        raise ApplicationError(f"the test was settled on {test.settled_on}: {test.outcome}", field="settled_on")
    if as_of < test.tested_on:
        raise ApplicationError(f"{as_of} is before the test ({test.tested_on})", field="as_of")
    district = account_district(test.account_id, on=test.tested_on)
    fee = (fee_in_force(code=code, on=test.tested_on, district=district) if code
           else fee_with_rule(rule="meter_test", on=test.tested_on, district=district))
    rule = fee_rule(fee)
    if not hasattr(rule, "outcome"):
        raise ApplicationError(f"{fee.description} ({fee.citation}) is not a meter test fee", field="code")
    error = test.error_percent.quantize(Decimal("0.01"), ROUND_HALF_UP)
    outcome = rule.outcome(test.error_percent)
    words = outcome.words
    settlement = MeterTestSettlement(test=test, words=words)
    if outcome.charged:
        settlement.charge = charge_add(account=test.account, code=fee.code, as_of=as_of, actor=actor,
                                       note=f"Meter test of {test.meter.serial} on {test.tested_on}: {words}")
    if outcome.credit_overbilled:
        for bill in bills_covered(test=test):
            passed, credit = overbilled_credit(bill=bill, actual=test.actual_gallons,
                                               registered=test.registered_gallons)
            if credit <= ZERO:
                continue
            settlement.credits.append(adjustment_create(
                bill=bill, kind=Adjustment.Kind.CREDIT, amount=credit, as_of=as_of, actor=actor,
                reason=f"Meter test of {test.meter.serial} on {test.tested_on}: {words}",
                description=(f"Meter registered {error}% more than passed ({fee.citation}): "
                             f"{bill.gallons - passed:,} gal overbilled, credited")))
        if settlement.credits:
            total = sum((c.amount.amount for c in settlement.credits), ZERO)
            settlement.words += (f"; overbilled water credited: {fmt_dollars(total)} on "
                                 f"{len(settlement.credits)} bill(s)")
    meter_test_settled(test=test, on=as_of, outcome=settlement.words)
    return settlement
