"""Sewer rents on the water bill (General Municipal Law art. 14-F, § 453: a sewer rent "may be based upon" the
water consumed, a share of the water rent, a flat charge, or a combination): ``[[sewer]]`` in a preset file, one
table per rent, each with its citation, for the classes it names (every class where it names none), and a
district's own rents where its law differs (``[[district.sewer]]``).

* ``share``: a percentage of the bill's water rent (its water lines, not the fees and fines it carries).
* ``per_1000``: a rate per 1,000 gallons of the water the bill charges for, with an optional minimum per bill and an
  optional **winter cap** (``winter_cap = { months = [1, 2, 3] }``): the gallons charged are at most the account's
  use per day on its latest bill whose period ended in those months (within the year before), times the bill's days,
  half-up to the whole gallon, since water used on lawns and pools in summer never reaches the sewer. An account with
  no such bill yet is charged on its use.
* ``flat``: an amount per bill, or per dwelling unit (``per_unit``).

Each rent is one line of kind ``sewer``, half-up to the cent once; the run posts the bill's sewer lines as one
``sewer`` ledger entry, paid after the water rents of its day (``billing.ledger.allocation``), charged a late charge
where the penalty's ``charges_on`` names ``sewer``, booked in the sewer fund (``[gl] sewer_*``) and relevied with
the water. No ORM here: the run gives the facts (``SewerFacts``).
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from core.money import ZERO, cents
from ordinance.keys import Flag, Key, ListOf, Shape, Text, Whole, amount, percent, rate

from .rating import Line
from .registries import Registry

SEWER_RENTS = Registry("sewer rent", field="sewer")
THOUSAND = Decimal(1000)
CITATION_MAX = 80  # a bill line and a ledger row keep a citation of at most this many characters


@dataclass(frozen=True)
class SewerFacts:
    """What a sewer rent reads of one bill."""

    category: str
    gallons: int
    water_rent: Decimal  # the bill's water lines added up
    period_days: int
    units: int = 1
    # The account's latest winter bill (its gallons and days), when a rent caps at winter use; None: none yet.
    winter: tuple[int, int] | None = None


class _Rent:
    name = ""
    KEYS: dict = {}

    def __init__(self, params: dict):
        self.citation = params["citation"]
        self.description = params.get("description", "Sewer rent")
        self.categories = tuple(params.get("categories", ()))

    def applies_to(self, category: str) -> bool:
        return not self.categories or category in self.categories

    def line(self, facts: SewerFacts) -> Line | None:
        raise NotImplementedError


@SEWER_RENTS.register
class ShareOfWaterRent(_Rent):
    name = "share"
    KEYS = {"percent": Key("the sewer rent as a percentage of the bill's water rent", percent(), required=True)}

    def __init__(self, params: dict):
        super().__init__(params)
        self.percent = Decimal(str(params["percent"]))

    def line(self, facts: SewerFacts) -> Line | None:
        if facts.water_rent <= ZERO:
            return None
        return Line("sewer", f"{self.description}, {self.percent.normalize():f}% of the water rent "
                             f"${facts.water_rent:,.2f}", self.citation, facts.water_rent, self.percent / 100,
                    cents(facts.water_rent * self.percent / 100))


@SEWER_RENTS.register
class PerThousandGallons(_Rent):
    name = "per_1000"
    KEYS = {"per_1000": Key("dollars per 1,000 gallons of water", rate(), required=True),
            "minimum": Key("the least rent of a bill", amount()),
            "winter_cap": Key("charge at most the use per day of the account's latest bill whose period ended in "
                              "these months", Shape({
                                  "months": Key("the months of the winter period (1–12)",
                                                ListOf(Whole(1, 12, unit="a month"), empty=False), required=True),
                                  "citation": Key("the section that caps it", Text())}))}

    def __init__(self, params: dict):
        super().__init__(params)
        self.per_1000 = Decimal(str(params["per_1000"]))
        self.minimum = Decimal(str(params["minimum"])) if "minimum" in params else None
        cap = params.get("winter_cap")
        self.winter_months = tuple(cap["months"]) if cap else ()
        self.winter_citation = (cap or {}).get("citation", "")

    def capped_gallons(self, facts: SewerFacts) -> tuple[int, str]:
        """The gallons charged and, when the winter cap lowers them, why."""
        if not self.winter_months or facts.winter is None:
            return facts.gallons, ""
        winter_gallons, winter_days = facts.winter
        days = max(winter_days, 1)
        cap = (2 * winter_gallons * facts.period_days + days) // (2 * days)  # half-up to the whole gallon
        if cap >= facts.gallons:
            return facts.gallons, ""
        return cap, f"winter use {winter_gallons:,} gal in {winter_days} days, for {facts.period_days} days"

    def line(self, facts: SewerFacts) -> Line | None:
        gallons, capped = self.capped_gallons(facts)
        charge = cents(Decimal(gallons) * self.per_1000 / THOUSAND)
        citation = "; ".join(filter(None, (self.citation, self.winter_citation if capped else "")))
        if len(citation) > CITATION_MAX:
            citation = self.winter_citation or self.citation  # the rule that set the gallons
        words = f"{self.description}, {gallons:,} gal at ${self.per_1000:,.2f} per 1,000 gal"
        if capped:
            words += f" (capped at {capped})"
        if self.minimum is not None and charge < self.minimum:
            return Line("sewer", f"{self.description}, minimum", citation, Decimal(gallons), self.minimum,
                        self.minimum)
        if charge <= ZERO:
            return None
        return Line("sewer", words, citation, Decimal(gallons), self.per_1000, charge)


@SEWER_RENTS.register
class FlatRent(_Rent):
    name = "flat"
    KEYS = {"amount": Key("the rent of each bill", amount(), required=True),
            "per_unit": Key("true where the amount is charged for each dwelling or commercial unit", Flag())}

    def __init__(self, params: dict):
        super().__init__(params)
        self.amount = Decimal(str(params["amount"]))
        self.per_unit = bool(params.get("per_unit", False))

    def line(self, facts: SewerFacts) -> Line | None:
        units = max(facts.units, 1) if self.per_unit else 1
        if self.per_unit:
            return Line("sewer", f"{self.description}, {units} unit{'s' if units != 1 else ''} × ${self.amount:,.2f}",
                        self.citation, Decimal(units), self.amount, cents(self.amount * units))
        return Line("sewer", self.description, self.citation, Decimal(1), self.amount, self.amount)


@dataclass(frozen=True)
class SewerRents:
    """The rents of ``[[sewer]]`` in force (empty: the installation bills no sewer rent)."""

    rents: tuple[_Rent, ...] = ()

    @property
    def winter_months(self) -> tuple[int, ...]:
        return tuple(sorted({m for r in self.rents for m in getattr(r, "winter_months", ())}))

    def lines(self, facts: SewerFacts) -> tuple[Line, ...]:
        return tuple(line for rent in self.rents if rent.applies_to(facts.category)
                     and (line := rent.line(facts)) is not None)


def sewer_rents_from(params: list) -> SewerRents:
    return SewerRents(tuple(SEWER_RENTS.build(rent["scheme"], rent) for rent in params))


def winter_bill(history: list[dict], *, months: tuple[int, ...], before: date) -> tuple[int, int] | None:
    """The latest of these earlier bills (``billing.runs.load.recent_bills``) whose period ended in ``months`` within
    the year before ``before``: (its gallons, its days)."""
    found = None
    for bill in history:
        end = bill["period_end"]
        if end.month in months and (before - end).days <= 366:
            found = (bill["gallons"], max((end - bill["period_start"]).days, 1))
    return found


SEWER_KEYS = {
    "scheme": Key("how the rent is worked out: share, per_1000 or flat", Text(), required=True),
    "citation": Key("the section or local law that sets the rent", Text(blank=False), required=True),
    "description": Key("the line's name on the bill (\"Sewer rent\" by default)", Text()),
    "categories": Key("the classes it is charged to (every class where it names none)",
                      ListOf(Text(("one_two_family", "other", "nonprofit"))))}
