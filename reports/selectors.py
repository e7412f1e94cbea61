"""The clerk's reports as data: each a function of its date (or dates) returning rows and totals.

Design overview:

* **Money is added up here, with Decimal.** SQLite sums decimals in floating point, so no report asks
  the database for a SUM of money: amounts are loaded and added in Python, and a total is the sum of its
  rows to the cent on SQLite and PostgreSQL alike.
* **Balances are the ledger's.** Aging and the relevy list replay each account's ledger entries with
  ``billing.ledger`` (the preset's payment order), the same replay the statement and the portal show, so
  the aging total is the sum of every account's balance and a bill's unpaid amount is what the
  statement says it is.
* **A fixed number of queries.** Accounts are read in chunks of ``CHUNK``, each chunk in the same few
  queries (its ledger entries, its bills' due dates, its accounts' names), never one query per account.
* **Ageing.** Every unpaid amount belongs to a bill, and ages from that bill's due date: its charges and
  the penalties and interest charged on it alike. A charge on no bill (a debit memo not tied to one) is
  due the day it is posted. An account's unapplied credit is shown as a negative current amount, so each
  row adds up to the account's balance.
"""

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Max

from accounts.models import Account
from billing.balances import BillBalance, accounts_that_may_owe, balances, bill_id_of, entry_id_of
from billing.districts import accounts_in_district
from billing.models import Bill, BillLine, Payment
from billing.ordinance import ordinance_on
from billing.penalties.unposted import late_charges_not_posted
from billing.runs.preview import BookTotal, LineTotal  # the same totals as a run's proof register
from billing.sections import LienRule
from billing.selectors import lone_due_dates
from core.csvimport import chunked
from core.db import collector_paused
from core.money import ZERO
from ordinance.selectors import districts, section
from termination.policy import termination_policy
from termination.selectors import delinquencies, list_floor

# Accounts read at a time: a chunk's ids go into one IN (...) list per query.
CHUNK = 2000


@dataclass(frozen=True)
class AccountFacts:
    account_no: str
    book: int
    owner: str
    owner_address: str
    service_address: str
    sbl: str
    status: str


def _account_facts(account_ids) -> dict[int, AccountFacts]:
    rows = Account.objects.filter(id__in=list(account_ids)).values_list(
        "id", "account_no", "book", "owner__name", "owner__mailing_address", "premises__service_address",
        "premises__sbl", "status")
    return {row[0]: AccountFacts(account_no=row[1], book=row[2], owner=row[3], owner_address=_one_line(row[4]),
                                 service_address=row[5], sbl=row[6], status=row[7]) for row in rows}


def _one_line(address: str) -> str:
    return ", ".join(line.strip() for line in address.splitlines() if line.strip())


def _due_on(key: tuple, due_dates: dict[int, date], lone_due: dict[int, date]) -> date:
    """When an unpaid item of the allocation fell due: its bill's due date, or for a charge on no bill its own due
    date (an invoice's) or else the day it was posted."""
    bill_id = bill_id_of(key)
    return due_dates[bill_id] if bill_id is not None else lone_due.get(entry_id_of(key), key[0])


# --- register ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RegisterBill:
    book: int
    account_no: str
    owner: str
    number: str
    gallons: int
    total: Decimal


@dataclass(frozen=True)
class Register:
    bill_date: date
    bills: list[RegisterBill]
    books: list[BookTotal]
    lines: list[LineTotal]
    gallons: int
    total: Decimal


def latest_bill_date(*, on_or_before: date) -> date | None:
    """The latest bill date of a live bill on or before a day."""
    return (Bill.objects.exclude(status=Bill.Status.VOID).filter(bill_date__lte=on_or_before)
            .aggregate(latest=Max("bill_date"))["latest"])


