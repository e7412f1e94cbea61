"""The day's books as the village's general ledger takes them: balanced journal entries by day, fund and account.

Every ledger entry of a day is one debit and one credit of the same amount, so each journal entry balances:

==================  =====================================  ==========================================
journal             ledger entries                         debit / credit (a positive entry)
==================  =====================================  ==========================================
billing             water charges, fees and fines a bill   receivable / metered sales, service charges,
                    carries; its sewer rents               fines; a sewer rent: receivable / due to the
                                                           sewer fund, and in the sewer fund due from the
                                                           water fund / sewer rents
invoices            a fee billed on its own invoice        receivable / service charges
penalties           penalties, interest, their corrections receivable / interest and penalties
payments            payments (negative), reversals         cash / receivable (a payment); the reverse
adjustments         credit and debit memos, voids          receivable / corrections (a void reverses its
                                                           bill's revenues account by account)
deposits            refundable deposits, their refunds     cash / deposits held; the reverse
refunds             a credit paid back by check            receivable / accounts payable
==================  =====================================  ==========================================

An entry is journaled on the day it reached the books: its own day, or, for a late entry dated on a day already closed
(the day's close), the day it was entered (or the first open day after), with its own date named (``late_days``): the
journal of a closed day is the same forever. A credit (a negative entry) posts the other way round. The lines of one
account in one journal entry are netted to one debit or one credit. The accounts are the preset's ``[gl]``
(``billing.gl``). The conversion's opening balances (ledger sources ``convert:…``) are the previous system's
receivables, already in the general ledger, and are left out. Money is added in Python with Decimal.

A town books each of its water districts in its own fund (each district's ``[gl]``): an entry on a bill is the bill's
district's; any other (a payment, a memo, a counter fee) is the district the account's premises was in that day. Each
day's journal then has one entry per district (its reference ends with the district's code).

Ties, checked by ``tests/office/test_journal.py`` on PostgreSQL: a day's payments journal debits cash by the cash
report's total; its billing journal credits revenue by the billing register's total for the bills issued that day.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models.functions import Coalesce

from billing.districts import district_history, district_on
from billing.gl import GlAccount, gl_accounts_from
from billing.models import Bill, LedgerEntry
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import ZERO
from ordinance.selectors import districts, installed_utility, section

JOURNALS = {
    "billing": "Water bills issued",
    "invoices": "Fees invoiced on their own",
    "penalties": "Penalties and interest",
    "payments": "Payments received and reversed",
    "adjustments": "Corrections: credit and debit memos, voided bills",
    "deposits": "Refundable deposits",
    "refunds": "Credits refunded by check",
}
_REVENUE = {"water": "metered_sales", "sewer": "due_to_sewer", "fee": "service_charges", "fine": "fines",
            "debit": "adjustments", "credit": "adjustments", "penalty": "penalties", "interest": "penalties",
            "penalty_correction": "penalties", "interest_correction": "penalties"}
_JOURNAL = {"water": "billing", "sewer": "billing", "fee": "billing", "fine": "billing", "penalty": "penalties",
            "interest": "penalties", "penalty_correction": "penalties", "interest_correction": "penalties",
            "payment": "payments",
            "payment_reversal": "payments", "credit": "adjustments", "debit": "adjustments", "void": "adjustments",
            "deposit": "deposits", "deposit_refund": "deposits", "refund": "refunds"}
_OTHER_SIDE = {"payment": "cash", "payment_reversal": "cash", "deposit": "cash", "deposit_refund": "cash",
               "refund": "payable"}
CONVERSION_PREFIX = "convert:"
MOST_DAYS = 366


@dataclass(frozen=True)
class JournalLine:
    day: date
    journal: str
    account: GlAccount
    debit: Decimal
    credit: Decimal
    district: str = ""  # a town's district ("" where the installation names none)

    @property
    def entry_id(self) -> str:
        """The journal entry's reference: one per day, journal (and district, in a town)."""
        return f"WB-{self.day:%Y%m%d}-{self.journal}" + (f"-{self.district}" if self.district else "")


@dataclass(frozen=True)
class JournalEntry:
    day: date
    journal: str
    lines: list[JournalLine]
    ledger_rows: int
    late_days: tuple[date, ...] = ()  # the own dates of late entries booked here, their days closed already
    district: str = ""

    @property
    def late_words(self) -> str:
        """"with late entries dated Dec 1, 2026" ("" when none)."""
        if not self.late_days:
            return ""
        return "with late entries dated " + ", ".join(fmt_day(day) for day in self.late_days)

    @property
    def debits(self) -> Decimal:
        return sum((x.debit for x in self.lines), ZERO)

    @property
    def credits(self) -> Decimal:
        return sum((x.credit for x in self.lines), ZERO)

    @property
    def words(self) -> str:
        return JOURNALS[self.journal]


