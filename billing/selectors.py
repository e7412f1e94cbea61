"""Reads: statements, balances and what a bill tells the customer to pay."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.db.models import F, Prefetch, Q

from accounts.models import Account
from core.money import ZERO, fmt_amount, fmt_rate

from .ledger.allocation import (
    CATEGORY,
    PENALTY_KINDS,
    AccountBalance,
    BillBalance,
    Entry,
    Ledger,
    allocate,
    key_bill_id,
    key_entry_id,
    replay_order,
)
from .ledger.selectors import account_balances, entries_for_accounts
from .models import Bill, BillLine, BillMessage, Deposit, LedgerEntry, Payment
from .ordinance import Ordinance, ordinance_on, payment_order
from .penalties.plan import waived_charges
from .penalties.rules import BillTerms, penalties_owed


def bills_using_reading(*, reading_id: int) -> list[Bill]:
    """The bills in force (not void) that used the reading as their start or end reading, by number.

    Registered with meters (``apps.py``): such a reading is final, since what those bills say rests on it.
    """
    return list(Bill.objects.exclude(status=Bill.Status.VOID)
                .filter(Q(start_reading_id=reading_id) | Q(end_reading_id=reading_id)).order_by("number"))


def bill_line_data(line) -> dict:
    """A bill line as the statement JSON and the API give it: the quantity as stored, the rate by
    ``fmt_rate`` (``3.10``), the amount by ``fmt_amount``."""
    return {"kind": line.kind, "description": line.description, "citation": line.citation,
            "quantity": f"{line.quantity.normalize():f}", "rate": fmt_rate(line.rate),
            "amount": fmt_amount(line.amount)}


def account_statement(*, account: Account, as_of: date, state: AccountBalance | None = None) -> dict:
    """The account as of a date, in the statement JSON of `statement ACCOUNT_NO --json` (docs/clerks-guide.md).

    A bill's ``balance`` is its own charges still unpaid (penalties and interest are listed under
    ``charges``, each net of its corrections), and the account's ``balance`` is everything unpaid less any
    unapplied credit. A refundable deposit is listed under ``charges`` as what it is (kind ``deposit``, the
    money held, negative as on the ledger; kind ``deposit_refund`` when returned) and is no part of the
    balance. ``state``: the account's allocation through ``as_of``, when the caller has it already.
    """
    if state is None:
        state = account_balances([account.id], through=as_of)[account.id]
    # Lines by position within each bill: ordering by the bill (the model's default) would join the bills and
    # their accounts only to sort by them.
    bills = (Bill.objects.filter(account=account, bill_date__lte=as_of).exclude(status=Bill.Status.VOID)
             .prefetch_related(Prefetch("lines", queryset=BillLine.objects.order_by("position")))
             .order_by("bill_date", "id"))
    out_bills = []
    for bill in bills:
        balance = state.bills.get((bill.bill_date, bill.id))
        out_bills.append({
            "number": bill.number, "bill_date": bill.bill_date.isoformat(), "due_date": bill.due_date.isoformat(),
            "period_start": bill.period_start.isoformat(), "period_end": bill.period_end.isoformat(),
            "gallons": bill.gallons, "total": fmt_amount(bill.total.amount),
            "balance": fmt_amount(balance.unpaid_principal if balance else ZERO),
            "estimated": bill.estimated,
            "lines": [bill_line_data(line) for line in bill.lines.all()],
        })
    payments = [{"paid_on": p.paid_on.isoformat(), "amount": fmt_amount(p.amount.amount), "reference": p.reference}
                for p in Payment.objects.filter(account=account, paid_on__lte=as_of).order_by("paid_on", "id")]
    return {"account_no": account.account_no, "as_of": as_of.isoformat(), "balance": fmt_amount(state.balance),
            "bills": out_bills, "charges": account_charges(account=account, as_of=as_of), "payments": payments}


LATE_CORRECTIONS = (LedgerEntry.Kind.PENALTY_CORRECTION, LedgerEntry.Kind.INTEREST_CORRECTION)


def account_charges(*, account: Account, as_of: date) -> list[dict]:
    """The statement's ``charges``: the account's entries through ``as_of`` other than water, payments and a
    bill's own fees and fines (listed among its lines), oldest first; a late charge as it stands after its
    corrections, and not at all when corrected to nothing. Read in one query, the corrections with them."""
    rows = list(LedgerEntry.objects.filter(account=account, posted_on__lte=as_of)
                .exclude(kind__in=[LedgerEntry.Kind.WATER, LedgerEntry.Kind.PAYMENT])
                # A fee or fine a bill carries is one of the bill's lines, in its total: listed there, once.
                .exclude(kind__in=[LedgerEntry.Kind.FEE, LedgerEntry.Kind.FINE], bill__isnull=False)
                .order_by("posted_on", "id")
                .values_list("id", "kind", "posted_on", "amount", "citation", "description", "bill__number",
                             "corrects_id"))
    corrected: dict[int, Decimal] = defaultdict(Decimal)  # a late charge's corrections, by the charge's id
    for _, kind, _, amount, *_, corrects_id in rows:
        if kind in LATE_CORRECTIONS:
            corrected[corrects_id] += amount
    charges = []
    for entry_id, kind, posted_on, amount, citation, description, bill_number, _ in rows:
        if kind in LATE_CORRECTIONS:
            continue
        amount += corrected.get(entry_id, ZERO)
        if kind in (LedgerEntry.Kind.PENALTY, LedgerEntry.Kind.INTEREST) and not amount:
            continue
        charges.append({"kind": kind, "date": posted_on.isoformat(), "amount": fmt_amount(amount),
                        "citation": citation, "description": description, "bill": bill_number})
    return charges


def account_deposits(*, account: Account, as_of: date) -> list[dict]:
    """The deposits received for the account by a date, as the portal shows them: held, or refunded (and
    when) as the account stood on that date."""
    out = []
    for deposit in Deposit.objects.filter(account=account, received_on__lte=as_of).order_by("received_on", "id"):
        refunded = deposit.refunded_on is not None and deposit.refunded_on <= as_of
        out.append({"description": deposit.description, "citation": deposit.citation,
                    "received_on": deposit.received_on.isoformat(), "amount": fmt_amount(deposit.amount.amount),
                    "status": "refunded" if refunded else "held",
                    "refunded_on": deposit.refunded_on.isoformat() if refunded else None})
    return out


# --- What a bill tells the customer -----------------------------------------------------------------------

@dataclass(frozen=True)
class BillSummary:
    """The money box of a bill, as it stood when the bill was issued.

    ``previous_balance`` + ``payments`` + ``penalties`` + ``other`` + ``current`` = ``total_due``; of that,
    ``past_due`` is what earlier bills owed after their due dates. ``late_total`` is what the account will
    owe on ``late_on`` (the first day this bill draws a late charge: the day after the due date, or later
    where the ordinance counts from the bill date) if nothing more is paid: every penalty that falls by
    then — this bill's first, and those earlier unpaid bills draw meanwhile — added to the total due.
    """

    previous_date: date | None
    previous_balance: Decimal
    payments: Decimal
    penalties: Decimal
    other: Decimal
    current: Decimal
    past_due: Decimal
    total_due: Decimal
    late_on: date
    late_total: Decimal

    @property
    def late_after(self) -> date:
        """The last day the bill may be paid without a late charge ("If paid after …")."""
        return self.late_on - timedelta(days=1)


def bill_summaries(*, bills: list[Bill], ordinance: Ordinance | None = None) -> dict[int, BillSummary]:
    """Summaries of many bills in a fixed number of queries.

    A bill says what was known when it was issued: entries dated on or before its issue date *and*
    recorded by the time it was issued (a payment dated earlier but imported later does not change a
    reprint). Penalties are the ones the facts make owed (``billing.penalties.rules.penalties_owed``), so a bill
    issued before the night's assessment ran still counts the penalty due on its own date. ``ordinance``:
    the installed ordinance when the caller has it already (of any date: only its penalty scheme and payment
    order are read, and neither changes with the date).
    """
    if not bills:
        return {}
    last_issued = max(b.issued_on for b in bills)
    if ordinance is None:
        ordinance = ordinance_on(last_issued)
    scheme, order = ordinance.penalties, ordinance.payment_order
    account_ids = sorted({b.account_id for b in bills})
    entries = entries_for_accounts(account_ids, through=last_issued, recorded_at=True)
    others: dict[int, list[tuple]] = defaultdict(list)
    for row in Bill.objects.filter(account_id__in=account_ids).order_by().values_list(
            "id", "account_id", "bill_date", "issued_on", "due_date", "status", "created_at", "voided_at",
            "converted_on"):
        others[row[1]].append(row)
    waived = waived_charges(account_ids=account_ids)
    return {bill.pk: _bill_summary(bill, entries.get(bill.account_id, []), others[bill.account_id],
                                   scheme=scheme, order=order, waived=waived.get(bill.account_id, {}))
            for bill in bills}


def _bill_summary(bill: Bill, entries: list[Entry], account_bills: list[tuple], *, scheme, order: str,
                  waived: dict) -> BillSummary:
    own = (bill.bill_date, bill.pk)
    # The moment of issue: the bill's row and its own charges are written together.
    issued_at = max([bill.created_at, *(e.recorded_at for e in entries if e.bill_key == own and e.recorded_at)])
    # Bills as the account stood when this one was issued: issued by then, and not yet voided.
    live = [row for row in account_bills if row[6] <= issued_at and (row[7] is None or row[7] > issued_at)]
    previous_date = max((row[3] for row in live if row[2] < bill.bill_date), default=None)
    due_of = {(row[2], row[0]): row[4] for row in live}
    converted_on = {(row[2], row[0]): row[8] for row in live if row[8] is not None}
    facts = [e for e in entries if e.kind not in PENALTY_KINDS and e.posted_on <= bill.issued_on
             and (e.recorded_at is None or e.recorded_at <= issued_at)]
    late_on = first_late_day(scheme, bill_date=bill.bill_date, due_date=bill.due_date)
    # A charge waived by the time of issue was not owed on the bill (a waiver approved later does not change it).
    owed = penalties_owed(entries=facts, scheme=scheme, order=order, through=late_on,
                          bills=[BillTerms(key=key, bill_date=key[0], due_date=due, charges_from=converted_on.get(key))
                                 for key, due in due_of.items()],
                          waived={key for key, w in waived.items() if w.decided_at <= issued_at})
    penalties = [Entry(kind=p.due.kind, posted_on=p.due.on, amount=p.amount, bill_key=p.bill_key) for p in owed]
    at_issue = facts + [p for p in penalties if p.posted_on <= bill.issued_on]
    cutoff = previous_date or (bill.issued_on - timedelta(days=1))
    payments = penalty_total = other = current = ZERO
    for e in at_issue:
        if e.posted_on <= cutoff:
            continue
        if e.bill_key == own and e.kind in ("water", "fee", "fine"):
            current += e.amount
        elif e.kind == "payment":
            payments += e.amount
        elif CATEGORY.get(e.kind) in ("penalty", "interest"):
            penalty_total += e.amount
        else:
            other += e.amount
    state = allocate(at_issue, order=order)
    past_due = sum((balance.unpaid_total for key, balance in state.bills.items()
                    if key != own and key in due_of and due_of[key] < bill.issued_on), ZERO)
    return BillSummary(
        previous_date=previous_date,
        previous_balance=allocate([e for e in at_issue if e.posted_on <= cutoff], order=order).balance,
        payments=payments, penalties=penalty_total, other=other, current=current, past_due=past_due,
        total_due=state.balance, late_on=late_on,
        late_total=allocate(facts + penalties, order=order).balance if state.balance > ZERO else state.balance)


def first_late_day(scheme, *, bill_date: date, due_date: date) -> date:
    """The first day a bill draws a late charge under the preset's scheme: the day after its due date for
    most, later where the ordinance counts from the bill date (South Farmingdale § 4.2: bill date + 31
    days); the day after the due date where the scheme charges none."""
    dues = scheme.dates(bill_date=bill_date, due_date=due_date, through=due_date + timedelta(days=366))
    return min((due.on for due in dues), default=due_date + timedelta(days=1))


def bill_status(balance) -> str:
    """Paid, partly paid or unpaid, from a bill's balance in the ledger allocation."""
    if balance is None or balance.unpaid_total <= ZERO:
        return "paid"
    return "partly paid" if balance.unpaid_total < balance.charged_total else "unpaid"


