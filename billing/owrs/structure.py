"""The ``owrs`` rate structure: a rate schedule written in the Open Water Rate Specification.

A schedule's rules are ``{"structure": "owrs", "citation": ..., "class_map": {...}, "owrs": OwrsFile.to_json()}``.
The file's customer classes say how a bill is charged (``billing.owrs`` evaluates them); the class map says
which class bills which of our accounts:

* an account whose ``rate_fields`` name a ``cust_class`` is billed by that class;
* otherwise by the class mapped to its category at the bill's frequency (``other@monthly``), else by the class
  mapped to its category whatever the frequency (``other``); an account no class maps is refused, naming it.

The map is kept class → targets, a class billing several targets written comma-separated
(``{"OTHER": "other, nonprofit", "MONTHLY": "one_two_family@monthly, other@monthly"}``), so a file lists its
classes once; a target mapped to two classes is refused.

The file's ``waterbilling`` section (ours; OWRS readers ignore it) may carry:

* ``class_map`` — the map above, so an exported file imports back as it was;
* ``nonprofit`` — the § 45.28 E rule in the shape of a Mineola schedule's ``nonprofit`` table: a nonprofit
  account's *monthly* bill of the threshold or more is rated by it instead of the classes, exactly as
  ``billing.rating`` does (its gallons use no allowance and it carries no annual minimum);
* ``sprinkler`` — the sprinkler service charge by supply pipe, on the first bill of the billable year, as the
  Mineola schedule's ``sprinkler`` table;
* ``class_citations`` — ``{CLASS: {part: citation}}`` where a part's citation differs from class to class
  (the file's ``metadata.citations`` holds one citation per part name).

Interpretations:
* Each OWRS bill counts as the year's regular bill (``includes_annual_minimum``) and its gallons count toward
  the year (``year_usage_gal`` of later bills of the same frequency); a class that charges a yearly minimum
  reads ``annual_minimum_charged``.
* A final bill's part of a billing period (``pro_rata``) is refused: an OWRS file states no rule for it.
"""

from collections.abc import Iterable, Mapping

from core.errors import ApplicationError
from ordinance.keys import Key, MapOf, Open

from .. import owrs
from ..rating import (
    EarlierBill,
    Line,
    Rated,
    RatingError,
    RatingInput,
    Schedule,
    nonprofit_month,
    refuse_beyond_columns,
    with_sprinkler,
)
from ..registries import RATE_STRUCTURES

# The waterbilling section's tables that are rated as billing.rating rates them.
RATING_TABLES = ("nonprofit", "sprinkler")


def split_targets(value: str) -> list[str]:
    """'other, nonprofit' → ['other', 'nonprofit']."""
    return [target.strip() for target in str(value).split(",") if target.strip()]


def class_targets(class_map: Mapping[str, str]) -> dict[str, str]:
    """The class map turned round: target (``category`` or ``category@frequency``) → class. A target mapped to
    two classes is refused, naming both."""
    by_target: dict[str, str] = {}
    for cls, targets in class_map.items():
        for target in split_targets(targets):
            if by_target.get(target, cls) != cls:
                raise ApplicationError(f"{target} is mapped to two classes, {by_target[target]} and {cls}; map it "
                                       "to one", field="class_map")
            by_target[target] = cls
    return by_target


def class_for(by_target: Mapping[str, str], *, category: str, frequency: str) -> str | None:
    """The class billing a category at a frequency: its ``category@frequency`` entry, else its plain one."""
    return by_target.get(f"{category}@{frequency}") or by_target.get(category)


def extra_schedule(extra: Mapping) -> Schedule:
    """The waterbilling section's nonprofit and sprinkler tables, read as billing.rating reads them."""
    tables = {name: extra[name] for name in RATING_TABLES if extra.get(name)}
    try:
        return Schedule.from_rules(tables)
    except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
        raise ApplicationError(f"the waterbilling section's {' and '.join(tables) or 'tables'} cannot be read "
                               f"({exc.__class__.__name__}: {exc}); write them as a Mineola schedule's nonprofit "
                               "and sprinkler tables", field="waterbilling") from exc