def register(*, bill_date: date, district: str | None = None) -> Register:
    """A bill date's live bills by book and account, the bills' lines by kind and citation, and totals (a town's:
    only ``district``'s bills, when given)."""
    live = Bill.objects.filter(bill_date=bill_date).exclude(status=Bill.Status.VOID)
    if district is not None:
        live = live.filter(district_id=district or None)
    bills = [RegisterBill(book=book, account_no=account_no, owner=recipient or owner, number=number, gallons=gallons,
                          total=total)
             for book, account_no, recipient, owner, number, gallons, total in live.order_by(
                 "account__book", "account__account_no", "number").values_list(
                 "account__book", "account__account_no", "recipient_name", "account__owner__name", "number",
                 "gallons", "total")]
    books: dict[int, list[RegisterBill]] = defaultdict(list)
    for bill in bills:
        books[bill.book].append(bill)
    lines: dict[tuple[str, str], list[Decimal]] = defaultdict(list)
    for kind, citation, amount in BillLine.objects.filter(bill__in=live).values_list("kind", "citation", "amount"):
        lines[(kind, citation)].append(amount)
    kind_order = {kind: position for position, kind in enumerate(BillLine.Kind.values)}
    return Register(
        bill_date=bill_date, bills=bills,
        books=[BookTotal(book=book, bills=len(rows), gallons=sum(b.gallons for b in rows),
                         total=sum((b.total for b in rows), ZERO)) for book, rows in sorted(books.items())],
        lines=[LineTotal(kind=kind, citation=citation, count=len(amounts), amount=sum(amounts, ZERO))
               for (kind, citation), amounts in sorted(lines.items(),
                                                       key=lambda item: (kind_order.get(item[0][0], 99), item[0]))],
        gallons=sum(b.gallons for b in bills), total=sum((b.total for b in bills), ZERO))


# --- aging ------------------------------------------------------------------------------------------------

# (key, label): not yet past due, then days past the due date.
AGING_BUCKETS = (("current", "Current"), ("days_1_30", "1-30 days"), ("days_31_60", "31-60 days"),
                 ("days_61_90", "61-90 days"), ("days_91_120", "91-120 days"), ("over_120", "Over 120 days"))


def aging_bucket(days_past_due: int) -> int:
    """The bucket of an amount ``days_past_due`` days past its due date (0 or less: current)."""
    for index, limit in enumerate((0, 30, 60, 90, 120)):
        if days_past_due <= limit:
            return index
    return 5


@dataclass(frozen=True)
class AgingRow:
    account_no: str
    owner: str
    service_address: str
    book: int
    buckets: tuple[Decimal, ...]
    status: str = ""  # the account's (a filter, not a column)

    @property
    def balance(self) -> Decimal:
        return sum(self.buckets, ZERO)


@dataclass(frozen=True)
class Aging:
    as_of: date
    rows: list[AgingRow]
    totals: tuple[Decimal, ...]

    @property
    def total(self) -> Decimal:
        return sum(self.totals, ZERO)


@collector_paused()  # many small objects, none in a cycle: no collection while they pile up
def aging(*, as_of: date, district: str | None = None) -> Aging:
    """Every account whose balance on ``as_of`` is not zero, its balance split by how long past due (a town's: only
    the accounts whose premises is in ``district`` that day, when given)."""
    rows: list[AgingRow] = []
    for chunk in chunked(_in_district(accounts_that_may_owe(through=as_of), district, on=as_of), CHUNK):
        owing = {account_id: state for account_id, state in balances(chunk, through=as_of).items() if state.balance}
        if not owing:
            continue
        due_dates = dict(Bill.objects.filter(account_id__in=list(owing)).values_list("id", "due_date"))
        lone_due = lone_due_dates(states=owing.values())
        facts = _account_facts(owing)
        for account_id, state in owing.items():
            buckets = [ZERO] * len(AGING_BUCKETS)
            for key, bill in state.bills.items():
                if bill.unpaid_total:
                    buckets[aging_bucket((as_of - _due_on(key, due_dates, lone_due)).days)] += bill.unpaid_total
            buckets[0] -= state.credit
            f = facts[account_id]
            rows.append(AgingRow(account_no=f.account_no, owner=f.owner, service_address=f.service_address,
                                 book=f.book, buckets=tuple(buckets), status=f.status))
    rows.sort(key=lambda row: row.account_no)
    totals = tuple(sum((row.buckets[i] for row in rows), ZERO) for i in range(len(AGING_BUCKETS)))
    return Aging(as_of=as_of, rows=rows, totals=totals)


