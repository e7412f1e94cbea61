"""Penalty schemes: when a late charge falls due and how much it is, with no database.

A preset names its scheme (``[penalty]`` in the preset file), a class registered in
``billing.ordinance.PENALTY_SCHEMES`` (the ``PenaltyScheme`` protocol). A scheme
answers ``dates(bill)`` — the days a charge is assessed on a bill, up to a date — and ``amount(...)`` — the
charge on one of those days given the bill's unpaid principal (and, for schemes that compound, its unpaid
total). Each ``PenaltyDue`` names the ledger kind it is posted as: ``penalty`` (the default) or
``interest``; a penalty and an interest charge may fall on one bill and day, as separate entries. A due
with ``with_interest`` is charged on the bill's unpaid interest as well, which the replay then passes to
``amount`` as ``unpaid_interest`` (schemes that never ask for it need not take it).

**What a late charge is charged on** is the section's own words, declared by each preset (``[penalty]
charges_on``): the principal categories of a bill — ``water`` (water rents and charges), ``fee`` (fees, service
charges, debit memos) and ``fine`` — the scheme computes its percentage of. Lansing § 141-17 charges 15% of the
delinquent *water rent* only, Washingtonville § 169-26 its interest on water rents; a fine is never a base unless
the section says so. ``unpaid_principal`` handed to ``amount`` is that base.

``penalties_owed`` turns the facts (charges, payments, credits) into the penalties they make owed: it
replays the ledger day by day and, at the start of each penalty day, charges every bill that is then
unpaid. What is owed therefore depends only on what happened and when — never on when an assessment ran
or when a payment was recorded — and the assessment service only has to post the difference between what
is owed and what is already on the books.
"""

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from heapq import heapify, heappop, heappush

from core.dates import add_months
from core.errors import ApplicationError
from core.money import ZERO, percent_of
from ordinance.keys import Key, Text, Whole, percent

from ..fast_paths import fast_paths_on
from ..ledger.allocation import CATEGORY, PENALTY_KINDS, PRINCIPAL_CATEGORIES, PRINCIPAL_FIRST, Entry, Ledger
from ..registries import PENALTY_SCHEMES

EVERY_DAYS = Key('the charge repeats every this many days after the first ("for each 30 days or portion thereof": '
                 "charged at the start of each period, so a part of one is charged as a whole); the monthly "
                 "anniversary of the first day when not given", Whole(1, 366, unit="days"))


def repeat_days(start: date, through: date, *, every_days: int | None):
    """The days a repeating late charge falls on, from ``start`` (the first) up to ``through``: each monthly
    anniversary of ``start`` (clamped to the month's end), or every ``every_days`` days."""
    k = 0
    while True:
        day = start + timedelta(days=k * every_days) if every_days else add_months(start, k)
        if day > through:
            return
        yield k, day
        k += 1


def _every(value) -> int | None:
    return int(value) if value is not None else None

# A scheme works out a due date's late-charge days up to a last day once and keeps them (the bills of a book
# share their due dates), up to this many pairs of due date and last day.
_DATES_KEPT = 4096


@dataclass(frozen=True)
class PenaltyDue:
    on: date
    percent: Decimal
    description: str
    citation: str
    on_total: bool = False  # charged on the unpaid total including earlier interest/penalties
    kind: str = "penalty"  # the ledger kind it is posted as: "penalty" or "interest"
    with_interest: bool = False  # charged on unpaid principal plus the bill's unpaid interest (not penalties)


def charges_on_from(params: dict, *, required: bool = True) -> tuple[str, ...]:
    """The ``[penalty] charges_on`` of a preset: which principal categories the late charge is computed on,
    refused naming the key unless each is one of ``PRINCIPAL_CATEGORIES``."""
    value = params.get("charges_on")
    if value is None:
        if required:
            raise ApplicationError(
                f"[penalty] charges_on: name the charges the late charge is computed on (any of "
                f"{', '.join(PRINCIPAL_CATEGORIES)}), as {params.get('citation') or 'the section'} reads",
                field="penalty")
        return ()
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ApplicationError("[penalty] charges_on is a list of charge kinds", field="penalty")
    unknown = [v for v in value if v not in PRINCIPAL_CATEGORIES]
    if unknown:
        raise ApplicationError(f"[penalty] charges_on: {', '.join(unknown)} is not a charge a late charge is "
                               f"computed on; use {', '.join(PRINCIPAL_CATEGORIES)}", field="penalty")
    return tuple(dict.fromkeys(value))


