"""Opening books: what each account owed the village's previous system on the cutover, written as billing's own
bills and ledger rows, and taken out again whole by a rollback.

Design overview:

* **Billing writes them; the caller names them.** A conversion (``conversion``, above billing) checks the old
  system's file and hands over the open bills and account items; every row written here has a ledger source
  under the caller's ``prefix`` (``convert:<batch>:``, ``opening_source``), so the rows of one conversion are
  found, counted and removed together.
* **An open bill is a bill** (``Bill.converted_on`` = the cutover; no rate schedule, no readings, no gallons),
  with one line per charge as the old system described it, so aging, the relevy, shut-off eligibility and the
  payment order read it like any bill, from its own bill and due dates. Its ledger rows are posted on its bill
  date: the water charges as ``water``, a sewer rent as ``sewer`` (paid after the water, in the sewer fund), fees as
  ``fee``, fines as ``fine``.
* **Late charges the old system already charged** are ``converted_penalty`` and ``converted_interest`` rows on
  the bill, dated the day before the cutover: owed like ours and paid in the same order, but facts the penalty
  replay never recomputes; and a converted bill's late-charge days before the cutover are never ours
  (``BillTerms.charges_from``). From the cutover on, the preset's penalty scheme charges it as any bill.
* **Credits and deposits** are the account's: an unapplied credit is a ``credit`` row and a deposit a held
  ``Deposit`` with its ``deposit`` row, both dated the day before the cutover.
* **History** is shown, never owed: a past bill paid in the old system is a bill (its period, gallons and lines,
  so the usage chart and the high-usage average read it, and the next bill starts from its period's last
  reading) with no ledger row (a monthly bill, the first of its billable year, charged the year's minimum, as
  the ordinance has it charged: ``includes_annual_minimum``); a bill both past and open takes its period and
  gallons from the history and its lines and ledger rows from the open items (what is owed). A payment made to
  the old system is a ``PriorPayment``, shown beside the bills, never on the books (what it paid is out of the
  open items).
* **Only fresh books are opened**: an account with a bill or ledger row of its own already is refused.
* **Rollback** (``opening_books_remove``) deletes exactly those rows, nothing else, in one transaction; on
  PostgreSQL the append-only triggers let it through only inside that transaction (billing 0021).
"""

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from django.db import connection
from django.db.models import Q, Subquery
from django.utils import timezone
from djmoney.money import Money

from accounts.models import Account
from core.csvimport import chunked
from core.db import copy_rows, is_postgres, lock_in_order, reserve_ids
from core.errors import ApplicationError, FieldError
from core.money import ZERO

from ..ledger.posting import Posting, ledger_post_many
from ..models import AccountStanding, Bill, BillFigures, BillLine, Deposit, LedgerEntry, PriorPayment, PriorRelevy
from ..ordinance import ordinance_on
from ..runs.load import installation_spans

# The old system's kinds of a bill's charge, as our bill lines and ledger kinds.
LINE_KINDS = {"water": BillLine.Kind.CHARGE, "sewer": BillLine.Kind.SEWER, "fee": BillLine.Kind.FEE,
              "fine": BillLine.Kind.FINE}
ENTRY_KINDS = {"water": LedgerEntry.Kind.WATER, "sewer": LedgerEntry.Kind.SEWER, "fee": LedgerEntry.Kind.FEE,
               "fine": LedgerEntry.Kind.FINE, "penalty": LedgerEntry.Kind.CONVERTED_PENALTY,
               "interest": LedgerEntry.Kind.CONVERTED_INTEREST}
LATE_KINDS = ("penalty", "interest")
DEPOSIT_CODE = "converted"
SMALLEST_METER = "5/8"


def opening_source(prefix: str, what: str, key: int) -> str:
    """``<prefix><what>:<id>``: a converted bill's rows (``bill``), an account's credit (``credit``), a deposit."""
    return f"{prefix}{what}:{key}"


@dataclass
class OpeningBill:
    """One bill of the previous system: its charges (kind, description, amount, and a late charge's own day or
    None) in the file's order, owed when ``open`` (posted to the ledger), history otherwise; with its period and
    gallons when the history has them."""

    account_id: int
    number: str
    bill_date: date
    due_date: date
    charges: list[tuple[str, str, Decimal, date | None]] = field(default_factory=list)
    open: bool = True
    period: tuple[date, date] | None = None
    gallons: int = 0

    @property
    def span(self) -> tuple[date, date]:
        """Its period; without one (an open balance alone) the bill date twice: ``Bill.has_usage`` is then false."""
        return self.period or (self.bill_date, self.bill_date)

    @property
    def total(self) -> Decimal:
        """What the bill charged for service, fees and fines (its late charges are apart, as on our bills)."""
        return sum((amount for kind, _, amount, _ in self.charges if kind in LINE_KINDS), ZERO)


