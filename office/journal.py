"""The day's books as the village's general ledger takes them: balanced journal entries by day, fund and account.

Every ledger entry of a day is one debit and one credit of the same amount, so each journal entry balances:

==================  =====================================  ==========================================
journal             ledger entries                         debit / credit (a positive entry)
==================  =====================================  ==========================================
billing             water charges, fees and fines a bill   receivable / metered sales, service charges,
                    carries                                fines
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

Ties, checked by ``tests/office/test_journal.py`` on PostgreSQL: a day's payments journal debits cash by the cash
report's total; its billing journal credits revenue by the billing register's total for the bills issued that day.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models.functions import Coalesce

from billing.gl import GlAccount, gl_accounts_from
from billing.models import LedgerEntry
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import ZERO
from ordinance.selectors import installed_utility, section

JOURNALS = {
    "billing": "Water bills issued",
    "invoices": "Fees invoiced on their own",
    "penalties": "Penalties and interest",
    "payments": "Payments received and reversed",
    "adjustments": "Corrections: credit and debit memos, voided bills",
    "deposits": "Refundable deposits",
    "refunds": "Credits refunded by check",
}
_REVENUE = {"water": "metered_sales", "fee": "service_charges", "fine": "fines", "debit": "adjustments",
            "credit": "adjustments", "penalty": "penalties", "interest": "penalties",
            "penalty_correction": "penalties", "interest_correction": "penalties"}
_JOURNAL = {"water": "billing", "fee": "billing", "fine": "billing", "penalty": "penalties", "interest": "penalties",
            "penalty_correction": "penalties", "interest_correction": "penalties", "payment": "payments",
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

    @property
    def entry_id(self) -> str:
        """The journal entry's reference: one per day and journal."""
        return f"WB-{self.day:%Y%m%d}-{self.journal}"


@dataclass(frozen=True)
class JournalEntry:
    day: date
    journal: str
    lines: list[JournalLine]
    ledger_rows: int
    late_days: tuple[date, ...] = ()  # the own dates of late entries booked here, their days closed already

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
    accounts = section("gl", end, installed=utility) if utility else gl_accounts_from({})
    # An entry belongs to the day it reached the books: its own, or for a late entry dated on a day already closed
    # the day it was entered (``LedgerEntry.booked_on``), so a closed day's journal is the same forever.
    rows = list(LedgerEntry.objects.annotate(day=Coalesce("booked_on", "posted_on"))
                .filter(day__range=(start, end)).exclude(source__startswith=CONVERSION_PREFIX)
                .values_list("kind", "day", "amount", "source", "bill_id", "posted_on"))
    voided = {bill_id for kind, _, _, _, bill_id, _ in rows if kind == "void"}
    bill_revenue: dict[int, list[tuple[str, Decimal]]] = defaultdict(list)  # a voided bill's charges by kind
    for bill_id, kind, amount in (LedgerEntry.objects.filter(bill_id__in=voided, kind__in=("water", "fee", "fine"))
                                  .values_list("bill_id", "kind", "amount")):
        bill_revenue[bill_id].append((kind, amount))

    net: dict[tuple[date, str], dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))  # debit positive
    counts: dict[tuple[date, str], int] = defaultdict(int)
    late: dict[tuple[date, str], set[date]] = defaultdict(set)  # the own dates of late entries, by journal entry
    for kind, day, amount, source, bill_id, own_day in rows:
        journal = "invoices" if kind == "fee" and source.startswith("invoice:") else _JOURNAL.get(kind)
        if journal is None:
            raise ApplicationError(f"ledger kind '{kind}' has no general ledger account", field="kind")
        key = (day, journal)
        counts[key] += 1
        if own_day != day:
            late[key].add(own_day)
        books = net[key]
        books["deposits" if kind in ("deposit", "deposit_refund") else "receivable"] += amount
        if kind == "void":
            for charged_kind, charged in bill_revenue[bill_id]:
                books[_REVENUE[charged_kind]] += charged  # the void takes each revenue back (a debit)
        else:
            books[_OTHER_SIDE.get(kind) or _REVENUE[kind]] -= amount
    order = list(accounts)
    out = []
    for (day, journal), books in sorted(net.items(), key=lambda item: (item[0][0], list(JOURNALS).index(item[0][1]))):
        lines = [JournalLine(day=day, journal=journal, account=accounts[key], debit=value if value > 0 else ZERO,
                             credit=-value if value < 0 else ZERO)
                 for key, value in sorted(books.items(), key=lambda kv: (kv[1] < 0, order.index(kv[0]))) if value]
        out.append(JournalEntry(day=day, journal=journal, lines=lines, ledger_rows=counts[(day, journal)],
                                late_days=tuple(sorted(late[(day, journal)]))))
    return out


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