class _ChargedOn:
    """The categories of a bill the scheme charges on (``charges_on``) and their unpaid sum (``base``)."""

    _charges_on: tuple[str, ...] = ()
    base = staticmethod(lambda unpaid: ZERO)

    @property
    def charges_on(self) -> tuple[str, ...]:
        return self._charges_on

    @charges_on.setter
    def charges_on(self, categories: tuple[str, ...]) -> None:
        self._charges_on = categories
        self.base = _base_of(categories)


def _base_of(categories: tuple[str, ...]):
    """``base(unpaid)``: what the scheme charges its percentage of, the bill's unpaid ``categories`` added up. The
    usual ones are written out: the replay asks for it on every late-charge day of every bill. ``fee`` and
    ``water`` are in every bill's dicts; ``fine`` joins a bill's with its first fine."""
    if categories == ("water",):
        return lambda unpaid: unpaid["water"]
    if set(categories) == {"water", "fee"}:
        return lambda unpaid: unpaid["fee"] + unpaid["water"]
    return lambda unpaid: sum((unpaid.get(cat, ZERO) for cat in categories), ZERO)


class _DaysByDueDate:
    """For a scheme whose late-charge days follow from the due date alone (``_work_out_dates``): ``dates``
    and ``dates_in_order``, worked out once for a due date and last day (many bills share them), in order
    of day (then kind)."""

    _dates: dict[tuple, tuple]

    def dates(self, *, bill_date: date, due_date: date, through: date) -> list[PenaltyDue]:
        return list(self.dates_in_order(bill_date=bill_date, due_date=due_date, through=through))

    def dates_in_order(self, *, bill_date: date, due_date: date, through: date) -> tuple[PenaltyDue, ...]:
        key = (due_date, through)
        found = self._dates.get(key)
        if found is None:
            if len(self._dates) >= _DATES_KEPT:
                self._dates.clear()
            found = self._dates[key] = tuple(self._work_out_dates(due_date=due_date, through=through))
        return found


@PENALTY_SCHEMES.register
class FirstThenMonthly(_ChargedOn, _DaysByDueDate):
    """Mineola § 45.29 E: 5% of unpaid principal on the day after the due date, then 1% on each monthly
    anniversary of that day ("each month or fraction of a month thereafter"); with ``every_days``, every that many
    days instead ("for each 30 days or portion thereof")."""

    name = "first_then_monthly"
    late_charges_label = "Penalties"
    KEYS = {"first_percent": Key("the first charge, the day after the due date", percent(), required=True),
            "monthly_percent": Key("each later charge", percent(), required=True), "every_days": EVERY_DAYS}

    def __init__(self, params: dict):
        self.first = Decimal(params["first_percent"])
        self.monthly = Decimal(params["monthly_percent"])
        self.every_days = _every(params.get("every_days"))
        self.charges_on = charges_on_from(params)
        self.citation = params["citation"]
        self.description = params.get("description", "Late payment penalty")
        self.words = params.get("words", "")
        self._dates: dict[tuple, tuple] = {}

    def _work_out_dates(self, *, due_date: date, through: date) -> list[PenaltyDue]:
        period = f"{self.every_days}-day period" if self.every_days else "month"
        out = []
        for k, day in repeat_days(due_date + timedelta(days=1), through, every_days=self.every_days):
            percent = self.first if k == 0 else self.monthly
            which = f"first {period}" if k == 0 else f"{period} {k + 1}"
            out.append(PenaltyDue(day, percent, f"{self.description}: {percent}% ({which})", self.citation))
        return out

    def amount(self, due: PenaltyDue, *, unpaid_principal: Decimal, unpaid_total: Decimal) -> Decimal:
        base = unpaid_total if due.on_total else unpaid_principal
        return percent_of(base, due.percent) if base > ZERO else ZERO

    def amount_of_unpaid(self, due: PenaltyDue, unpaid: dict[str, Decimal]) -> Decimal:
        """``amount`` from the bill's unpaid amounts by category (``BillBalance.unpaid``)."""
        base = sum(unpaid.values(), ZERO) if due.on_total else self.base(unpaid)
        return percent_of(base, due.percent) if base > ZERO else ZERO

    def owes_no_more_late_charges(self, unpaid: dict[str, Decimal]) -> bool:
        """Whether a bill with these unpaid amounts can draw no late charge again as long as it is never
        charged principal again: what it is charged on is paid (its days are never ``on_total``)."""
        return self.base(unpaid) <= ZERO