@dataclass(frozen=True)
class AmountDue:
    """What an account owes today and by when: ``past_due`` is owed now; the rest by ``due_date``."""

    amount: Decimal
    past_due: Decimal
    due_date: date | None  # the next due date of an unpaid bill not yet past due; None when none


def account_amounts_due(*, account_ids, as_of: date, balances: dict[int, AccountBalance] | None = None,
                        due_dates: dict[int, date] | None = None) -> dict[int, AmountDue]:
    """What each account owes on ``as_of``; ``balances``: their allocations through ``as_of``, and
    ``due_dates``: the due date of each of their live bills by id, when the caller has them already. A charge on
    no bill (an invoice, a debit memo) falls due on its own due date (``lone_due_dates``)."""
    if balances is None:
        balances = account_balances(account_ids, through=as_of)
    out = {}
    for account_id, state, items in _unpaid_items(balances, due_dates=due_dates):
        past_due = sum((unpaid for due, unpaid in items if due < as_of), ZERO)
        amount = max(state.balance, ZERO)
        out[account_id] = AmountDue(amount=amount, past_due=min(past_due, amount),
                                    due_date=min((due for due, _ in items if due >= as_of), default=None))
    return out


def account_amounts_due_by(*, account_ids, as_of: date, by: date) -> dict[int, Decimal]:
    """What each account owed on ``as_of`` of what falls due on or before ``by`` (less any credit it has): the
    amount an autopay debit settling on ``by`` may take."""
    balances = account_balances(account_ids, through=as_of)
    return {account_id: max(min(sum((unpaid for due, unpaid in items if due <= by), ZERO) - state.credit,
                                state.balance), ZERO)
            for account_id, state, items in _unpaid_items(balances)}