def _kind(charge: owrs.Charge) -> str:
    # A commodity charge written as a formula (MONTHLY's gallons over the allowance) is water consumption
    # all the same: meter test credits and the bill's water subtotal count it so.
    return "consumption" if charge.part == "commodity_charge" and charge.kind == "charge" else charge.kind


@RATE_STRUCTURES.register
class OwrsRates:
    """Bills rated by the customer classes of an OWRS file (above)."""

    name = "owrs"
    KEYS = {"owrs": Key("the OWRS rate document (its own reader checks it whole: billing.owrs)", Open(), required=True),
            "class_map": Key("which customer class bills which category (category@frequency for one frequency)",
                             MapOf(Open("a category or a list of them"), "customer class"))}

    def __init__(self, rules: dict):
        self.citation = rules.get("citation", "")
        self.file = owrs.OwrsFile.from_json(rules["owrs"])
        self.class_map = dict(rules.get("class_map") or {})
        self.by_target = class_targets(self.class_map)
        self.extra = extra_schedule(self.file.extra)
        self.class_citations = self.file.extra.get("class_citations") or {}

    def customer_class(self, bill: RatingInput) -> str:
        named = bill.facts.get("cust_class")
        if named:
            return str(named)
        found = class_for(self.by_target, category=bill.category, frequency=bill.frequency)
        if found is None:
            mapped = "; ".join(f"{cls} = {targets}" for cls, targets in self.class_map.items()) or "none"
            raise RatingError(f"the rate schedule ({self.citation}) has no customer class for category "
                              f"'{bill.category}' billed {bill.frequency} (class map: {mapped}); map one, or name "
                              "the account's class in its rate fields (cust_class)")
        return found

    def rate(self, bill: RatingInput) -> Rated:
        if bill.gallons < 0:
            raise RatingError("consumption cannot be negative")
        if bill.pro_rata is not None:
            raise RatingError(f"the rate schedule ({self.citation}) is an OWRS file, which states no rule for part "
                              f"of a billing period ({bill.pro_rata.words}); bill the account on its regular bill "
                              "date instead")
        if bill.sprinkler_supply_inches and bill.first_bill_of_year and not self.extra.sprinkler:
            raise RatingError(f'the rate schedule ({self.citation}) sets no sprinkler service charge, and the account '
                              f'has a {bill.sprinkler_supply_inches}" sprinkler supply; add a waterbilling.sprinkler '
                              "table to the schedule's file, or clear the account's sprinkler supply")
        rated = nonprofit_month(self.extra, bill) or self._rate_class(bill)
        rated = with_sprinkler(self.extra, bill, rated)
        refuse_beyond_columns(rated, gallons=bill.gallons)
        return rated

    def _rate_class(self, bill: RatingInput) -> Rated:
        cls = self.customer_class(bill)
        facts = {**bill.facts, "usage_gal": bill.gallons, "meter_size": bill.meter_size,
                 "bill_frequency": bill.frequency, "cust_class": cls, "year_usage_gal": bill.year_to_date_gallons,
                 "annual_minimum_charged": int(bill.annual_minimum_charged),
                 "first_bill_of_year": int(bill.first_bill_of_year)}
        try:
            charges = owrs.bill(self.file, cls, facts)
        except owrs.OwrsError as exc:
            raise RatingError(str(exc)) from exc
        cited = self.class_citations.get(cls) or {}
        lines = tuple(Line(_kind(charge), charge.description,
                           cited.get(charge.part) or self.file.citation_for(charge.part) or self.citation,
                           charge.quantity, charge.rate, charge.amount) for charge in charges)
        return Rated(lines, bill.gallons, True)

    def year_so_far(self, earlier_in_year: Iterable[EarlierBill], *, frequency: str) -> tuple[bool, int]:
        same = [bill for bill in earlier_in_year if bill.frequency == frequency]
        return any(bill.includes_annual_minimum for bill in same), sum(bill.schedule_gallons for bill in same)