# --- delinquency ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DelinquencyRow:
    account_no: str
    owner: str
    service_address: str
    bills: str
    delinquent_from: date
    amount: Decimal
    case_number: str
    book: int | None = None  # the account's book and status (filters, not columns)
    status: str = ""


@dataclass(frozen=True)
class DelinquencyList:
    as_of: date
    citation: str
    rows: list[DelinquencyRow]
    total: Decimal
    floor: Decimal = ZERO  # office policy: accounts owing less are not proposed
    below_floor: int = 0  # how many accounts that is
    why_empty: str = ""  # the chapter grants no nonpayment shut-off: why the list is always empty

    @property
    def with_case(self) -> int:
        return sum(1 for row in self.rows if row.case_number)


def delinquency(*, as_of: date, district: str | None = None) -> DelinquencyList:
    """The accounts that qualify for termination for nonpayment on ``as_of`` under the preset's rule
    (``termination.selectors.delinquencies``), with what each still owes and its open case, if any."""
    policy = termination_policy()
    floor = list_floor()
    if not policy.nonpayment:
        return DelinquencyList(as_of=as_of, citation=policy.cite("grounds"), rows=[], total=ZERO, floor=floor,
                               why_empty=policy.no_nonpayment)
    found = delinquencies(as_of=as_of, policy=policy, floor=ZERO)
    if district is not None:
        inside = set(Account.objects.filter(id__in=accounts_in_district(district, on=as_of)).values_list(
            "account_no", flat=True))
        found = [d for d in found if d.account_no in inside]
    listed = [d for d in found if d.amount >= floor or d.case_number]
    books = {no: (book, status) for no, book, status in Account.objects.filter(
        account_no__in=[d.account_no for d in listed]).values_list("account_no", "book", "status")}
    rows = [DelinquencyRow(account_no=d.account_no, owner=d.owner, service_address=d.service_address,
                           bills=", ".join(b.number for b in d.bills),
                           delinquent_from=min(b.delinquent_from for b in d.bills), amount=d.amount,
                           case_number=d.case_number or "", book=books[d.account_no][0],
                           status=books[d.account_no][1])
            for d in listed]
    return DelinquencyList(as_of=as_of, citation=policy.trigger.citation, rows=rows,
                           total=sum((row.amount for row in rows), ZERO), floor=floor,
                           below_floor=len(found) - len(rows))


# --- relevy -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RelevyRow:
    sbl: str
    owner: str
    owner_address: str
    service_address: str
    account_no: str
    charges: Decimal  # unpaid principal: water charges, fees and fines
    late_charges: Decimal  # unpaid penalties and interest
    book: int | None = None  # the account's book and status (filters, not columns)
    status: str = ""

    @property
    def total(self) -> Decimal:
        return self.charges + self.late_charges


@dataclass(frozen=True)
class Relevy:
    levy_on: date
    lien: LienRule
    rows: list[RelevyRow]
    charges: Decimal
    late_charges: Decimal
    # Penalties and interest the facts make owed through the levy date less those posted: not zero when the
    # assessment has not run through the levy date (the list then lacks them).
    late_charges_not_posted: Decimal
    floor: Decimal = ZERO  # office policy: an account owing less is left off the list
    below_floor: int = 0  # how many accounts that is
    below_floor_amount: Decimal = ZERO  # and what they owe together
    district: object = None  # a town's district whose list this is (``ordinance.District``)

    @property
    def total(self) -> Decimal:
        return self.charges + self.late_charges

    @property
    def without_sbl(self) -> int:
        return sum(1 for row in self.rows if not row.sbl)