@PENALTY_SCHEMES.register
class OneTime(_ChargedOn):
    """A single penalty of a percentage of the unpaid principal, on one day counted either from the due date
    (``days_after_due``, the default: the day after it) or from the bill date (``days_after_bill_date``).

    Lansing § 141-17: 15% once, the day after the due date. South Farmingdale § 4.2: 10% once on an account
    "delinquent in excess of thirty (30) days", counted from the bill date: on bill date + 31 days, whatever
    due date the calendar gives."""

    name = "one_time"
    late_charges_label = "Penalties"
    KEYS = {"percent": Key("the charge", percent(), required=True),
            "days_after_due": Key("the day of the charge, counted from the due date (1 by default)",
                                  Whole(0, 366, unit="days")),
            "days_after_bill_date": Key("or counted from the bill date", Whole(0, 366, unit="days"))}

    def __init__(self, params: dict):
        self.percent = Decimal(params["percent"])
        self.charges_on = charges_on_from(params)
        if "days_after_due" in params and "days_after_bill_date" in params:
            raise ApplicationError(f"{params['citation']}: the one_time penalty counts its day from the due date "
                                   "(days_after_due) or from the bill date (days_after_bill_date), not both",
                                   field="penalty")
        self.from_bill_date = "days_after_bill_date" in params
        self.days = int(params["days_after_bill_date"] if self.from_bill_date else params.get("days_after_due", 1))
        self.citation = params["citation"]
        self.description = params.get("description", "Late payment penalty")
        self.words = params.get("words", "")

    def dates(self, *, bill_date: date, due_date: date, through: date) -> list[PenaltyDue]:
        day = (bill_date if self.from_bill_date else due_date) + timedelta(days=self.days)
        return [PenaltyDue(day, self.percent, f"{self.description}: {self.percent}%", self.citation)] \
            if day <= through else []

    def dates_in_order(self, *, bill_date: date, due_date: date, through: date) -> tuple[PenaltyDue, ...]:
        return tuple(self.dates(bill_date=bill_date, due_date=due_date, through=through))

    def amount(self, due: PenaltyDue, *, unpaid_principal: Decimal, unpaid_total: Decimal) -> Decimal:
        return percent_of(unpaid_principal, due.percent) if unpaid_principal > ZERO else ZERO

    def amount_of_unpaid(self, due: PenaltyDue, unpaid: dict[str, Decimal]) -> Decimal:
        """``amount`` from the bill's unpaid amounts by category (``BillBalance.unpaid``)."""
        base = self.base(unpaid)
        return percent_of(base, due.percent) if base > ZERO else ZERO

    def owes_no_more_late_charges(self, unpaid: dict[str, Decimal]) -> bool:
        """Whether a bill with these unpaid amounts can draw no late charge again as long as it is never
        charged principal again: what it is charged on is paid."""
        return self.base(unpaid) <= ZERO


@PENALTY_SCHEMES.register
class NoPenalty:
    name = "none"
    late_charges_label = "Penalties"

    def __init__(self, params: dict):
        self.citation = params.get("citation", "")
        self.words = params.get("words", "")
        self.charges_on = charges_on_from(params, required=False)

    def dates(self, *, bill_date: date, due_date: date, through: date) -> list[PenaltyDue]:
        return []

    def dates_in_order(self, *, bill_date: date, due_date: date, through: date) -> tuple[PenaltyDue, ...]:
        return ()

    def amount(self, due: PenaltyDue, *, unpaid_principal: Decimal, unpaid_total: Decimal) -> Decimal:
        return ZERO

    def amount_of_unpaid(self, due: PenaltyDue, unpaid: dict[str, Decimal]) -> Decimal:
        return ZERO

    def owes_no_more_late_charges(self, unpaid: dict[str, Decimal]) -> bool:
        return True