def _unpaid_items(balances: dict[int, AccountBalance], *, due_dates: dict[int, date] | None = None):
    """(account id, allocation, [(due date, unpaid)]) for each account: its bills and charges on no bill with
    something unpaid, each with the day it falls due."""
    if due_dates is None:
        due_dates = dict(Bill.objects.filter(account_id__in=list(balances)).exclude(status=Bill.Status.VOID)
                         .order_by().values_list("id", "due_date"))
    lone_due = lone_due_dates(states=balances.values())
    for account_id, state in balances.items():
        items = []
        for key, balance in state.bills.items():
            if balance.unpaid_total <= ZERO:
                continue
            bill_id = key_bill_id(key)
            due = due_dates.get(bill_id) if bill_id is not None else lone_due.get(key_entry_id(key), key[0])
            if due is not None:
                items.append((due, balance.unpaid_total))
        yield account_id, state, items


def lone_due_dates(*, states) -> dict[int, date]:
    """The due dates of the unpaid charges on no bill in these allocations that fall due after the day they were
    posted (an invoice's due date), by ledger entry id; the others are due the day they were posted."""
    entry_ids = [entry_id for state in states for entry_id, (_, balance) in state.lone().items()
                 if balance.unpaid_total > ZERO]
    if not entry_ids:
        return {}
    return dict(LedgerEntry.objects.filter(id__in=entry_ids, due_on__isnull=False).values_list("id", "due_on"))