def sbl_order(sbl: str) -> tuple:
    """Tax-map order: section, block and lot compared as numbers where they are numbers (9-2-10 after 9-2-9,
    and 9-2-9A between them), an account without an SBL last."""
    parts = re.findall(r"[0-9]+|[A-Za-z]+", sbl)
    return (not parts, [(0, int(part), "") if part.isdigit() else (1, 0, part.upper()) for part in parts])


@collector_paused()  # many small objects, none in a cycle: no collection while they pile up
def relevy(*, levy_on: date, district: str | None = None) -> Relevy:
    """Each account with charges past due and unpaid on the levy date, as the tax roll wants them: by SBL,
    with the owner and the owner's mailing address, the unpaid charges, and the penalties and interest
    through the levy date apart. A town levies each district's rents on its own list (Town Law § 198(3)(d)): with
    ``district``, only the bills that district issued (and the charges on no bill of accounts in it that day),
    under its lien rule."""
    ordinance = ordinance_on(levy_on)
    in_district = accounts_in_district(district, on=levy_on) if district is not None else None
    rows: list[RelevyRow] = []
    # An account whose ledger nets to zero (and has no charge below zero) has no bill unpaid
    # (``accounts_that_may_owe``): no row. The others' open bills come from their standings.
    found: dict[int, tuple[Decimal, Decimal]] = {}
    for chunk in chunked(accounts_that_may_owe(through=levy_on), CHUNK):
        states = balances(chunk, through=levy_on, order=ordinance.payment_order)
        due_dates, bill_district = {}, {}
        for bill_id, due_date, bill_in in Bill.objects.filter(account_id__in=chunk).values_list(
                "id", "due_date", "district_id"):
            due_dates[bill_id], bill_district[bill_id] = due_date, bill_in or ""
        lone_due = lone_due_dates(states=states.values())
        for account_id in chunk:
            past_due = [bill for key, bill in states[account_id].bills.items()
                        if _due_on(key, due_dates, lone_due) < levy_on
                        and (district is None or (bill_district[bill_id_of(key)] == district
                                                  if bill_id_of(key) is not None else account_id in in_district))]
            charges = sum((bill.unpaid_principal for bill in past_due), ZERO)
            late = sum((_unpaid_late(bill) for bill in past_due), ZERO)
            if charges + late > ZERO:
                found[account_id] = (charges, late)
    floor = list_floor()
    below = {account_id: sum(owed, ZERO) for account_id, owed in found.items() if sum(owed, ZERO) < floor}
    for account_id in below:
        del found[account_id]
    not_posted = late_charges_not_posted(through=levy_on)
    for chunk in chunked(sorted(found), CHUNK):
        facts = _account_facts(chunk)
        for account_id in chunk:
            charges, late = found[account_id]
            f = facts[account_id]
            rows.append(RelevyRow(sbl=f.sbl, owner=f.owner, owner_address=f.owner_address,
                                  service_address=f.service_address, account_no=f.account_no, charges=charges,
                                  late_charges=late, book=f.book, status=f.status))
    rows.sort(key=lambda row: (sbl_order(row.sbl), row.account_no))
    return Relevy(levy_on=levy_on, lien=section("lien", levy_on, installed=ordinance.utility, district=district or ""),
                  rows=rows, district=districts().get(district or ""),
                  charges=sum((row.charges for row in rows), ZERO),
                  late_charges=sum((row.late_charges for row in rows), ZERO), late_charges_not_posted=not_posted,
                  floor=floor, below_floor=len(below), below_floor_amount=sum(below.values(), ZERO))


def _unpaid_late(bill: BillBalance) -> Decimal:
    return bill.unpaid_total - bill.unpaid_principal


# --- receipts ---------------------------------------------------------------------------------------------