@PENALTY_SCHEMES.register
class MonthlyInterestFebruaryPenalty(_ChargedOn, _DaysByDueDate):
    """Washingtonville § 169-26: interest of 2% a month on water rents unpaid after the 30 days, and a
    penalty of 5% "of the total amount due, including accumulated interest", every February 1.

    Interpretations (docs/ordinances.md, Washingtonville):

    * Interest (kind ``interest``) falls on the day after the due date — bill date + 31 days, the due date
      being bill date + 30 — and on each monthly anniversary of that day (clamped to month end), 2% of the
      bill's unpaid principal ("per month or portion thereof"). It never compounds: interest is not charged
      on interest or penalties.
    * The February penalty (kind ``penalty``) falls on every February 1 after the bill's due date, 5% of
      the bill's unpaid principal plus its accumulated interest still unpaid at the start of that day — not
      of earlier February penalties, and not of an interest charge falling on that same February 1 (charges
      of one day are computed from the account as it stood at the start of the day, independently).
    * "Accumulated interest" unpaid on February 1 follows the payment order (office policy): a payment
      pays every bill's principal first, oldest bill first, then each bill's interest before its penalties,
      oldest bill first. So interest counts as unpaid on February 1 only if what was paid before that day
      did not cover all principal and then the interest of this and older bills.
    """

    name = "monthly_interest_february_penalty"
    late_charges_label = "Interest and penalties"
    KEYS = {"interest_percent": Key("the interest of each month (or each every_days)", percent(), required=True),
            "interest_citation": Key("the section on interest", Text()),
            "interest_description": Key("the interest's name on the bill", Text()),
            "interest_days_after_due": Key("the first interest day, counted from the due date (1 by default)",
                                           Whole(0, 366, unit="days")),
            "every_days": EVERY_DAYS,
            "penalty_percent": Key("the yearly penalty on unpaid rents and interest", percent(), required=True),
            "penalty_month": Key("the month of the yearly penalty", Whole(1, 12, unit="a month"), required=True),
            "penalty_day": Key("its day of the month", Whole(1, 28, unit="a day", why="a day every month has"),
                               required=True),
            "penalty_citation": Key("the section on the penalty", Text()),
            "penalty_description": Key("the penalty's name on the bill", Text())}

    def __init__(self, params: dict):
        self.citation = params["citation"]
        self.charges_on = charges_on_from(params)
        self.interest = Decimal(params["interest_percent"])
        self.interest_citation = params.get("interest_citation", self.citation)
        self.interest_description = params.get("interest_description", "Interest")
        self.days_after_due = int(params.get("interest_days_after_due", 1))
        self.every_days = _every(params.get("every_days"))
        self.penalty = Decimal(params["penalty_percent"])
        self.penalty_month, self.penalty_day = int(params["penalty_month"]), int(params["penalty_day"])
        self.penalty_citation = params.get("penalty_citation", self.citation)
        self.penalty_description = params.get("penalty_description", "Penalty")
        self.words = params.get("words", "")
        self._dates: dict[tuple, tuple] = {}

    def _work_out_dates(self, *, due_date: date, through: date) -> list[PenaltyDue]:
        period = f"{self.every_days}-day period" if self.every_days else "month"
        out = [PenaltyDue(day, self.interest, f"{self.interest_description}: {self.interest}% ({period} {k + 1})",
                          self.interest_citation, kind="interest")
               for k, day in repeat_days(due_date + timedelta(days=self.days_after_due), through,
                                         every_days=self.every_days)]
        for year in range(due_date.year, through.year + 1):
            day = date(year, self.penalty_month, self.penalty_day)
            if due_date < day <= through:
                out.append(PenaltyDue(day, self.penalty,
                                      f"{self.penalty_description}: {self.penalty}% of unpaid rents and interest",
                                      self.penalty_citation, with_interest=True))
        return sorted(out, key=lambda due: (due.on, due.kind))

    def amount(self, due: PenaltyDue, *, unpaid_principal: Decimal, unpaid_total: Decimal,
               unpaid_interest: Decimal = ZERO) -> Decimal:
        base = unpaid_principal + unpaid_interest if due.with_interest else unpaid_principal
        return percent_of(base, due.percent) if base > ZERO else ZERO

    def amount_of_unpaid(self, due: PenaltyDue, unpaid: dict[str, Decimal]) -> Decimal:
        """``amount`` from the bill's unpaid amounts by category (``BillBalance.unpaid``)."""
        base = self.base(unpaid)
        if due.with_interest:
            base = base + unpaid.get("interest", ZERO)
        return percent_of(base, due.percent) if base > ZERO else ZERO

    def owes_no_more_late_charges(self, unpaid: dict[str, Decimal]) -> bool:
        """Whether a bill with these unpaid amounts can draw no late charge again as long as it is never
        charged principal again: its principal is paid, so no interest falls on it, and so is the interest a
        February penalty would be charged on."""
        principal = self.base(unpaid)
        return principal <= ZERO and principal + unpaid.get("interest", ZERO) <= ZERO