@dataclass(frozen=True)
class AccountItem:
    account_id: int
    kind: str  # credit or deposit
    amount: Decimal
    description: str


@dataclass(frozen=True)
class PriorPaymentItem:
    account_id: int
    paid_on: date
    amount: Decimal
    reference: str


@dataclass(frozen=True)
class PriorRelevyItem:
    account_id: int
    relevied_on: date
    tax_roll: str
    amount: Decimal


@dataclass(frozen=True)
class OpeningWritten:
    bills: int
    lines: int
    entries: int
    deposits: int
    payments: int = 0


def opening_books_post(*, bills: Sequence[OpeningBill], items: Sequence[AccountItem], cutover: date,
                       prefix: str, payments: Sequence[PriorPaymentItem] = (),
                       relevies: Sequence[PriorRelevyItem] = ()) -> OpeningWritten:
    """Write the bills (open and past), account items and prior payments (in the caller's transaction, all or
    nothing). Refused, writing nothing, for an account that already has books here."""
    account_ids = sorted({b.account_id for b in bills} | {i.account_id for i in items}
                         | {p.account_id for p in payments} | {r.account_id for r in relevies})
    accounts = {}
    for chunk in chunked(account_ids, 5000):  # locked in id order, as a run locks them
        accounts.update((row[0], row[1:]) for row in lock_in_order(
            Account.objects.filter(id__any=list(chunk)), "id", "account_no", "book", "owner__name",
            "owner__mailing_address"))
    _refuse_accounts_with_books(account_ids, accounts)
    eve = cutover - timedelta(days=1)
    calendar = ordinance_on(cutover).calendar
    spans = installation_spans(account_ids)
    # A converted bill's frequency is the account's meter's (an account without one: a residential meter's).
    frequency = {account_id: calendar.frequency_for(spans[account_id][-1].size if spans.get(account_id)
                                                    else SMALLEST_METER)
                 for account_id in account_ids}
    # The first monthly bill of each billable year charged the year's minimum, as the ordinance has it charged
    # (the later ones count gallons against its allowance): our next bill in that year charges no second one.
    year_first: dict[tuple[int, date], OpeningBill] = {}
    for b in bills:
        if frequency[b.account_id] == Bill.Frequency.MONTHLY:
            key = (b.account_id, calendar.billable_year_start(book=accounts[b.account_id][1], on=b.bill_date))
            if key not in year_first or b.bill_date < year_first[key].bill_date:
                year_first[key] = b
    minimum_on = {id(b) for b in year_first.values()}
    now = timezone.now()
    if is_postgres():  # COPY, without a model instance per bill
        ids = reserve_ids(Bill, len(bills))
        columns = ("id", "number", "public_id", "account_id", "status", "frequency", "bill_date", "issued_on",
                   "recipient_name", "recipient_address", "due_date", "period_start", "period_end", "gallons",
                   "schedule_gallons", "includes_annual_minimum", "estimated", "total", "total_currency",
                   "created_at", "void_reason", "void_description", "pdf", "final", "converted_on", "conversion")
        issued = Bill.Status.ISSUED.value
        copy_rows(Bill, columns, (  # formatted as the database reads them
            (pk, b.number, uuid.uuid4(), b.account_id, issued, frequency[b.account_id], b.bill_date,
             b.bill_date, accounts[b.account_id][2] or "", accounts[b.account_id][3] or "", b.due_date,
             *b.span, b.gallons, b.gallons, id(b) in minimum_on, False, b.total, "USD", now, "",
             "", "", False, cutover, prefix)
            for pk, b in zip(ids, bills, strict=True)))
    else:
        ids = [row.pk for row in Bill.objects.bulk_create([Bill(
            number=b.number, public_id=uuid.uuid4(), account_id=b.account_id, status=Bill.Status.ISSUED,
            frequency=frequency[b.account_id], bill_date=b.bill_date, issued_on=b.bill_date, due_date=b.due_date,
            recipient_name=accounts[b.account_id][2] or "", recipient_address=accounts[b.account_id][3] or "",
            period_start=b.span[0], period_end=b.span[1],
            gallons=b.gallons, schedule_gallons=b.gallons, includes_annual_minimum=id(b) in minimum_on,
            total=Money(b.total, "USD"), converted_on=cutover,
            conversion=prefix) for b in bills], batch_size=2000)]
    lines, postings = [], []
    for bill, bill_id in zip(bills, ids, strict=True):
        by_kind: dict[str, Decimal] = defaultdict(Decimal)
        late_charges = []
        position = 0
        for kind, description, amount, charged_on in bill.charges:
            if kind in LATE_KINDS:
                late_charges.append((kind, description, amount, charged_on))
                continue
            by_kind[ENTRY_KINDS[kind]] += amount
            if kind in LINE_KINDS:
                position += 1
                lines.append((bill_id, position, LINE_KINDS[kind], description or LINE_KINDS[kind].label, "",
                              Decimal(1), amount, amount, "USD"))
        if not bill.open:
            continue  # paid in the old system: shown, not owed
        source = opening_source(prefix, "bill", bill_id)
        for entry_kind, amount in by_kind.items():
            postings.append(Posting(account_id=bill.account_id, bill_id=bill_id, kind=entry_kind,
                                    posted_on=bill.bill_date, amount=amount, source=source,
                                    description=f"Bill {bill.number} (previous system)"))
        # Each late charge the old system charged stays its own row: on its own day where the export gives it (the
        # day before the cutover where it does not), with its own words.
        for number, (kind, description, amount, charged_on) in enumerate(late_charges, start=1):
            postings.append(Posting(
                account_id=bill.account_id, bill_id=bill_id, kind=ENTRY_KINDS[kind],
                posted_on=charged_on or max(eve, bill.bill_date), amount=amount, source=f"{source}:late:{number}",
                description=f"{description or kind.capitalize()} — bill {bill.number} (previous system)"))
    line_columns = ("bill_id", "position", "kind", "description", "citation", "quantity", "rate", "amount",
                    "amount_currency")
    if is_postgres():
        copy_rows(BillLine, line_columns, lines)
    else:
        BillLine.objects.bulk_create([BillLine(**dict(zip(line_columns, line, strict=True))) for line in lines],
                                     batch_size=5000)
    credits: dict[int, tuple[Decimal, str]] = {}
    deposits = []
    for item in items:
        if item.kind == "credit":
            amount, words = credits.get(item.account_id, (ZERO, ""))
            credits[item.account_id] = (amount + item.amount, words or item.description)
        else:
            deposits.append(Deposit(account_id=item.account_id, code=DEPOSIT_CODE, citation="",
                                    description=item.description or "Deposit held (previous system)",
                                    amount=Money(item.amount, "USD"), received_on=eve,
                                    reference="previous system"))
    postings.extend(Posting(account_id=account_id, kind=LedgerEntry.Kind.CREDIT, posted_on=eve, amount=-amount,
                            source=opening_source(prefix, "credit", account_id),
                            description=words or "Credit (previous system)")
                    for account_id, (amount, words) in credits.items())
    # Deposits without a history row: they are opening facts of the books, like the bills.
    Deposit.objects.bulk_create(deposits, batch_size=2000)
    postings.extend(Posting(account_id=d.account_id, kind=LedgerEntry.Kind.DEPOSIT, posted_on=eve,
                            amount=-d.amount.amount, source=opening_source(prefix, "deposit", d.pk),
                            description=d.description) for d in deposits)
    ledger_post_many(postings, fresh=True)
    prior = [(p.account_id, p.paid_on, p.amount, "USD", p.reference, prefix) for p in payments]
    columns = ("account_id", "paid_on", "amount", "amount_currency", "reference", "conversion")
    if is_postgres():
        copy_rows(PriorPayment, columns, prior)
    else:
        PriorPayment.objects.bulk_create([PriorPayment(**dict(zip(columns, row, strict=True))) for row in prior],
                                         batch_size=5000)
    PriorRelevy.objects.bulk_create([PriorRelevy(account_id=r.account_id, relevied_on=r.relevied_on,
                                                 tax_roll=r.tax_roll, amount=Money(r.amount, "USD"), conversion=prefix)
                                     for r in relevies], batch_size=5000)
    return OpeningWritten(bills=len(ids), lines=len(lines), entries=len(postings), deposits=len(deposits),
                          payments=len(prior))