# Where a payment came in (``Payment.source``), in the clerk's words.
PAYMENT_SOURCES = {"counter": "Counter", "import": "File import", "api": "API", "portal": "Portal",
                   "lockbox": "Lockbox", "demo": "Demo data", "transfer": "Transfer (misposted payment)"}
# How it was paid (``Payment.tender``), in the clerk's words.
PAYMENT_TENDERS = dict(Payment.Tender.choices)


@dataclass(frozen=True)
class ReceiptTotal:
    day: date | None
    source: str
    count: int
    total: Decimal


@dataclass(frozen=True)
class TenderTotal:
    day: date | None
    tender: str
    count: int
    total: Decimal


@dataclass(frozen=True)
class Receipts:
    start: date
    end: date
    lines: list[ReceiptTotal]  # one per day and source
    days: list[ReceiptTotal]  # one per day (``source`` empty)
    sources: list[ReceiptTotal]  # one per source (``day`` None)
    count: int
    total: Decimal
    day_tenders: list[TenderTotal]  # one per day and tender (cash, check, card, bank file)
    tenders: list[TenderTotal]  # one per tender (``day`` None)


def receipts(*, start: date, end: date, district: str | None = None) -> Receipts:
    """Payments dated ``start`` to ``end`` (both included), by day and source and by day and tender, with
    counts and totals (a town's: of the accounts in ``district`` on ``end``, when given). A payment reversed since
    is still a receipt of its day (the day's cash report shows the reversal on the day it was made)."""
    lines: dict[tuple[date, str], list[Decimal]] = defaultdict(list)
    by_tender: dict[tuple[date, str], list[Decimal]] = defaultdict(list)
    paid = Payment.objects.filter(paid_on__gte=start, paid_on__lte=end)
    if district is not None:
        paid = paid.filter(account_id__in=accounts_in_district(district, on=end))
    for paid_on, source, tender, amount in paid.values_list("paid_on", "source", "tender", "amount"):
        lines[(paid_on, source)].append(amount)
        by_tender[(paid_on, tender)].append(amount)
    tender_order = {t: i for i, t in enumerate(PAYMENT_TENDERS)}
    tenders: dict[str, list[Decimal]] = defaultdict(list)
    for (_, tender), amounts in by_tender.items():
        tenders[tender].extend(amounts)
    days: dict[date, list[Decimal]] = defaultdict(list)
    sources: dict[str, list[Decimal]] = defaultdict(list)
    for (day, source), amounts in lines.items():
        days[day].extend(amounts)
        sources[source].extend(amounts)
    everything = [amount for amounts in lines.values() for amount in amounts]
    return Receipts(
        start=start, end=end,
        lines=[ReceiptTotal(day=day, source=source, count=len(amounts), total=sum(amounts, ZERO))
               for (day, source), amounts in sorted(lines.items())],
        days=[ReceiptTotal(day=day, source="", count=len(amounts), total=sum(amounts, ZERO))
              for day, amounts in sorted(days.items())],
        sources=[ReceiptTotal(day=None, source=source, count=len(amounts), total=sum(amounts, ZERO))
                 for source, amounts in sorted(sources.items())],
        count=len(everything), total=sum(everything, ZERO),
        day_tenders=[TenderTotal(day=day, tender=tender, count=len(amounts), total=sum(amounts, ZERO))
                     for (day, tender), amounts in sorted(by_tender.items(),
                                                          key=lambda kv: (kv[0][0], tender_order.get(kv[0][1], 99)))],
        tenders=[TenderTotal(day=None, tender=tender, count=len(amounts), total=sum(amounts, ZERO))
                 for tender, amounts in sorted(tenders.items(), key=lambda kv: tender_order.get(kv[0], 99))])


def _in_district(account_ids, district: str | None, *, on: date) -> list[int]:
    """``account_ids`` narrowed to those whose premises is in ``district`` on ``on`` (None: all of them)."""
    if district is None:
        return list(account_ids)
    inside = accounts_in_district(district, on=on)
    return [account_id for account_id in account_ids if account_id in inside]