@dataclass(frozen=True)
class BillTerms:
    """What the penalty replay needs of a live bill."""

    key: tuple  # (bill_date, bill_id), as on ledger entries
    bill_date: date
    due_date: date
    # A bill converted from the village's previous system: its cutover date. That system's late charges before
    # it stand as charged (``converted_penalty``, ``converted_interest``); ours fall on it and after.
    charges_from: date | None = None


@dataclass(frozen=True)
class OwedPenalty:
    bill_key: tuple
    due: PenaltyDue
    amount: Decimal


def late_charge(scheme, due, unpaid: dict, *, amount_of_unpaid=None) -> Decimal:
    """The charge of ``due`` on a bill whose unpaid amounts by category are ``unpaid``, as the scheme computes
    it: ``amount_of_unpaid`` (the scheme's, when it has one) from the amounts themselves, else ``amount``
    from the bill's unpaid principal and total (and interest, for a due marked ``with_interest``)."""
    if amount_of_unpaid is not None:
        return amount_of_unpaid(due, unpaid)
    principal = sum((unpaid.get(cat, ZERO) for cat in scheme.charges_on), ZERO)
    total = sum(unpaid.values(), ZERO)
    if due.with_interest:
        return scheme.amount(due, unpaid_principal=principal, unpaid_total=total,
                             unpaid_interest=unpaid.get("interest", ZERO))
    return scheme.amount(due, unpaid_principal=principal, unpaid_total=total)