def journal_entries(*, start: date, end: date) -> list[JournalEntry]:
    """The journal entries of the days from ``start`` to ``end`` (at most a year), by day, then journal."""
    if end < start:
        raise ApplicationError(f"{end} is before {start}", field="end")
    if (end - start).days >= MOST_DAYS:
        raise ApplicationError(f"{start} to {end} is more than a year; export a year at a time", field="end")
    utility = installed_utility()
    town = districts(installed=utility)
    accounts = {code: section("gl", end, installed=utility, district=code) if utility else gl_accounts_from({})
                for code in ("", *town)}
    # An entry belongs to the day it reached the books: its own, or for a late entry dated on a day already closed
    # the day it was entered (``LedgerEntry.booked_on``), so a closed day's journal is the same forever.
    rows = list(LedgerEntry.objects.annotate(day=Coalesce("booked_on", "posted_on"))
                .filter(day__range=(start, end)).exclude(source__startswith=CONVERSION_PREFIX)
                .values_list("kind", "day", "amount", "source", "bill_id", "posted_on", "account_id"))
    voided = {row[4] for row in rows if row[0] == "void"}
    bill_revenue: dict[int, list[tuple[str, Decimal]]] = defaultdict(list)  # a voided bill's charges by kind
    for bill_id, kind, amount in (LedgerEntry.objects.filter(bill_id__in=voided,
                                                             kind__in=("water", "sewer", "fee", "fine"))
                                  .values_list("bill_id", "kind", "amount")):
        bill_revenue[bill_id].append((kind, amount))
    district_of = _districts_of(rows) if town else None

    net: dict[tuple, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))  # debit positive
    counts: dict[tuple, int] = defaultdict(int)
    late: dict[tuple, set[date]] = defaultdict(set)  # the own dates of late entries, by journal entry
    for kind, day, amount, source, bill_id, own_day, account_id in rows:
        journal = "invoices" if kind == "fee" and source.startswith("invoice:") else _JOURNAL.get(kind)
        if journal is None:
            raise ApplicationError(f"ledger kind '{kind}' has no general ledger account", field="kind")
        key = (day, journal, district_of(bill_id, account_id, own_day) if district_of else "")
        counts[key] += 1
        if own_day != day:
            late[key].add(own_day)
        books = net[key]
        books["deposits" if kind in ("deposit", "deposit_refund") else "receivable"] += amount
        if kind == "void":
            for charged_kind, charged in bill_revenue[bill_id]:
                _revenue(books, charged_kind, -charged)  # the void takes each revenue back (a debit)
        elif kind in _OTHER_SIDE:
            books[_OTHER_SIDE[kind]] -= amount
        else:
            _revenue(books, kind, amount)
    out = []
    for (day, journal, district), books in sorted(
            net.items(), key=lambda item: (item[0][0], list(JOURNALS).index(item[0][1]), item[0][2])):
        chart = accounts[district]
        order = list(chart)
        lines = [JournalLine(day=day, journal=journal, account=chart[key], debit=value if value > 0 else ZERO,
                             credit=-value if value < 0 else ZERO, district=district)
                 for key, value in sorted(books.items(), key=lambda kv: (kv[1] < 0, order.index(kv[0]))) if value]
        out.append(JournalEntry(day=day, journal=journal, lines=lines, ledger_rows=counts[(day, journal, district)],
                                late_days=tuple(sorted(late[(day, journal, district)])), district=district))
    return out


def _revenue(books: dict[str, Decimal], kind: str, amount: Decimal) -> None:
    """Credit what a charge of ``amount`` earns: its revenue account; a sewer rent, the water fund's debt to the sewer
    fund and, in the sewer fund, what the water fund owes it and the sewer rent earned."""
    books[_REVENUE[kind]] -= amount
    if kind == "sewer":
        books["due_from_water"] += amount
        books["sewer_rents"] -= amount


def _districts_of(rows):
    """``district_of(bill_id, account_id, day)``: the district an entry is booked in — its bill's, else the
    district the account's premises was in on the entry's own day."""
    bills = dict(Bill.objects.filter(id__in={row[4] for row in rows if row[4]}).values_list("id", "district_id"))
    history = district_history({row[6] for row in rows})

    def district_of(bill_id, account_id, day) -> str:
        if bill_id is not None:
            return bills.get(bill_id) or ""
        return district_on(history.get(account_id, []), day)

    return district_of


CSV_HEADER = ("entry", "date", "journal", "fund", "account", "account_name", "debit", "credit", "memo")


def journal_rows(entries: list[JournalEntry]) -> list[list[str]]:
    """The journal as CSV for the general ledger's import: a header and one row per line."""
    rows = [list(CSV_HEADER)]
    for entry in entries:
        rows += [[x.entry_id, x.day.isoformat(), x.journal, x.account.fund, x.account.number, x.account.name,
                  f"{x.debit:.2f}" if x.debit else "", f"{x.credit:.2f}" if x.credit else "",
                  f"{entry.words} ({entry.ledger_rows} ledger row{'' if entry.ledger_rows == 1 else 's'}"
                  + (f", {entry.late_words})" if entry.late_days else ")")]
                 for x in entry.lines]
    return rows
