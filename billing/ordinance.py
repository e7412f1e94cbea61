"""The ordinance interface: what generic billing code may ask of the installed preset.

A preset file names a strategy for each part of its ordinance — a billing calendar, a rate structure, a
penalty scheme, fee rules — and gives its parameters. The strategies are small classes, each registered
under its name in one of the registries below; generic code (billing runs, penalties, statements, the
portal) never names a strategy class and never knows which village it bills. It builds an ``Ordinance`` for a date
and asks it: which books and meters are due, each account's read window and due date, how a bill is
rated, when a late charge falls due, what a payment pays first. A new village adds strategies (or only
parameters) and a preset file; nothing generic changes.

The protocols say what each kind of strategy answers. The rule modules (``calendars``, ``rating``,
``penalties``, ``fees``) hold the classes, without the ORM; this module holds the registries and the
one builder that reads the installed preset and the rate schedule in force.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from functools import cached_property
from typing import ClassVar, Protocol, runtime_checkable

from core.errors import ApplicationError
from ordinance.models import Utility
from ordinance.selectors import districts, section, section_params, section_versions, utility_required

# Importing the rule modules registers their strategy classes.
from . import fees  # noqa: F401
from .calendars import Cycle
from .ledger.selectors import payment_order
from .models import PaymentOrder, RateSchedule
from .owrs import structure as owrs_structure  # noqa: F401
from .penalties.rules import PenaltyDue
from .rating import EarlierBill, Rated, RatingInput
from .registries import CALENDARS, FEE_RULES, PENALTY_SCHEMES, RATE_STRUCTURES, Registry
from .sewer import SewerRents

__all__ = ["CALENDARS", "FEE_RULES", "PENALTY_SCHEMES", "RATE_STRUCTURES", "BillingCalendar", "FeeRule", "Ordinance",
           "PenaltyScheme", "RateStructure", "Registry", "ordinance_on", "payment_order", "rate_structure_for",
           "sample_rates_refusal", "schedule_in_force", "waiver_approval_above"]


@runtime_checkable
class BillingCalendar(Protocol):
    """Who is billed when, and for which reading (``[calendar]`` in a preset file).

    A calendar bills *books* on their dates, and meters of some frequencies on dates of their own whatever
    their book (Mineola bills meters over 1" every month). Candidates on a date are the accounts of
    ``due_books(on)`` and the accounts whose meter size has a frequency in ``due_frequencies(on)``;
    ``is_due`` then decides each account by its book and the frequency of its meter.
    """

    name: ClassVar[str]

    def frequency_for(self, meter_size: str) -> str:
        """The calendar frequency of a meter of this size ("semiannual", "monthly", "quarterly", …)."""

    def due_books(self, on: date) -> list[int]:
        """The books billed on ``on`` by their book's dates."""

    def due_frequencies(self, on: date) -> set[str]:
        """The frequencies billed on ``on`` whatever the account's book."""

    def is_due(self, *, book: int, frequency: str, on: date) -> bool:
        """Is an account of this book whose meter is billed at this frequency billed on ``on``?"""

    def cycle(self, *, book: int, frequency: str, bill_date: date) -> "Cycle":
        """The bill dated ``bill_date``: its read window, due date and billable year."""

    def due_date(self, issued_on: date) -> date:
        """When a bill issued on ``issued_on`` is due (a replacement bill is due from its own issue)."""

    def billable_year_start(self, *, book: int, on: date) -> date:
        """The first day of the billable year ``on`` falls in."""


@runtime_checkable
class RateStructure(Protocol):
    """How one bill is rated under one effective-dated rate schedule (``[[rate_schedule]]``, its
    ``structure``); built from the schedule's stored ``rules``."""

    name: ClassVar[str]

    def rate(self, bill: "RatingInput") -> "Rated":
        """The bill's lines, each with its citation, rounded once; raises ``RatingError`` naming the section."""

    def year_so_far(self, earlier_in_year: Iterable["EarlierBill"], *, frequency: str) -> tuple[bool, int]:
        """What earlier bills of the billable year count for a bill of this ``frequency``: (annual minimum
        already charged, gallons already counted against the year's allowance)."""


@runtime_checkable
class PenaltyScheme(Protocol):
    """When a late charge falls due on a bill and how much it is (``[penalty]`` in a preset file)."""

    name: ClassVar[str]
    late_charges_label: ClassVar[str]  # the bill's row: "Penalties", "Interest and penalties"
    citation: str
    words: str  # the rule as printed on the bill
    # The principal categories of a bill (water, fee, fine) the late charge is computed on, as the section reads
    # (``[penalty] charges_on``): Lansing § 141-17 charges the delinquent water rent only.
    charges_on: tuple[str, ...]

    def dates(self, *, bill_date: date, due_date: date, through: date) -> list["PenaltyDue"]:
        """The days a charge is assessed on a bill, up to ``through``; each due names its ledger kind
        (``penalty`` or ``interest``)."""

    def amount(self, due: "PenaltyDue", *, unpaid_principal: Decimal, unpaid_total: Decimal) -> Decimal:
        """The charge on one of those days, given what the bill then owes: ``unpaid_principal`` is its unpaid
        ``charges_on`` (and, for a due marked ``with_interest``, its unpaid interest as ``unpaid_interest``)."""

    # The shortcuts the replay asks for (``billing.fast_paths``), each giving what the two above give: a test
    # holds every registered scheme to that (tests/billing/test_penalty_shortcuts.py).

    def dates_in_order(self, *, bill_date: date, due_date: date, through: date) -> tuple["PenaltyDue", ...]:
        """``dates`` in order of day (then as given), worked out once where many bills share them."""

    def amount_of_unpaid(self, due: "PenaltyDue", unpaid: dict[str, Decimal]) -> Decimal:
        """``amount`` from the bill's unpaid amounts by category (``BillBalance.unpaid``)."""

    def owes_no_more_late_charges(self, unpaid: dict[str, Decimal]) -> bool:
        """Whether a bill with these unpaid amounts draws no late charge again as long as it is charged no more
        principal (amounts only ever go down then): its later days are passed over."""



@runtime_checkable
class FeeRule(Protocol):
    """How one fee of the fee schedule is quoted (``[[fee]]`` in a preset file)."""

    name: ClassVar[str]
    code: str
    citation: str
    description: str

    def quote(self, *, amount: Decimal | None, base: Decimal | None, size: str | None) -> Decimal:
        """The fee, half-up to the cent; raises ``ApplicationError`` naming the section when the facts given
        do not allow a quote (a missing base, a size the schedule does not list)."""



# What a [[rate_schedule]] that names no ``structure`` is rated by.
DEFAULT_RATE_STRUCTURE = "minimum_and_blocks"


def rate_structure_for(rules: dict) -> RateStructure:
    """The rate structure of one stored schedule (``RateSchedule.rules``)."""
    return RATE_STRUCTURES.build(rules.get("structure", DEFAULT_RATE_STRUCTURE), rules)


@dataclass(frozen=True)
class Ordinance:
    """The installed preset as it stands on a date: the utility, its strategies, and the rate schedule
    in force. The schedule is looked up when first asked for (pages that show only the utility's name
    or its penalty words never need it) and refused then if none is in force."""

    on: date
    utility: Utility
    calendar: BillingCalendar
    penalties: PenaltyScheme
    payment_order: str
    district: str = ""  # the district whose rules these are ("": the installation's, every village's)

    @property
    def payment_order_words(self) -> str:
        """What a payment pays first, in words (``[policy] payment_order``, office policy)."""
        return str(PaymentOrder(self.payment_order).label)

    @property
    def waiver_approval_above(self) -> Decimal:
        """A penalty or interest charge above this many dollars is waived only with a supervisor's approval;
        at or below it a clerk's waiver takes effect at once (``[penalty] waiver_approval_above``, office
        policy, not the ordinance's)."""
        return waiver_approval_above(section_params("penalty", self.on, installed=self.utility,
                                                    district=self.district))

    @property
    def high_usage_factor(self) -> Decimal:
        """A run holds a bill whose use per day is over this many times the account's usual (``[policy]
        high_usage_factor``, office policy; the clerk may change it on the Utility page)."""
        return self.utility.high_usage_factor

    @cached_property
    def sewer(self) -> SewerRents:
        """The sewer rents in force in the district (none: the bill carries no sewer rent)."""
        return section("sewer", self.on, installed=self.utility, district=self.district)

    @property
    def district_name(self) -> str:
        """The district's name as the bill prints it ("" for the installation's rules)."""
        found = districts(installed=self.utility).get(self.district)
        return found.name if found else ""

    @cached_property
    def rate_schedule(self) -> RateSchedule:
        """The rate schedule row in force on ``on`` in the district."""
        return _schedule_row(self.on, self.district)

    @cached_property
    def rates(self) -> RateStructure:
        """The rate structure of the schedule in force, built from its rules."""
        return rate_structure_for(self.rate_schedule.rules)


# What a preset installed before ``[penalty] waiver_approval_above`` existed waives at once (office policy).
DEFAULT_WAIVER_APPROVAL_ABOVE = Decimal("25.00")


def waiver_approval_above(penalty: dict) -> Decimal:
    """The ``[penalty] waiver_approval_above`` of a preset's penalty table, in dollars; refused unless it is
    an amount of at least zero."""
    value = penalty.get("waiver_approval_above", DEFAULT_WAIVER_APPROVAL_ABOVE)
    try:
        amount = Decimal(str(value))
    except ArithmeticError:
        amount = None
    if amount is None or not amount.is_finite() or amount < 0:
        raise ApplicationError(f"[penalty] waiver_approval_above '{value}' is not an amount of dollars of at least "
                               "0.00", field="waiver_approval_above")
    return amount


def ordinance_on(on: date, district: str = "") -> Ordinance:
    """The installed preset's ordinance on ``on`` in ``district`` (its own tables where it has them, else the
    installation's; blank: the installation's): each table as in force that day (a late charge on each of its days
    by the penalty rule in force on that day); refused when no preset is installed."""
    utility = utility_required()
    return Ordinance(on=on, utility=utility, calendar=section("calendar", on, installed=utility, district=district),
                     penalties=penalties_through(on, installed=utility, district=district),
                     payment_order=section("policy", on, installed=utility).payment_order, district=district)


@dataclass(frozen=True)
class BillingDays:
    """Which days anyone is billed, over the installation's calendar and each district's own: a town's districts
    bill on dates of their own, and the start page, the dashboard and the nightly job propose every one. Only
    ``due_books`` and ``due_frequencies`` (unions); an account's own calendar is its district's."""

    calendars: tuple[BillingCalendar, ...]

    def due_books(self, on: date) -> list[int]:
        return sorted({book for calendar in self.calendars for book in calendar.due_books(on)})

    def due_frequencies(self, on: date) -> set[str]:
        return {frequency for calendar in self.calendars for frequency in calendar.due_frequencies(on)}


def billing_days_on(on: date) -> BillingDays:
    """The calendars in force on ``on``: the installation's, and each district's own where it has one."""
    utility = utility_required()
    found = {id(c): c for c in (section("calendar", on, installed=utility, district=code)
                                for code in ("", *districts(installed=utility)))}
    return BillingDays(tuple(found.values()))


def penalties_through(on: date, *, installed: Utility, district: str = "") -> PenaltyScheme:
    """The penalty rule of each day up to ``on``: the one version in force, or, across an amendment, each version
    on its own days (``DatedPenalties``)."""
    versions = [effective_on for effective_on, _ in reversed(section_versions("penalty", installed=installed,
                                                                              district=district))
                if effective_on <= on]
    if len(versions) <= 1:
        return section("penalty", on, installed=installed, district=district)
    return DatedPenalties(tuple((effective_on, section("penalty", effective_on, installed=installed,
                                                       district=district))
                                for effective_on in versions))


@dataclass(frozen=True)
class DatedPenalties:
    """Penalty rules across an amendment: a late-charge day falls under the version in force on that day, and is
    charged by it. What the bill prints (its words, label and citation) is the latest version's."""

    versions: tuple[tuple[date, PenaltyScheme], ...]  # from the earliest; the first in force from the beginning

    def __getattr__(self, name):
        if name == "versions":
            raise AttributeError(name)
        return getattr(self.versions[-1][1], name)

    def _on(self, day: date) -> PenaltyScheme:
        scheme = self.versions[0][1]
        for effective_on, version in self.versions:
            if effective_on <= day:
                scheme = version
        return scheme

    def _spans(self, through: date):
        for index, (start, scheme) in enumerate(self.versions):
            end = self.versions[index + 1][0] - timedelta(days=1) if index + 1 < len(self.versions) else through
            last = min(through, end)
            if index == 0 or last >= start:
                yield start if index else date.min, last, scheme

    def dates(self, *, bill_date: date, due_date: date, through: date) -> list[PenaltyDue]:
        return [due for start, last, scheme in self._spans(through)
                for due in scheme.dates(bill_date=bill_date, due_date=due_date, through=last) if due.on >= start]

    def dates_in_order(self, *, bill_date: date, due_date: date, through: date) -> tuple[PenaltyDue, ...]:
        return tuple(due for start, last, scheme in self._spans(through)
                     for due in scheme.dates_in_order(bill_date=bill_date, due_date=due_date, through=last)
                     if due.on >= start)

    def amount(self, due: PenaltyDue, *, unpaid_principal: Decimal, unpaid_total: Decimal) -> Decimal:
        return self._on(due.on).amount(due, unpaid_principal=unpaid_principal, unpaid_total=unpaid_total)

    def amount_of_unpaid(self, due: PenaltyDue, unpaid: dict[str, Decimal]) -> Decimal:
        return self._on(due.on).amount_of_unpaid(due, unpaid)

    def owes_no_more_late_charges(self, unpaid: dict[str, Decimal]) -> bool:
        return all(scheme.owes_no_more_late_charges(unpaid) for _, scheme in self.versions)


def schedule_in_force(on: date, district: str = "") -> tuple[RateSchedule, RateStructure]:
    """The rate schedule in force on a bill date in ``district`` and its rate structure; refused when none is in
    force."""
    row = _schedule_row(on, district)
    return row, rate_structure_for(row.rules)


def district_schedules(district: str = ""):
    """The rate schedules that apply in ``district``: its own where it has any, else the installation's."""
    rows = RateSchedule.objects.filter(district=district)
    if district and not rows.exists():
        rows = RateSchedule.objects.filter(district="")
    return rows


def _schedule_row(on: date, district: str = "") -> RateSchedule:
    """The latest rate schedule effective on or before ``on``: the district's own where it has any, else the
    installation's."""
    rows = district_schedules(district)
    row = rows.filter(effective_on__lte=on).order_by("-effective_on").first()
    if row is None:
        earliest = rows.order_by("effective_on").values_list("effective_on", flat=True).first()
        whose = f" in district {district}" if district else ""
        raise ApplicationError(f"no rate schedule is in force{whose} on {on}; the earliest takes effect {earliest}",
                               field="date")
    return row


def sample_rates_refusal(*, on: date, accept_sample_rates: bool) -> str:
    """Why billing on ``on`` is refused because rates in force (the installation's or a district's) are a preset's
    sample values, or "".

    A preset ships a **sample** schedule where the ordinance's own schedule is not in the published text
    (docs/ordinances.md: "Sample rates are not for real bills"). Billing on it is allowed on a demo/training site,
    or when the clerk accepts it for one run (recorded on the run); otherwise it is refused.
    """
    utility = ordinance_on(on).utility
    if accept_sample_rates or utility.is_demo_site:
        return ""
    town = districts(installed=utility)
    for district in ("", *town):
        if district == "" and town and not RateSchedule.objects.filter(district="").exists():
            continue  # a town whose every district has its own rates
        row = _schedule_row(on, district)
        if row.is_sample:
            whose = f" of {town[district].name}" if district else ""
            return (f"the rate schedule{whose} in force on {on} (effective {row.effective_on}, {row.citation}) is the "
                    "preset's sample schedule, a placeholder for rates the published ordinance does not contain, and "
                    "sample rates are not for real bills; install the adopted rates (a [[rate_schedule]] without "
                    f"`sample = true` in the preset file, then setup_utility {utility.preset}), mark this a "
                    f"demo/training site (setup_utility {utility.preset} --demo N), or accept the sample rates for "
                    "this run (run_billing --accept-sample-rates, “Accept sample rates” on the admin's start page, or "
                    "accept_sample_rates in the API), which is recorded on the run")
    return ""
