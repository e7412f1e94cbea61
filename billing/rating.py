"""Rating: from gallons to bill lines, with no database.

A ``Schedule`` is built from one effective-dated rate schedule of the preset (``RateSchedule.rules``).
``rate_bill`` turns a ``RatingInput`` — what the calendar and the account's history say about this bill —
into lines. Each line keeps its kind, description, citation, quantity, rate and amount, and is rounded
once, half-up; the total is the sum of the lines. ``MinimumAndBlocks`` is this structure registered in
``billing.ordinance.RATE_STRUCTURES`` (the ``RateStructure`` protocol), the one a ``[[rate_schedule]]``
names with ``structure = "minimum_and_blocks"`` (and the one it gets when it names none).

Per-bill rates (``per_bill`` in the schedule) apply the category's minimum with its allowance, then block
rates, to one bill on its own; they rate the bills of the calendar frequencies that are not monthly
(Mineola's semiannual bills, a quarterly calendar's bills).

Interpretations (docs/ordinances.md, Mineola):
* Semiannual bills (meters 1" or smaller) are rated per bill. Nonprofit accounts fall in "all other uses"
  (§ 45.28 A(2)(b)) unless § 45.28 E applies.
* Monthly bills (meters larger than 1"): the annual minimum for the meter size on the first bill of the
  billable year; the allowance is used up cumulatively over the year, and each bill charges only the
  gallons by which year-to-date consumption newly exceeds it (§ 45.29 C).
* § 45.29 C, a meter changed mid-year from 1" or smaller to larger than 1": the account is billed monthly
  from the change, and its first monthly bill of the billable year carries the annual minimum for the new
  size, regardless of usage. Only the year's *monthly* bills count toward the annual minimum and its
  allowance (``year_so_far``): a semiannual bill's minimum is that bill's own (§ 45.28 A(1)), not the
  annual minimum, and its gallons were charged at per-bill rates with their own allowance and
  blocks, so they neither stand in for the annual minimum nor use up the new size's allowance. The new
  size's allowance applies to the gallons on monthly bills from the change on; the first of them also
  carries what the old meter registered after the last semiannual reading (to its final reading), since
  no bill has charged those gallons yet.
* A bill with no lines is never issued: a monthly bill whose gallons all fall within the year's allowance
  shows them on a $0.00 line with the allowance left, so the customer sees why nothing is charged.
* § 45.28 E: a nonprofit's month of 2,000,000 gallons or more is charged max($500, $0.90 per 1,000)
  instead of the regular schedule; those gallons do not use the regular allowance, and an annual minimum
  not yet charged waits for the first regular-schedule bill of the year. Only monthly bills measure a
  month's consumption, so the rule is applied to monthly bills.
* § 45.28 C(1): the sprinkler service charge on the first bill of the billable year; a supply size with no
  charge in the code is refused.
* A final bill (a move-out or a sale, off the calendar) whose preset rates its minimum ``pro_rata``
  (``[final_bill]``, office policy: no ordinance states a rule) is rated per bill with ``pro_rata``: the
  minimum, its allowance and the block bounds are scaled by the days elapsed over the days of the billing
  period (the minimum rounded once half-up to the cent, the gallons half-up to the whole gallon), and the
  minimum line says so ("pro rata 100/181 days"). Monthly bills ignore it: their annual minimum is charged
  once per billable year (§ 45.29 C), so a final monthly bill is rated as a regular one.
* A bill whose lines would not fit their columns (a quantity of 10^12 gallons or more, an amount of
  $10,000,000,000 or more) is refused, not written: only a misread reading a clerk released gets there.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from core.money import MONEY_MAX, ZERO, cents, fmt_gallons, fmt_rate, per_thousand
from ordinance.keys import Flag, Key, MapOf, Number, Shape, Tables, Text, Whole, amount

from .rate_tables import CATEGORIES
from .registries import RATE_STRUCTURES

# BillLine.quantity is numeric(14, 2); amounts are numeric(12, 2) (``MONEY_MAX``).
QUANTITY_MAX = Decimal("999999999999.99")


class RatingError(ValueError):
    """The bill cannot be rated under the ordinance as written (the message names the section)."""


@dataclass(frozen=True)
class Line:
    kind: str
    description: str
    citation: str
    quantity: Decimal
    rate: Decimal
    amount: Decimal


@dataclass(frozen=True)
class Block:
    up_to_gallons: int | None  # cumulative upper bound of the block; None = no upper bound
    per_1000: Decimal
    citation: str


@dataclass(frozen=True)
class PerBillRate:
    minimum: Decimal
    allowance: int
    minimum_citation: str
    blocks: tuple[Block, ...]
    per_unit: bool = False  # the minimum and allowance are "for each dwelling or commercial unit"


@dataclass(frozen=True)
class AnnualMinimum:
    amount: Decimal
    allowance: int


@dataclass(frozen=True)
class Schedule:
    per_bill: dict[str, PerBillRate]
    monthly_minimums: dict[str, AnnualMinimum]
    monthly_excess_per_1000: Decimal
    monthly_citation: str
    nonprofit_threshold: int | None = None
    nonprofit_per_1000: Decimal = ZERO
    nonprofit_minimum: Decimal = ZERO
    nonprofit_citation: str = ""
    sprinkler: dict[str, Decimal] = field(default_factory=dict)
    sprinkler_citation: str = ""

    @classmethod
    def from_rules(cls, rules: dict) -> "Schedule":
        per_bill = {}
        for category, spec in rules.get("per_bill", {}).items():
            minimum = spec["minimum"]
            per_bill[category] = PerBillRate(
                minimum=Decimal(minimum["amount"]), allowance=int(minimum["allowance_gallons"]),
                minimum_citation=minimum["citation"], per_unit=bool(minimum.get("per_unit", False)),
                blocks=tuple(Block(b.get("up_to_gallons"), Decimal(b["per_1000"]), b["citation"])
                             for b in spec["blocks"]))
        monthly = rules.get("monthly", {})
        nonprofit = rules.get("nonprofit")
        sprinkler = rules.get("sprinkler", {})
        return cls(
            per_bill=per_bill,
            monthly_minimums={m["size"]: AnnualMinimum(Decimal(m["amount"]), int(m["allowance_gallons"]))
                              for m in monthly.get("annual_minimum", [])},
            monthly_excess_per_1000=Decimal(monthly.get("excess_per_1000", "0")),
            monthly_citation=monthly.get("citation", ""),
            nonprofit_threshold=int(nonprofit["threshold_gallons"]) if nonprofit else None,
            nonprofit_per_1000=Decimal(nonprofit["per_1000"]) if nonprofit else ZERO,
            nonprofit_minimum=Decimal(nonprofit["monthly_minimum"]) if nonprofit else ZERO,
            nonprofit_citation=nonprofit["citation"] if nonprofit else "",
            sprinkler={size: Decimal(amount) for size, amount in sprinkler.get("annual_by_supply_inches", {}).items()},
            sprinkler_citation=sprinkler.get("citation", ""),
        )


@dataclass(frozen=True)
class ProRata:
    """Part of a billing period: ``days`` of its ``of_days`` (a final bill's minimum and allowance)."""

    days: int
    of_days: int
    citation: str = ""  # the rule that pro-rates (a preset's final-bill policy), added to the minimum's citation

    def __post_init__(self):
        if not 0 < self.days <= self.of_days:
            raise RatingError(f"a pro rata part must be 1 to {self.of_days} days of {self.of_days}, not {self.days}")

    def gallons(self, gallons: int) -> int:
        """Whole gallons, half-up."""
        return (2 * gallons * self.days + self.of_days) // (2 * self.of_days)

    def dollars(self, amount: Decimal) -> Decimal:
        return cents(amount * self.days / self.of_days)

    @property
    def words(self) -> str:
        return f"pro rata {self.days}/{self.of_days} days"


@dataclass(frozen=True)
class RatingInput:
    frequency: str  # the calendar's: "monthly", or a per-bill one ("semiannual", "quarterly")
    category: str  # "one_two_family" | "other" | "nonprofit"
    gallons: int
    meter_size: str = ""
    # Monthly bills: has the annual minimum already been charged this billable year, and how many gallons
    # have earlier bills of the year counted against the regular allowance?
    annual_minimum_charged: bool = False
    year_to_date_gallons: int = 0
    # The sprinkler charge is due on the first bill of the billable year.
    sprinkler_supply_inches: str = ""
    first_bill_of_year: bool = False
    # A final bill's part of the billing period (per-bill rates only); None rates the whole period.
    pro_rata: ProRata | None = None
    # The dwelling or commercial units the service supplies (``Account.units``): a minimum charged per unit counts it.
    units: int = 1
    # The account's own facts a general rate structure reads (``Account.rate_fields``: water_type, hhsize, …).
    facts: Mapping[str, object] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class EarlierBill:
    """A bill already issued in the billable year, as much of it as monthly rating needs."""

    frequency: str
    includes_annual_minimum: bool
    schedule_gallons: int


def year_so_far(earlier_in_year: Iterable[EarlierBill]) -> tuple[bool, int]:
    """For a monthly bill: (is the annual minimum already charged this billable year, gallons earlier bills
    counted against its allowance). Only monthly bills count; see the § 45.29 C meter-change interpretation
    at the top."""
    monthly = [bill for bill in earlier_in_year if bill.frequency == "monthly"]
    return any(bill.includes_annual_minimum for bill in monthly), sum(bill.schedule_gallons for bill in monthly)


@dataclass(frozen=True)
class Rated:
    lines: tuple[Line, ...]
    schedule_gallons: int
    includes_annual_minimum: bool

    @property
    def total(self) -> Decimal:
        return sum((line.amount for line in self.lines), ZERO)


def blocks_in_order(category: dict, where: str) -> list[str]:
    """A category's blocks as the chapter writes them: each bound above the one before and above the minimum's
    allowance, and one block, the last, with no bound. (A bound written twice, out of order or inside the
    allowance would leave a block that never bills, or two that bill the same gallons.)"""
    found = []
    blocks = category.get("blocks", [])
    allowance = category.get("minimum", {}).get("allowance_gallons", 0)
    lower, lower_words = allowance, f"the minimum's allowance_gallons ({allowance:,})"
    for n, block in enumerate(blocks, 1):
        bound = block.get("up_to_gallons")
        at = f"{where[:-1]}.blocks #{n}]"
        if bound is None:
            if n != len(blocks):
                found.append(f"{at} has no up_to_gallons but is not the last block: only the last block is unbounded")
            continue
        if bound <= lower:
            found.append(f"{at} up_to_gallons = {bound:,} is not above {lower_words}: the bounds rise block by "
                         "block, each above the allowance")
        lower, lower_words = max(lower, bound), f"the block before ({bound:,})"
    if blocks and blocks[-1].get("up_to_gallons") is not None:
        found.append(f"{where[:-1]}.blocks #{len(blocks)}] up_to_gallons = {blocks[-1]['up_to_gallons']:,}: the "
                     "last block has no upper bound (leave up_to_gallons out), or the gallons above it bill nothing")
    return found


def _category_problem(name: str) -> str | None:
    return None if name in CATEGORIES else f"is not an account category ({', '.join(CATEGORIES)})"


PER_1000 = Number(high=Decimal(1000), places=6, what="a rate in dollars per 1,000 gallons",
                  why="a water rate is never negative, and one of $1,000 per 1,000 gal is a typing slip")
MINIMUM = amount("100000", why="a minimum charge is never negative")
GALLONS = Whole(0, 10**10, unit="gallons")
CITED = Key("the section that authorizes it", Text(blank=False), required=True)
PER_BILL_CATEGORY = Shape({
    "minimum": Key("the minimum charge of each bill and the gallons it includes", Shape({
        "amount": Key("the minimum charge", MINIMUM, required=True),
        "allowance_gallons": Key("the gallons the minimum includes", GALLONS, required=True),
        "per_unit": Key('true where the chapter sets the minimum "for each dwelling or commercial unit": the '
                        "minimum and its allowance are multiplied by the account's units", Flag()),
        "citation": CITED}), required=True),
    "blocks": Key("the rates above the allowance, lowest first; each block's up_to_gallons is its upper bound (the "
                  "bill's gallons, counted from 0), the last block has none", Tables(Shape({
                      "up_to_gallons": Key("the block's upper bound, in gallons on the bill (none on the last block)",
                                           Whole(1, 10**10, unit="gallons")),
                      "per_1000": Key("the rate of each 1,000 gallons in the block", PER_1000, required=True),
                      "citation": CITED})), required=True)}, checks=(blocks_in_order,))
MINIMUM_AND_BLOCKS_KEYS = {
    "per_bill": Key("per-bill rates, by account category (one_two_family, other, nonprofit; an account whose "
                    "category has none is rated as other)", MapOf(PER_BILL_CATEGORY, "category", _category_problem)),
    "monthly": Key("monthly bills (meters billed every month): the annual minimum by meter size, the rate above "
                   "the year's allowance", Shape({
                       "annual_minimum": Key("the annual minimum of each meter size", Tables(Shape({
                           "size": Key('the meter size in inches ("1 1/2")', Text(blank=False), required=True),
                           "amount": Key("the annual minimum charge", MINIMUM, required=True),
                           "allowance_gallons": Key("the gallons it includes for the billable year", GALLONS,
                                                    required=True)})), required=True),
                       "excess_per_1000": Key("the rate above the year's allowance", PER_1000, required=True),
                       "citation": CITED})),
    "nonprofit": Key("a nonprofit's large month rated on its own", Shape({
        "threshold_gallons": Key("a month of at least this many gallons", GALLONS, required=True),
        "per_1000": Key("its rate", PER_1000, required=True),
        "monthly_minimum": Key("at least this much that month", MINIMUM, required=True), "citation": CITED})),
    "sprinkler": Key("the automatic sprinkler service charge", Shape({
        "annual_by_supply_inches": Key("the yearly charge of each supply pipe size",
                                       MapOf(MINIMUM, "supply size in inches"), required=True),
        "citation": CITED}))}


@RATE_STRUCTURES.register
class MinimumAndBlocks:
    """Per-bill minimum and blocks by category; monthly bills by the meter's annual minimum (above)."""

    name = "minimum_and_blocks"
    KEYS = MINIMUM_AND_BLOCKS_KEYS

    def __init__(self, rules: dict):
        self.schedule = Schedule.from_rules(rules)

    def rate(self, bill: RatingInput) -> Rated:
        return rate_bill(self.schedule, bill)

    def year_so_far(self, earlier_in_year: Iterable[EarlierBill], *, frequency: str) -> tuple[bool, int]:
        # Only monthly bills count, whatever this bill's frequency (§ 45.29 C, above).
        return year_so_far(earlier_in_year)


def rate_bill(schedule: Schedule, bill: RatingInput) -> Rated:
    if bill.gallons < 0:
        raise RatingError("consumption cannot be negative")
    if bill.frequency == "monthly":
        rated = _rate_monthly(schedule, bill)
    elif bill.frequency in ("semiannual", "quarterly"):
        rated = _rate_per_bill(schedule, bill)
    else:
        raise RatingError(f"unknown billing frequency '{bill.frequency}'")
    rated = with_sprinkler(schedule, bill, rated)
    refuse_beyond_columns(rated, gallons=bill.gallons)
    return rated


def with_sprinkler(schedule: Schedule, bill: RatingInput, rated: Rated) -> Rated:
    """The bill's lines and, on the first bill of the billable year of an account with a sprinkler supply, the
    sprinkler service charge (§ 45.28 C(1))."""
    if not (bill.sprinkler_supply_inches and bill.first_bill_of_year):
        return rated
    return Rated(rated.lines + (sprinkler_line(schedule, bill.sprinkler_supply_inches),),
                 rated.schedule_gallons, rated.includes_annual_minimum)


def refuse_beyond_columns(rated: Rated, *, gallons: int) -> None:
    total = rated.total
    if total <= MONEY_MAX and all(line.quantity <= QUANTITY_MAX and line.amount <= MONEY_MAX
                                  for line in rated.lines):
        return
    raise RatingError(f"{gallons:,} gal (${total:,.2f}) is more than a bill can hold (at most "
                      f"{int(QUANTITY_MAX):,} gal on a line and ${MONEY_MAX:,.2f} in all); check the readings: one "
                      "this far off is a misread or a typing mistake — correct it, or enter an estimated reading")


def _rate_per_bill(schedule: Schedule, bill: RatingInput) -> Rated:
    category = bill.category if bill.category in schedule.per_bill else "other"
    if category not in schedule.per_bill:
        raise RatingError(f"the rate schedule has no rates for category '{bill.category}'")
    rate = schedule.per_bill[category]
    part = bill.pro_rata
    units = bill.units if rate.per_unit else 1
    if units < 1:
        raise RatingError(f"{rate.minimum_citation}: the minimum is charged for each unit, and the account has "
                          f"{units} units; set its units to 1 or more")
    # Per unit: "3 units × $100.00", the minimum and its allowance multiplied; the line's rate is, as on every
    # minimum line, the charge itself.
    each = f"{units} unit{'s' if units != 1 else ''} × ${rate.minimum:,.2f}, " if rate.per_unit else ""
    whole_minimum, allowance = rate.minimum * units, rate.allowance * units
    if part is None:
        lines = [Line("minimum", f"Minimum charge, {each}includes {fmt_gallons(allowance)} gal",
                      rate.minimum_citation, Decimal(allowance), whole_minimum, cents(whole_minimum))]
        lower = allowance
    else:
        minimum, lower = part.dollars(whole_minimum), part.gallons(allowance)
        lines = [Line("minimum", f"Minimum charge {each}${whole_minimum:,.2f}, {part.words}, includes "
                      f"{fmt_gallons(lower)} gal", "; ".join(filter(None, (rate.minimum_citation, part.citation))),
                      Decimal(lower), minimum, minimum)]
    for block in rate.blocks:
        upper = block.up_to_gallons
        if part is not None and upper is not None:
            upper = part.gallons(upper)
        in_block = max(0, (bill.gallons if upper is None else min(bill.gallons, upper)) - lower)
        if in_block:
            span = f"{fmt_gallons(lower + 1)}–{fmt_gallons(upper)} gal" if upper else f"over {fmt_gallons(lower)} gal"
            lines.append(Line("consumption",
                              f"{span}: {fmt_gallons(in_block)} gal at ${fmt_rate(block.per_1000)} per 1,000",
                              block.citation, Decimal(in_block), block.per_1000,
                              per_thousand(in_block, block.per_1000)))
        if upper is not None:
            lower = max(lower, upper)
    return Rated(tuple(lines), bill.gallons, True)


def nonprofit_month(schedule: Schedule, bill: RatingInput) -> Rated | None:
    """A nonprofit's monthly bill of the threshold or more rated by § 45.28 E instead of the regular schedule,
    or None when the rule does not apply. Its gallons do not use the regular allowance (``schedule_gallons``
    0) and it does not carry the annual minimum (see the interpretations at the top)."""
    if (bill.frequency != "monthly" or bill.category != "nonprofit" or schedule.nonprofit_threshold is None
            or bill.gallons < schedule.nonprofit_threshold):
        return None
    at_rate = per_thousand(bill.gallons, schedule.nonprofit_per_1000)
    if at_rate >= schedule.nonprofit_minimum:
        line = Line("nonprofit", f"Nonprofit rate: {fmt_gallons(bill.gallons)} gal at "
                    f"${fmt_rate(schedule.nonprofit_per_1000)} per 1,000", schedule.nonprofit_citation,
                    Decimal(bill.gallons), schedule.nonprofit_per_1000, at_rate)
    else:
        line = Line("nonprofit", f"Nonprofit monthly minimum ({fmt_gallons(bill.gallons)} gal at "
                    f"${fmt_rate(schedule.nonprofit_per_1000)} per 1,000 would be ${at_rate})",
                    schedule.nonprofit_citation, Decimal(bill.gallons), schedule.nonprofit_per_1000,
                    cents(schedule.nonprofit_minimum))
    return Rated((line,), 0, False)


def _rate_monthly(schedule: Schedule, bill: RatingInput) -> Rated:
    nonprofit = nonprofit_month(schedule, bill)
    if nonprofit is not None:
        return nonprofit

    minimum = schedule.monthly_minimums.get(bill.meter_size)
    if minimum is None:
        sizes = ", ".join(f'{s}"' for s in schedule.monthly_minimums)
        raise RatingError(f'{schedule.monthly_citation} sets no annual minimum for a {bill.meter_size}" meter '
                          f"(sizes: {sizes})")
    lines = []
    if not bill.annual_minimum_charged:
        lines.append(Line("minimum", f'Annual minimum charge, {bill.meter_size}" meter, includes '
                          f"{fmt_gallons(minimum.allowance)} gal for the billable year",
                          schedule.monthly_citation, Decimal(minimum.allowance), minimum.amount,
                          cents(minimum.amount)))
    before, after = bill.year_to_date_gallons, bill.year_to_date_gallons + bill.gallons
    excess = max(0, after - minimum.allowance) - max(0, before - minimum.allowance)
    if excess:
        lines.append(Line("consumption", f"{fmt_gallons(excess)} gal over the year's "
                          f"{fmt_gallons(minimum.allowance)} gal allowance at "
                          f"${fmt_rate(schedule.monthly_excess_per_1000)} per 1,000", schedule.monthly_citation,
                          Decimal(excess), schedule.monthly_excess_per_1000,
                          per_thousand(excess, schedule.monthly_excess_per_1000)))
    if not lines:
        left = minimum.allowance - after
        # ``left`` is negative only when no gallons were used after the allowance ran out.
        where = (f"within the year's {fmt_gallons(minimum.allowance)} gal allowance, {fmt_gallons(left)} gal left"
                 if left >= 0 else f"the year's {fmt_gallons(minimum.allowance)} gal allowance is used up")
        lines.append(Line("consumption", f"{fmt_gallons(bill.gallons)} gal, {where}", schedule.monthly_citation,
                          Decimal(bill.gallons), ZERO, cents(ZERO)))
    return Rated(tuple(lines), bill.gallons, not bill.annual_minimum_charged)


def sprinkler_line(schedule: Schedule, supply: str) -> Line:
    """The sprinkler service charge for a supply pipe of this size; a size with no charge is refused."""
    amount = schedule.sprinkler.get(supply)
    if amount is None:
        sizes = ", ".join(f'{s}"' for s in schedule.sprinkler)
        raise RatingError(f'{schedule.sprinkler_citation} sets no sprinkler charge for a {supply}" supply pipe '
                          f"(only {sizes}); "
                          "the Board must set one before this account can be billed")
    return Line("sprinkler", f'Automatic sprinkler annual service charge, {supply}" supply',
                schedule.sprinkler_citation, Decimal(1), amount, cents(amount))