def bill_balances(*, account: Account, as_of: date, state: AccountBalance | None = None) -> dict[int, BillBalance]:
    """Each bill's standing in the ledger allocation as of a date, by bill id (from ``state``, the account's
    allocation through ``as_of``, when the caller has it already)."""
    if state is None:
        state = account_balances([account.id], through=as_of)[account.id]
    return state.on_bills()


def consumption_history(*, account_ids, through: date) -> dict[int, list[tuple[date, int]]]:
    """(bill date, gallons) of every live bill of these accounts dated on or before ``through`` that says what was
    used (``Bill.has_usage``: not a converted open balance alone)."""
    out: dict[int, list[tuple[date, int]]] = defaultdict(list)
    for account_id, bill_date, gallons in (Bill.objects.filter(account_id__in=account_ids, bill_date__lte=through)
                                           .exclude(status=Bill.Status.VOID)
                                           .exclude(converted_on__isnull=False, period_end=F("period_start"))
                                           .order_by("bill_date").values_list("account_id", "bill_date", "gallons")):
        out[account_id].append((bill_date, gallons))
    return out


def book_bills(*, book: int, bill_date: date):
    """A book's live bills of one bill date in account order, as the mail house wants them."""
    return (Bill.objects.filter(account__book=book, bill_date=bill_date).exclude(status=Bill.Status.VOID)
            .order_by("account__account_no"))


