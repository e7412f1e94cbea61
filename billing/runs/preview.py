"""Before a run: which bill date to run next, and the proof register of what a run on a date would issue.

Design overview:

* **The calendar proposes the dates.** ``next_billing_dates`` walks the installed preset's calendar (a town's:
  every district's, ``billing_days_on``) day by day (pure code, no database) and keeps the days on which a book
  is due or a frequency is billed whatever the book (Mineola § 45.29 A–C: books on their two months, meters over
  1" on every 1st; a quarterly preset: its four months). Each date counts the accounts due on it
  (``billing_candidates``) and those still unbilled.
* **The proof is the run's own rating.** ``billing_run_proof`` rates every account due chunk by chunk with
  ``bills_plan`` — the very code a run issues with — so the register it shows is what
  issuing then writes: the same bills, lines, exceptions and holds, only not written.
* **Money is added up here, with Decimal.** The register of an issued run (``billing_run_register``) reads
  the bills and lines back and adds them in Python, never with a database SUM (SQLite sums in floating
  point); a proof and the run issued from it have the same totals to the cent.
"""

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from accounts.models import Account
from core.errors import ApplicationError
from core.money import ZERO
from ordinance.selectors import districts

from ..models import Bill, BillingException, BillingRun, BillLine
from ..ordinance import BillingDays, billing_days_on, sample_rates_refusal, schedule_in_force
from .candidates import billing_candidates
from .issue import bills_plan

# A preview may look this far ahead (the next bill date, while the readings come in); issuing never does.
PREVIEW_DAYS_AHEAD = 45
# A calendar with no billing date in this many days has none worth proposing.
SCAN_DAYS = 400
CHUNK_SIZE = 1000


# --- bill dates -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BillingDate:
    """A day the calendar bills: the books due, the frequencies billed whatever the book, and the accounts."""

    on: date
    books: tuple[int, ...]
    frequencies: tuple[str, ...]
    accounts_due: int
    unbilled: int

    @property
    def what(self) -> str:
        """The books and meters due, in words: "Books 1, 2 and monthly meters"."""
        parts = []
        if self.books:
            parts.append(("Book " if len(self.books) == 1 else "Books ") + ", ".join(map(str, self.books)))
        if self.frequencies:
            words = " and ".join(self.frequencies)
            parts.append(f"{words} meters" if self.books else f"{words[0].upper()}{words[1:]} meters")
        return " and ".join(parts)


def _billing_days(calendar: BillingDays, *, start: date, step: int) -> Iterator[date]:
    """The days from ``start`` (included) going forward (step 1) or back (step -1) on which the calendar
    bills a book or a frequency, within ``SCAN_DAYS``."""
    day = start
    for _ in range(SCAN_DAYS):
        if calendar.due_books(day) or calendar.due_frequencies(day):
            yield day
        day += timedelta(days=step)


def _billing_date(calendar: BillingDays, on: date) -> BillingDate:
    ids = billing_candidates(run_on=on)
    billed = set(Bill.objects.filter(bill_date=on).exclude(status=Bill.Status.VOID)
                 .values_list("account_id", flat=True).order_by())
    return BillingDate(on=on, books=tuple(calendar.due_books(on)),
                       frequencies=tuple(sorted(calendar.due_frequencies(on))), accounts_due=len(ids),
                       unbilled=sum(1 for i in ids if i not in billed))


def next_billing_dates(*, after: date, count: int = 3) -> list[BillingDate]:
    """The next ``count`` days after ``after`` on which the installed preset's calendar bills any book or
    meter, each with the books due and the number of accounts due."""
    calendar = billing_days_on(after)
    days = _billing_days(calendar, start=after + timedelta(days=1), step=1)
    return [_billing_date(calendar, day) for day, _ in zip(days, range(count), strict=False)]