def accounts_with_books(account_ids: list[int]) -> set[int]:
    """The accounts among these with a bill or a ledger row here already (opening books are only for the others)."""
    with_books: set[int] = set()
    for chunk in chunked(account_ids, 5000):
        ids = list(chunk)
        with_books.update(LedgerEntry.objects.filter(account_id__any=ids).values_list("account_id", flat=True)
                          .distinct().order_by())
        with_books.update(Bill.objects.filter(account_id__any=ids).values_list("account_id", flat=True)
                          .distinct().order_by())
    return with_books


def _refuse_accounts_with_books(account_ids: list[int], accounts: dict) -> None:
    with_books = accounts_with_books(account_ids)
    if with_books:
        numbers = sorted(accounts[account_id][0] for account_id in with_books)
        raise ApplicationError(errors=[FieldError(field="account_no", message=(
            f"account {number} already has bills or ledger entries here; opening balances open an account's "
            "books, so it is left out of the file or its books are corrected by hand")) for number in numbers[:50]],
            unlisted=max(len(numbers) - 50, 0))


def opening_books_remove(*, prefix: str) -> OpeningWritten:
    """Delete every row the conversion under ``prefix`` wrote, in the caller's transaction. Refused, deleting
    nothing, once anything else was recorded on its accounts (a payment, a bill of ours, a late charge)."""
    entries = LedgerEntry.objects.filter(source__startswith=prefix)
    bills, payments = Bill.objects.filter(conversion=prefix), PriorPayment.objects.filter(conversion=prefix)
    ours = (Q(account_id__in=Subquery(entries.values("account_id"))) | Q(account_id__in=Subquery(bills.values(
        "account_id"))) | Q(account_id__in=Subquery(payments.values("account_id"))))
    account_ids = sorted(set(LedgerEntry.objects.filter(source__startswith=prefix).values_list("account_id", flat=True)
                             .distinct().order_by())
                         | set(bills.values_list("account_id", flat=True).distinct().order_by())
                         | set(payments.values_list("account_id", flat=True).distinct().order_by()))
    for chunk in chunked(account_ids, 5000):  # in id order, as a run locks them
        lock_in_order(Account.objects.filter(id__any=list(chunk)), "id")
    others = LedgerEntry.objects.filter(ours).exclude(source__startswith=prefix)
    other_bills = Bill.objects.filter(ours, converted_on__isnull=True)
    found = others.order_by("posted_on", "id").values_list("account__account_no", "kind", "posted_on").first()
    if found is None:
        found = (other_bills.order_by("bill_date", "id").values_list("account__account_no", "number", "bill_date")
                 .first())
    if found is not None:
        count = others.count() + other_bills.count()
        raise ApplicationError(
            f"{count} entr{'y' if count == 1 else 'ies'} of ours since (the first: account {found[0]}, {found[1]} of "
            f"{found[2]}); a conversion is rolled back only while its accounts have nothing else on their books",
            field="batch")
    deposit_ids = [int(source.rsplit(":", 1)[1]) for source in entries.filter(
        kind=LedgerEntry.Kind.DEPOSIT).values_list("source", flat=True)]
    counts = defaultdict(int)
    with connection.cursor() as cursor:
        if is_postgres():
            cursor.execute("SET LOCAL billing.conversion_rollback = 'on'")
        counts["entries"] = entries._raw_delete(using="default")
        counts["lines"] = BillLine.objects.filter(bill__conversion=prefix)._raw_delete(using="default")
        BillFigures.objects.filter(bill__conversion=prefix)._raw_delete(using="default")  # derived, kept on a read
        counts["bills"] = bills._raw_delete(using="default")
        counts["payments"] = payments._raw_delete(using="default")
        PriorRelevy.objects.filter(conversion=prefix).delete()
        for chunk in chunked(deposit_ids, 5000):
            Deposit.history.filter(id__any=list(chunk)).delete()
            counts["deposits"] += Deposit.objects.filter(id__any=list(chunk))._raw_delete(using="default")
        if is_postgres():
            cursor.execute("SET LOCAL billing.conversion_rollback = 'off'")
    # Derived, never facts: the accounts' kept standings are worked out again on the next read.
    for chunk in chunked(account_ids, 5000):
        AccountStanding.objects.filter(account_id__any=list(chunk)).delete()
    return OpeningWritten(bills=counts["bills"], lines=counts["lines"], entries=counts["entries"],
                          deposits=counts["deposits"], payments=counts["payments"])