# --- The account's ledger as the customer would understand it ----------------------------------------------

CATEGORY_WORDS = {"water": "water", "fee": "fees", "fine": "fine", "interest": "interest", "penalty": "penalty"}


@dataclass(frozen=True)
class PaidPart:
    """Part of what a credit paid: a charge category of one bill (or of a charge on no bill)."""

    what: str  # "bill 202602-1-00001" or the lone charge's description
    bill_id: int | None
    category: str  # water, fee, fine, interest or penalty
    amount: Decimal
    applied_on: date | None  # set when later than the credit's own day (a credit left over)

    @property
    def category_words(self) -> str:
        return CATEGORY_WORDS.get(self.category, self.category)


@dataclass(frozen=True)
class LedgerRow:
    """One line of the account's ledger: a bill issued, a fee, a late charge net of its corrections, a
    payment, a memo, a void or a payment reversal; ``amount`` is what it adds to the balance (a payment is
    negative) and ``balance`` the account's balance after it."""

    on: date
    kind: str  # "bill", or the ledger entry's kind
    label: str
    detail: str
    amount: Decimal
    balance: Decimal
    bill_id: int | None = None
    bill_number: str = ""
    paid: tuple[PaidPart, ...] = ()  # what a payment or credit paid, from the ledger allocation
    waiting: Decimal = ZERO  # what is still unapplied of it (a credit on the account)
    reversed_on: date | None = None  # a payment later reversed
    entry_id: int | None = None  # the ledger entry of a row that is one (a late charge, a payment, a memo…)


def account_ledger(*, account: Account, as_of: date) -> list[LedgerRow]:
    """The account's ledger through ``as_of``, oldest first, with the running balance after each row and,
    under each payment or credit, what it paid: which bill, which charge, how much, as the ledger
    allocation applied it (``Ledger(record=True)``), a credit left over going to later charges first in,
    first out. The final balance is ``account_statement``'s. A refundable deposit is not owed and is not
    here (the statement lists it)."""
    return account_ledger_and_state(account=account, as_of=as_of)[0]