def last_billing_date(*, on_or_before: date) -> BillingDate | None:
    """The latest day on or before ``on_or_before`` on which the calendar bills, with its accounts."""
    calendar = billing_days_on(on_or_before)
    day = next(_billing_days(calendar, start=on_or_before, step=-1), None)
    return _billing_date(calendar, day) if day else None


@dataclass(frozen=True)
class Proposals:
    """What the start form proposes: the date to fill in, the latest billing date and the next ones."""

    initial: date | None
    latest: BillingDate | None
    upcoming: list[BillingDate]

    @property
    def dates(self) -> list[BillingDate]:
        return ([self.latest] if self.latest else []) + self.upcoming


def billing_date_proposals(*, today: date, count: int = 3) -> Proposals:
    """The latest billing date on or before today and the next ``count``. The date proposed is one a run can
    bill: the latest while accounts due on it are not yet billed (a run not started, or not finished); none when
    every account due is billed (the next dates can be previewed, and issued once their day has come)."""
    latest = last_billing_date(on_or_before=today)
    upcoming = next_billing_dates(after=today, count=count)
    initial = latest.on if latest and latest.unbilled else None
    return Proposals(initial=initial, latest=latest, upcoming=upcoming)


def refuse_beyond_preview(run_on: date, *, today: date) -> None:
    """A preview looks at most ``PREVIEW_DAYS_AHEAD`` days ahead (a later date is a mistyped year)."""
    if run_on > today + timedelta(days=PREVIEW_DAYS_AHEAD):
        raise ApplicationError(f"{run_on} is more than {PREVIEW_DAYS_AHEAD} days after today ({today}); a run is "
                               "previewed at most that far ahead (check the year)", field="run_on")


# --- registers ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BookTotal:
    book: int
    bills: int
    gallons: int
    total: Decimal


@dataclass(frozen=True)
class LineTotal:
    kind: str
    citation: str
    count: int
    amount: Decimal

    @property
    def kind_label(self) -> str:
        return BillLine.Kind(self.kind).label if self.kind in BillLine.Kind.values else self.kind


@dataclass(frozen=True)
class DistrictTotal:
    district: str  # its name as the bill prints it
    bills: int
    gallons: int
    total: Decimal


@dataclass(frozen=True)
class Register:
    """Bills by book (and, in a town, by district), lines by kind and citation, and the totals (all Decimal, added
    in Python)."""

    books: list[BookTotal]
    lines: list[LineTotal]
    bills: int
    gallons: int
    total: Decimal
    districts: list[DistrictTotal] = field(default_factory=list)  # empty where the installation names none


class _RegisterSum:
    def __init__(self):
        self.books: dict[int, list] = defaultdict(lambda: [0, 0, ZERO])
        self.districts: dict[str, list] = defaultdict(lambda: [0, 0, ZERO])
        self.lines: dict[tuple[str, str], list] = defaultdict(lambda: [0, ZERO])

    def bill(self, *, book: int, gallons: int, total: Decimal, district: str | None = None) -> None:
        for row in (self.books[book], self.districts[district or ""]):
            row[0] += 1
            row[1] += gallons
            row[2] += total

    def line(self, *, kind: str, citation: str, amount: Decimal) -> None:
        row = self.lines[(kind, citation)]
        row[0] += 1
        row[1] += amount

    def register(self) -> Register:
        order = {kind: position for position, kind in enumerate(BillLine.Kind.values)}
        books = [BookTotal(book, bills, gallons, total) for book, (bills, gallons, total) in sorted(self.books.items())]
        lines = [LineTotal(kind, citation, count, amount) for (kind, citation), (count, amount) in
                 sorted(self.lines.items(), key=lambda item: (order.get(item[0][0], 99), item[0]))]
        town = districts()
        by_district = [DistrictTotal(town[code].name if code in town else "In no district", *row)
                       for code, row in sorted(self.districts.items())] if town else []
        return Register(books=books, lines=lines, bills=sum(b.bills for b in books),
                        gallons=sum(b.gallons for b in books), total=sum((b.total for b in books), ZERO),
                        districts=by_district)