def penalties_owed(*, entries: Iterable[Entry], bills: Iterable[BillTerms], scheme, through: date,
                   order: str = PRINCIPAL_FIRST, waived: Collection[tuple] = ()) -> list[OwedPenalty]:
    """Every penalty the facts make owed on or before ``through``.

    ``entries`` are the account's ledger entries; late charges (penalties, interest) and their corrections
    among them are ignored (the replay makes its own), so the answer is the same whatever was posted
    before. Late charges falling on one day are computed from the account as it stood at the start of that
    day and are independent of each other; they are charges of that day for everything after.

    ``waived`` holds the late charges waived with a supervisor's or the office's approval, as (bill id, day,
    kind): each is owed as nothing — left out of the answer and out of the replay, so no payment pays it and
    no later charge counts it; the principal it was computed on is unchanged, so later charges are too.

    The answer lists the charges by day, then bill, then kind. The scheme is asked its shortcuts (``PenaltyScheme``:
    ``dates_in_order``; ``amount_of_unpaid(due, unpaid)``, the same charge from the bill's unpaid amounts by
    category without totals it does not use; ``owes_no_more_late_charges(unpaid)``, a bill whose principal is
    never charged again draws nothing more, so its later days are passed over), unless the fast paths are off
    (``billing.fast_paths``): then its ``dates`` are sorted and its ``amount`` asked of every day.
    """
    # Each bill's late-charge days in order of day. A day's are taken as (bill key, kind, place among all the
    # bills' days as the scheme gives them, due) and sorted, as a sort of them all by day, bill and kind would
    # put them.
    fast = fast_paths_on()
    in_order = scheme.dates_in_order if fast else None
    days_of: list[tuple] = []  # (bill key, its days in order, the bill's place, each day's place or None)
    last = None
    for n, bill in enumerate(bills):
        if in_order is not None:
            dues = in_order(bill_date=bill.bill_date, due_date=bill.due_date, through=through)
            if bill.charges_from is not None:
                dues = tuple(due for due in dues if due.on >= bill.charges_from)
            places = None
        else:
            given = tuple(scheme.dates(bill_date=bill.bill_date, due_date=bill.due_date, through=through))
            if bill.charges_from is not None:
                given = tuple(due for due in given if due.on >= bill.charges_from)
            places = sorted(range(len(given)), key=lambda i, given=given: given[i].on)
            dues = tuple(given[i] for i in places)
        if dues:
            days_of.append((bill.key, dues, n, places))
            if last is None or dues[-1].on > last:
                last = dues[-1].on
    if not days_of:
        return []
    # Only the facts before the last late-charge day can change a charge; in replay order (day, charges
    # before credits, then as recorded; ties as given).
    cutoff = min(last - timedelta(days=1), through)
    facts = [(e.posted_on, e.kind not in CATEGORY, e.entry_id, n, e) for n, e in enumerate(entries)
             if e.posted_on <= cutoff and e.kind not in PENALTY_KINDS]
    facts.sort()
    ledger = Ledger(order)
    post, settle, bills_of = ledger.post, ledger.settle, ledger.bills.get
    charge = ledger.charge
    amount_of_unpaid = scheme.amount_of_unpaid if fast else None
    done_with = scheme.owes_no_more_late_charges if fast else None
    # A bill that owes no more late charges and is charged nothing more among the facts is done with: its later
    # days are passed over (the facts posted all the same, in order, on the next day that counts).
    last_charge: dict[tuple, int] = {}
    if done_with is not None:
        for n, fact in enumerate(facts):
            if not fact[1]:
                last_charge[fact[4].bill_key] = n
    owed: list[OwedPenalty] = []
    position, count = 0, len(facts)
    # The bills by their next late-charge day: (day, which bill, where in its days).
    upcoming = [(dues[0].on, b, 0) for b, (_, dues, _, _) in enumerate(days_of)]
    heapify(upcoming)
    while upcoming:
        day = upcoming[0][0]
        items = []
        going_on = []  # (bill, where in its days) of the bills with days after this one
        while upcoming and upcoming[0][0] == day:
            _, b, i = heappop(upcoming)
            key, dues, n, places = days_of[b]
            end = len(dues)
            while i < end and (due := dues[i]).on == day:
                items.append((key, due.kind, (n, i if places is None else places[i]), due))
                i += 1
            if i < end:
                going_on.append((b, i))
        while position < count and facts[position][0] < day:
            post(facts[position][4])
            position += 1
        settle()
        items.sort()
        found = []
        done: set[tuple] = set()
        for key, kind, _, due in items:
            balance = bills_of(key)
            if balance is None:
                if done_with is not None and last_charge.get(key, -1) < position:
                    done.add(key)
                continue
            if waived and (key[1], day, kind) in waived:
                continue
            if amount_of_unpaid is not None:
                charged = amount_of_unpaid(due, balance.unpaid)
                if charged > ZERO:
                    found.append(OwedPenalty(key, due, charged))
                elif done_with is not None and last_charge.get(key, -1) < position and done_with(balance.unpaid):
                    done.add(key)
                continue
            charged = late_charge(scheme, due, balance.unpaid)
            if charged > ZERO:
                found.append(OwedPenalty(key, due, charged))
        for penalty in found:
            charge(day, penalty.bill_key, penalty.due.kind, penalty.amount)
        owed.extend(found)
        for b, i in going_on:
            key, dues, _, _ = days_of[b]
            if key not in done:
                heappush(upcoming, (dues[i].on, b, i))
    return owed