def account_ledger_and_state(*, account: Account, as_of: date) -> tuple[list[LedgerRow], AccountBalance]:
    """``account_ledger``, and the account's allocation through ``as_of`` from the same replay (what
    ``account_balances`` gives), for a page that shows both."""
    entries = entries_for_accounts([account.id], through=as_of).get(account.id, [])
    ledger = Ledger(payment_order(), record=True)
    for entry in sorted(entries, key=replay_order):
        ledger.post(entry)
    state = ledger.state()
    rows = list(LedgerEntry.objects.filter(account=account, posted_on__lte=as_of)
                .exclude(kind__in=[LedgerEntry.Kind.DEPOSIT, LedgerEntry.Kind.DEPOSIT_REFUND])
                .values_list("id", "kind", "posted_on", "amount", "bill_id", "bill__number", "bill__status",
                             "description", "citation", "corrects_id", "payment__reference"))
    kind_words = dict(LedgerEntry.Kind.choices)
    bill_numbers = {bill_id: number for _, _, _, _, bill_id, number, *_ in rows if bill_id}
    lone_charges = {entry_id: description for entry_id, kind, _, _, bill_id, _, _, description, *_ in rows
                    if bill_id is None and kind in ("fee", "fine", "debit", "refund")}
    corrections = (LedgerEntry.Kind.PENALTY_CORRECTION, LedgerEntry.Kind.INTEREST_CORRECTION)
    net: dict[int, Decimal] = defaultdict(Decimal)  # a late charge's corrections, by the charge
    reversed_on: dict[int, date] = {}  # a reversed payment's entry → the reversal's day
    for _entry_id, kind, posted_on, amount, *_, corrects_id, _ in rows:
        if kind in corrections and corrects_id:
            net[corrects_id] += amount
        elif kind == LedgerEntry.Kind.PAYMENT_REVERSAL and corrects_id:
            reversed_on[corrects_id] = posted_on

    def what(key: tuple) -> tuple[str, int | None]:
        if len(key) == 2:
            return f"bill {bill_numbers.get(key[1], key[1])}", key[1]
        return lone_charges.get(key[2], f"charge of {key[0]:%b %-d, %Y}"), None

    paid: dict[int, dict[tuple, list]] = defaultdict(dict)  # credit → (bill key, category, later day) → amount
    posted = {e.entry_id: e.posted_on for e in entries}
    for application in ledger.applications:
        later = application.applied_on if application.applied_on != posted.get(application.credit_id) else None
        parts = paid[application.credit_id]
        slot = (application.bill_key, application.category, later)
        parts[slot] = parts.get(slot, ZERO) + application.amount
    waiting = ledger.waiting()

    # One row per fact: a bill's own charges (water, its fees and fines) are one "bill issued" row.
    grouped: dict[tuple, list] = {}
    for row in rows:
        entry_id, kind, posted_on, amount, bill_id = row[:5]
        if kind in corrections:
            continue
        if bill_id and kind in ("water", "fee", "fine"):
            group = ("bill", bill_id, posted_on)
        else:
            group = ("entry", entry_id)
        grouped.setdefault(group, []).append(row)
    ordered = sorted(grouped.values(), key=lambda group: min(
        (r[2], r[1] not in CATEGORY, r[0]) for r in group))
    out, balance = [], ZERO
    for group in ordered:
        entry_id, kind, posted_on, amount, bill_id, number, status, description, citation, _, reference = group[0]
        amount = sum((r[3] for r in group), ZERO) + net.get(entry_id, ZERO)
        if kind in ("penalty", "interest") and not amount:
            continue  # corrected to nothing: it was never owed
        balance += amount
        label, detail = kind_words.get(kind, kind), description
        if len(group) > 1 or kind == "water":
            kind, label = "bill", f"Bill {number}" + (" (void)" if status == Bill.Status.VOID else "")
            detail = ", ".join(f"{kind_words[r[1]].lower()} {fmt_amount(r[3])}" for r in group) if len(group) > 1 \
                else kind_words["water"]
        elif kind == "payment":
            label = f"Payment {reference}" if reference else label
            detail = "" if detail == label else detail
        if citation and kind not in ("bill", "payment"):
            detail = f"{detail} ({citation})" if detail else citation
        parts = tuple(PaidPart(what=what(key)[0], bill_id=what(key)[1], category=category, amount=value,
                               applied_on=later)
                      for (key, category, later), value in paid.get(entry_id, {}).items())
        out.append(LedgerRow(on=posted_on, kind=kind, label=label, detail=detail, amount=amount, balance=balance,
                             bill_id=bill_id, bill_number=number or "", paid=parts,
                             waiting=waiting.get(entry_id, ZERO), reversed_on=reversed_on.get(entry_id),
                             entry_id=entry_id if kind != "bill" else None))
    return out, state


def bill_messages(bills) -> dict[int, str]:
    """Each bill's message: its book's, else the one for all books, of the messages whose dates take in the
    bill's date (the newest when several do); bills without one are left out. Two queries at most."""
    bills = list(bills)
    if not bills:
        return {}
    first, last = min(b.bill_date for b in bills), max(b.bill_date for b in bills)
    messages = list(BillMessage.objects.filter(first_bill_date__lte=last, last_bill_date__gte=first)
                    .order_by("-created_at", "-id"))
    if not messages:
        return {}
    out = {}
    for bill in bills:
        book = bill.account.book
        matching = [m for m in messages if m.first_bill_date <= bill.bill_date <= m.last_bill_date
                    and m.book in (book, None)]
        own = [m for m in matching if m.book == book]
        chosen = (own or matching)[:1]
        if chosen:
            out[bill.pk] = chosen[0].text
    return out
