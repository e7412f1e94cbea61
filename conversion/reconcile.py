"""Reconciliation: the converted files' control totals against the books, to the cent.

Design overview:

* **The file's side** is what the posted batches of a cutover said, row by row (``OpeningItem``): each
  account's charges by kind, its credit and its deposits, the open bills, and the open charges by how long past
  due they were at the close of the day before the cutover.
* **The books' side** is the ledger as it stands for those accounts, every row dated before the cutover (the
  opening position; what happens from the cutover on is ours): its rows by kind as the file's kinds (a sewer rent
  its own kind, as the ledger keeps it; a late charge and its corrections are the late charge), the converted
  bills, and their charges by the same aging. A clerk's memo dated before the cutover, a row missing or doubled:
  each shows as a difference of its account.
* **Every account whose kinds or balance differ** is listed with both sides and the difference; the control
  totals and the aging close the report. Money is added in Python (Decimal), never by the database.
* Drawn as a report (``reports.render``): the page, CSV (the differences), JSON and PDF agree.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from django.db.models import F, Q, Subquery

from accounts.models import Account
from backflow.models import Device
from billing.models import Bill, LedgerEntry, PriorPayment, PriorRelevy
from core.csvimport import chunked
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars
from reports.render import COUNT, MONEY, TEXT, Column, ReportView, Table
from reports.selectors import AGING_BUCKETS, aging_bucket

from .cases import cases_reconciled
from .contacts import contacts_reconciled
from .models import OpeningItem
from .notes import notes_reconciled
from .plans import plans_reconciled
from .posting import batches_for

# The reconciliation's kinds, in order: the file's, each as the ledger keeps it.
KINDS = ("water", "sewer", "fee", "fine", "penalty", "interest", "credit", "deposit")
KIND_WORDS = {"water": "Water", "sewer": "Sewer rents", "fee": "Fees", "fine": "Fines", "penalty": "Penalties",
              "interest": "Interest", "credit": "Credits", "deposit": "Deposits held"}
FILE_KIND = {"water": "water", "sewer": "sewer", "fee": "fee", "fine": "fine", "penalty": "penalty",
             "interest": "interest", "credit": "credit", "deposit": "deposit"}
BOOK_KIND = {"water": "water", "sewer": "sewer", "fee": "fee", "debit": "fee", "fine": "fine", "penalty": "penalty",
             "penalty_correction": "penalty", "converted_penalty": "penalty", "interest": "interest",
             "interest_correction": "interest", "converted_interest": "interest", "credit": "credit",
             "payment": "credit", "void": "credit", "payment_reversal": "credit", "deposit": "deposit",
             "deposit_refund": "deposit", "refund": "credit"}
CHARGES = ("water", "sewer", "fee", "fine", "penalty", "interest")
COUNT_TOTALS = ("accounts", "open_bills")
LEGACY_WORDS = {"accounts": "Accounts", "open_bills": "Open bills", **{"charges": "Charges", "owed": "Owed"}}
CREDITS = ("credit", "deposit")  # the file writes them positive; the ledger negative


@dataclass
class Side:
    """One side's figures: accounts and open bills counted, amounts by kind, charges by aging bucket."""

    accounts: int = 0
    bills: int = 0
    by_kind: dict[str, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    aging: list[Decimal] = field(default_factory=lambda: [ZERO] * len(AGING_BUCKETS))

    @property
    def owed(self) -> Decimal:
        return sum((self.by_kind[k] for k in CHARGES), ZERO) - self.by_kind["credit"]


@dataclass(frozen=True)
class AccountDifference:
    account_no: str
    kinds: tuple[tuple[str, Decimal, Decimal], ...]  # (kind, file, books) of each kind that differs
    file_owed: Decimal
    books_owed: Decimal

    @property
    def difference(self) -> Decimal:
        return self.books_owed - self.file_owed

    @property
    def what(self) -> str:
        return "; ".join(f"{KIND_WORDS[k].lower()}: file {f:.2f}, books {b:.2f}" for k, f, b in self.kinds) \
            or "balance"


@dataclass
class Reconciliation:
    cutover: date
    batches: list[int]
    file: Side
    books: Side
    differences: list[AccountDifference]
    # (past bills in the files, past bills brought over, payments in the files, payments brought over)
    history: tuple[int, int, int, int] = (0, 0, 0, 0)
    paid: tuple[Decimal, Decimal] = (ZERO, ZERO)  # paid to the old system: the files', brought over
    devices: tuple[int, int] = (0, 0)  # backflow devices: the files', registered
    paperless: tuple[int, int] = (0, 0)  # paperless accounts: the files', on the books
    emails: tuple[int, int] = (0, 0)  # owners' e-mail addresses: the files', on the books as given
    notes: tuple[int, int] = (0, 0)  # the accounts' notes: the files', on the books
    plans: tuple[int, int] = (0, 0)  # payment plans in force: the files', on the books
    plans_left: tuple[Decimal, Decimal] = (ZERO, ZERO)  # what those plans leave to pay
    cases: tuple[int, int] = (0, 0)  # termination cases in progress: the files', on the books
    relevied: tuple[Decimal, Decimal] = (ZERO, ZERO)  # relevied to the tax roll by the old system (history)
    # The old system's control report, as posted with the batches (``convert post --control``), added up.
    legacy: dict[str, Decimal] = field(default_factory=dict)

    def legacy_rows(self) -> list[tuple[str, Decimal, Decimal]]:
        """Each total of the old system's report against the books: (total, legacy, books)."""
        books = {"accounts": Decimal(self.books.accounts), "open_bills": Decimal(self.books.bills),
                 "charges": sum((self.books.by_kind[k] for k in CHARGES), ZERO), "owed": self.books.owed,
                 **{k: self.books.by_kind[k] for k in KINDS}}
        given = defaultdict(Decimal)
        for name, value in self.legacy.items():
            given[FILE_KIND.get(name, name)] += value
        return [(name, given[name], books[name]) for name in (*COUNT_TOTALS, *KINDS, "charges", "owed")
                if name in given]

    @property
    def matches(self) -> bool:
        return all(legacy == books for _, legacy, books in self.legacy_rows()) \
            and not self.differences and self.file.accounts == self.books.accounts \
            and self.file.bills == self.books.bills and self.history[0] == self.history[1] \
            and self.history[2] == self.history[3] and self.paid[0] == self.paid[1] \
            and self.devices[0] == self.devices[1] and self.paperless[0] == self.paperless[1] \
            and self.emails[0] == self.emails[1] and self.notes[0] == self.notes[1] \
            and self.plans[0] == self.plans[1] and self.plans_left[0] == self.plans_left[1] \
            and self.cases[0] == self.cases[1] and self.relevied[0] == self.relevied[1]


def reconciliation(*, cutover: date) -> Reconciliation:
    """The posted batches of ``cutover`` against the books (refused when there is none)."""
    posted = list(batches_for(cutover).order_by("id"))
    batches = [batch.pk for batch in posted]
    if not batches:
        raise ApplicationError(f"no conversion is posted with the cutover {cutover}", field="cutover")
    eve = cutover - timedelta(days=1)
    file, books = Side(), Side()
    theirs: dict[int, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    bill_numbers: set[str] = set()
    for account_id, bill_no, due_date, kind, amount in OpeningItem.objects.filter(batch_id__in=batches).order_by(
            ).values_list("account_id", "bill_no", "due_date", "kind", "amount"):
        ours = FILE_KIND[kind]
        theirs[account_id][ours] += amount
        file.by_kind[ours] += amount
        if ours in CHARGES:
            bill_numbers.add(bill_no)
            file.aging[aging_bucket((eve - due_date).days)] += amount
    file.accounts, file.bills = len(theirs), len(bill_numbers)

    prefixes = [batch.source_prefix for batch in posted]
    # Every account a batch brought anything over for: open items, past bills, payments.
    accounts = (Q(account_id__in=Subquery(OpeningItem.objects.filter(batch_id__in=batches).values("account_id")))
                | Q(account_id__in=Subquery(Bill.objects.filter(conversion__in=prefixes).values("account_id")))
                | Q(account_id__in=Subquery(PriorPayment.objects.filter(conversion__in=prefixes)
                                            .values("account_id"))))
    converted = dict(Bill.objects.filter(conversion__in=prefixes).exclude(status=Bill.Status.VOID).order_by()
                     .values_list("id", "due_date"))
    held: dict[int, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    owing: set[int] = set()  # the converted bills with a charge on the books: the open ones
    for account_id, kind, amount, bill_id in LedgerEntry.objects.filter(
            accounts, posted_on__lt=cutover).order_by().values_list(
            "account_id", "kind", "amount", "bill_id"):
        ours = BOOK_KIND[kind]
        value = -amount if ours in CREDITS else amount
        held[account_id][ours] += value
        books.by_kind[ours] += value
        if ours in CHARGES and bill_id in converted:
            owing.add(bill_id)
            books.aging[aging_bucket((eve - converted[bill_id]).days)] += amount
    books.bills = len(owing)
    books.accounts = len(held)

    numbers: dict[int, str] = {}
    ids = sorted(set(theirs) | set(held))
    for chunk in chunked(ids, 5000):
        numbers.update(Account.objects.filter(id__in=list(chunk)).values_list("id", "account_no"))
    differences = []
    for account_id in ids:
        mine, in_books = theirs.get(account_id, {}), held.get(account_id, {})
        kinds = tuple((k, mine.get(k, ZERO), in_books.get(k, ZERO)) for k in KINDS
                      if mine.get(k, ZERO) != in_books.get(k, ZERO))
        if kinds:
            differences.append(AccountDifference(
                account_no=numbers[account_id], kinds=kinds,
                file_owed=_owed(mine), books_owed=_owed(in_books)))
    differences.sort(key=lambda d: d.account_no)
    told = [batch.control.get("history", {}) for batch in posted]
    payments = PriorPayment.objects.filter(conversion__in=prefixes)
    history = (sum(t.get("past_bills", 0) for t in told),
               Bill.objects.filter(conversion__in=prefixes, period_end__gt=F("period_start")).count(),
               sum(t.get("payments", 0) for t in told), payments.count())
    paid = (sum((Decimal(t.get("paid", "0")) for t in told), ZERO),
            sum(payments.values_list("amount", flat=True), ZERO))
    registered = [pk for batch in posted for pk in batch.made.get("devices", [])]
    devices = (sum(t.get("devices", 0) for t in told), Device.objects.filter(id__in=registered).count())
    paperless, emails = contacts_reconciled([batch.made for batch in posted])
    notes = notes_reconciled([batch.made for batch in posted], told)
    plans, plans_left = plans_reconciled([batch.made for batch in posted], told)
    cases = cases_reconciled([batch.made for batch in posted], told)
    relevies = PriorRelevy.objects.filter(conversion__in=prefixes)
    relevied = (sum((Decimal(t.get("relevied_total", "0")) for t in told), ZERO),
                sum(relevies.values_list("amount", flat=True), ZERO))
    legacy: dict[str, Decimal] = defaultdict(Decimal)
    for batch in posted:
        for name, value in batch.control.get("legacy", {}).items():
            legacy[name] += Decimal(value)
    return Reconciliation(cutover=cutover, batches=batches, file=file, books=books, differences=differences,
                          history=history, paid=paid, devices=devices, paperless=paperless, emails=emails,
                          notes=notes, plans=plans, plans_left=plans_left, cases=cases,
                          relevied=relevied,
                          legacy=dict(legacy))


def _owed(by_kind: dict[str, Decimal]) -> Decimal:
    return sum((by_kind.get(k, ZERO) for k in CHARGES), ZERO) - by_kind.get("credit", ZERO)


def reconciliation_view(r: Reconciliation) -> ReportView:
    """The reconciliation as a report: the differing accounts, then the control totals and the aging."""
    money = (Column("file", "File", MONEY), Column("books", "Books", MONEY), Column("difference", "Difference", MONEY))
    control = [{"item": "Accounts", "file_count": r.file.accounts, "books_count": r.books.accounts,
                "count_difference": r.books.accounts - r.file.accounts},
               {"item": "Open bills", "file_count": r.file.bills, "books_count": r.books.bills,
                "count_difference": r.books.bills - r.file.bills},
               {"item": "Past bills (history)", "file_count": r.history[0], "books_count": r.history[1],
                "count_difference": r.history[1] - r.history[0]},
               {"item": "Payments to the old system (history)", "file_count": r.history[2],
                "books_count": r.history[3], "count_difference": r.history[3] - r.history[2]},
               {"item": "Backflow devices", "file_count": r.devices[0], "books_count": r.devices[1],
                "count_difference": r.devices[1] - r.devices[0]},
               {"item": "Paperless accounts", "file_count": r.paperless[0], "books_count": r.paperless[1],
                "count_difference": r.paperless[1] - r.paperless[0]},
               {"item": "Owners' e-mail addresses", "file_count": r.emails[0], "books_count": r.emails[1],
                "count_difference": r.emails[1] - r.emails[0]},
               {"item": "Account notes", "file_count": r.notes[0], "books_count": r.notes[1],
                "count_difference": r.notes[1] - r.notes[0]},
               {"item": "Payment plans in force", "file_count": r.plans[0], "books_count": r.plans[1],
                "count_difference": r.plans[1] - r.plans[0]},
               {"item": "Termination cases in progress", "file_count": r.cases[0], "books_count": r.cases[1],
                "count_difference": r.cases[1] - r.cases[0]}]
    amounts = [{"item": KIND_WORDS[k], "file": r.file.by_kind[k], "books": r.books.by_kind[k],
                "difference": r.books.by_kind[k] - r.file.by_kind[k]} for k in KINDS]
    amounts.append({"item": "Owed (charges less credits)", "file": r.file.owed, "books": r.books.owed,
                    "difference": r.books.owed - r.file.owed})
    amounts.append({"item": "Paid to the old system (history, not owed)", "file": r.paid[0], "books": r.paid[1],
                    "difference": r.paid[1] - r.paid[0]})
    amounts.append({"item": "Relevied to the tax roll by the old system (history, not owed)", "file": r.relevied[0],
                    "books": r.relevied[1], "difference": r.relevied[1] - r.relevied[0]})
    amounts.append({"item": "Left to pay on the payment plans in force", "file": r.plans_left[0],
                    "books": r.plans_left[1], "difference": r.plans_left[1] - r.plans_left[0]})
    aging = [{"item": label, "file": f, "books": b, "difference": b - f}
             for (_, label), f, b in zip(AGING_BUCKETS, r.file.aging, r.books.aging, strict=True)]
    rows = [{"account_no": d.account_no, "what": d.what, "file": d.file_owed, "books": d.books_owed,
             "difference": d.difference} for d in r.differences]
    def shown(name: str, value: Decimal) -> str:
        return f"{value:,.0f}" if name in COUNT_TOTALS else fmt_dollars(value)

    legacy = [{"item": LEGACY_WORDS.get(name) or KIND_WORDS[name], "legacy": shown(name, given),
               "books": shown(name, books), "legacy_difference": shown(name, books - given)}
              for name, given, books in r.legacy_rows()]
    off = [row["item"] for row, (_, given, books) in zip(legacy, r.legacy_rows(), strict=True) if given != books]
    verdict = ("The books match the file to the cent." if r.matches else
               f"The books differ from the old system's control report in: {', '.join(off)}." if off else
               f"{len(r.differences):,} account(s) differ from the file; each is listed with both sides.")
    return ReportView(
        name="conversion_reconciliation", title="Conversion reconciliation", as_of=r.cutover,
        parameters=[("cutover", "Cutover", r.cutover)],
        notes=[verdict, f"Conversion batch(es) {', '.join(str(b) for b in r.batches)}: the files' rows against every "
                        "ledger row of their accounts dated before the cutover. Sewer rents are their own kind, as "
                        "the ledger keeps them; owed is charges less credits (deposits are held, not owed)."],
        main=Table(key="rows", title="Accounts that differ", columns=(
            Column("account_no", "Account", TEXT, width=10), Column("what", "What differs", TEXT, width=40),
            Column("file", "File owes", MONEY), Column("books", "Books owe", MONEY),
            Column("difference", "Difference", MONEY)), rows=rows,
            total={"account_no": f"{len(rows):,} account(s)",
                   "difference": sum((d.difference for d in r.differences), ZERO)} if rows else {}),
        more=[Table(key="counts", title="Accounts, bills, devices and contacts", columns=(
                  Column("item", "", TEXT), Column("file_count", "File", COUNT),
                  Column("books_count", "Books", COUNT), Column("count_difference", "Difference", COUNT)),
                  rows=control),
              Table(key="by_kind", title="Amounts by kind", columns=(Column("item", "", TEXT), *money), rows=amounts),
              Table(key="aging", title="Open charges by days past due at the cutover", columns=(
                  Column("item", "", TEXT), *money), rows=aging),
              *([Table(key="legacy", title="The old system's control report against the books", columns=(
                  Column("item", "", TEXT), Column("legacy", "Old system", TEXT), Column("books", "Books", TEXT),
                  Column("legacy_difference", "Difference", TEXT)), rows=legacy)] if legacy else [])],
        totals={"matches": r.matches, "differences": len(r.differences), "batches": r.batches})