def billing_run_register(*, run: BillingRun) -> Register:
    """The live bills a run issued, by book, and their lines by kind and citation, from the stored rows."""
    live = Bill.objects.filter(run=run).exclude(status=Bill.Status.VOID)
    register = _RegisterSum()
    for book, gallons, total, district in live.values_list("account__book", "gallons", "total",
                                                           "district_id").order_by():
        register.bill(book=book, gallons=gallons, total=total, district=district)
    for kind, citation, amount in BillLine.objects.filter(bill__in=live).values_list(
            "kind", "citation", "amount").order_by():
        register.line(kind=kind, citation=citation, amount=amount)
    return register.register()


# --- the proof register ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ProofException:
    """An account a run on the date would not bill: its exception as the run would record it."""

    account_id: int
    account_no: str
    owner: str
    kind: str
    detail: str

    @property
    def kind_label(self) -> str:
        return BillingException.Kind(self.kind).label


@dataclass
class Proof:
    """What a run on ``run_on`` would issue, written nowhere."""

    run_on: date
    register: Register
    accounts_due: int = 0
    already_billed: int = 0
    charges: int = 0
    exceptions: list[ProofException] = field(default_factory=list)  # no reading, lower reading, rating
    holds: list[ProofException] = field(default_factory=list)  # high usage, held for review
    refusal: str = ""  # why issuing would be refused now (sample rates), as the start page says it
    future: bool = False  # the date has not come: previewed, not issued

    @property
    def issuable(self) -> bool:
        return not self.refusal and not self.future


def billing_run_proof(*, run_on: date, today: date, accept_sample_rates: bool = False) -> Proof:
    """Rate every account due on ``run_on`` as a run would, writing nothing: the bills by book, the lines
    by kind and citation, the exceptions and the holds. Refused for a date more than
    ``PREVIEW_DAYS_AHEAD`` days ahead or with no rates in force; a run the sample rates would refuse is
    previewed, with the refusal a run would give."""
    refuse_beyond_preview(run_on, today=today)
    try:
        schedule_in_force(run_on)
    except ApplicationError as exc:
        raise ApplicationError(str(exc), field="run_on") from None
    ids = billing_candidates(run_on=run_on)
    proof = Proof(run_on=run_on, register=Register([], [], 0, 0, ZERO), accounts_due=len(ids),
                  refusal=sample_rates_refusal(on=run_on, accept_sample_rates=accept_sample_rates),
                  future=run_on > today)
    register = _RegisterSum()
    for start in range(0, len(ids), CHUNK_SIZE):
        chunk = ids[start:start + CHUNK_SIZE]
        part = bills_plan(account_ids=chunk, run_on=run_on)
        facts = {row[0]: row[1:] for row in Account.objects.filter(id__in=chunk).values_list(
            "id", "account_no", "book", "owner__name").order_by()}
        for bill, lines in zip(part.new_bills, part.new_lines, strict=True):
            register.bill(book=facts[bill.account_id][1], gallons=bill.gallons, total=bill.total,
                          district=bill.district_id)
            for line in lines:
                register.line(kind=line.kind, citation=line.citation, amount=line.amount)
        for exception in part.new_exceptions:
            account_no, _, owner = facts[exception.account_id]
            shown = ProofException(account_id=exception.account_id, account_no=account_no, owner=owner or "",
                                   kind=exception.kind, detail=exception.detail)
            (proof.holds if exception.kind == BillingException.Kind.HIGH_USAGE else proof.exceptions).append(shown)
        proof.already_billed += part.already_billed
        proof.charges += part.charges
    proof.register = register.register()
    proof.exceptions.sort(key=lambda e: (e.kind, e.account_no))
    proof.holds.sort(key=lambda e: e.account_no)
    return proof
