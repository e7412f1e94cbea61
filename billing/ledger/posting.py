"""The one writer of ledger rows.

Every ``LedgerEntry`` is written here, one at a time (``ledger_post``) or in bulk (``ledger_post_many``;
COPY on PostgreSQL for a billing run's rows). Each row names its **source**, the fact it records, and the
database keeps ``UNIQUE(source, kind)``:

* ``bill:<id>``: a bill's water charges (kind ``water``) and, later, its void (kind ``void``);
* ``charge:<id>``: a pending charge carried on a bill (kind ``fee`` or ``fine``), so several fees and fines
  sit on one bill, each once;
* ``payment:<id>`` and ``adjustment:<id>``: a payment, a credit or debit memo;
* ``reversal:<id>``: a payment taken back (kind ``payment_reversal``, correcting the payment's entry);
* ``bill:<id>@<date>``: the late charge of a bill on a day (kind ``penalty`` or ``interest``: a penalty and
  an interest charge may fall on one bill and day, each once);
* ``penalty:<id>#<n>`` and ``interest:<id>#<n>``: the n-th correction of a posted penalty (kind
  ``penalty_correction``) or interest charge (kind ``interest_correction``);
* ``deposit:<id>``: a refundable deposit received (kind ``deposit``) and its refund (kind ``deposit_refund``);
* ``refund:<id>``: a credit balance paid back to the customer by check (kind ``refund``);
* ``invoice:<id>``: a one-off invoice for a fee, due on its own date (kind ``fee``, on no bill).

**A closed day stays closed.** A row dated on a day whose books are closed (the day's close) is written with its
own date, which the balances and late charges read, and reaches the general ledger on the day it is entered (or the
first open day after, ``booked_on``), so the journal of a closed day never changes.

A retry that posts the same source again therefore never posts twice: ``ledger_post`` returns the row
already there, ``ledger_post_many`` skips it (except with COPY, used only for rows of bills created in the
same transaction). Nothing else in the code base creates ledger rows (``tests/billing/test_ledger_writer.py``
checks the source tree for it).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone
from djmoney.money import Money

from core.clock import today
from core.db import copy_rows, is_postgres
from core.errors import ApplicationError, Conflict

from ..models import LedgerEntry


def bill_source(bill_id: int) -> str:
    return f"bill:{bill_id}"


def charge_source(charge_id: int) -> str:
    return f"charge:{charge_id}"


def payment_source(payment_id: int) -> str:
    return f"payment:{payment_id}"


def reversal_source(reversal_id: int) -> str:
    """A payment reversal: a returned check, a misposted payment, one entered in error."""
    return f"reversal:{reversal_id}"


def adjustment_source(adjustment_id: int) -> str:
    return f"adjustment:{adjustment_id}"


def deposit_source(deposit_id: int) -> str:
    return f"deposit:{deposit_id}"


def refund_source(refund_id: int) -> str:
    return f"refund:{refund_id}"


def invoice_source(invoice_id: int) -> str:
    return f"invoice:{invoice_id}"


def late_charge_source(bill_id: int, day: date) -> str:
    """A penalty or interest charge of a bill on a day."""
    return f"bill:{bill_id}@{day.isoformat()}"


def correction_source(late_charge_id: int, number: int, *, kind: str = "penalty") -> str:
    """The ``number``-th correction of a posted late charge of ``kind`` (``penalty`` or ``interest``)."""
    return f"{kind}:{late_charge_id}#{number}"


@dataclass(slots=True)  # not frozen: a run builds one per bill, and frozen init costs twice as much
class Posting:
    """One ledger row to write: debits positive, credits negative (the kind's sign is checked by the database)."""

    account_id: int
    kind: str
    posted_on: date
    amount: Decimal
    source: str
    bill_id: int | None = None
    citation: str = ""
    description: str = ""
    payment_id: int | None = None
    adjustment_id: int | None = None
    corrects_id: int | None = None
    due_on: date | None = None  # a charge on no bill due later than it is posted (an invoice)
    booked_on: date | None = None  # set by the writer: a late entry on a closed day reaches the books later

    def entry(self) -> LedgerEntry:
        return LedgerEntry(**_fields(self))


COLUMNS = ("account_id", "kind", "posted_on", "amount", "amount_currency", "source", "bill_id", "citation",
           "description", "payment_id", "adjustment_id", "corrects_id", "due_on", "booked_on", "created_at")

# The days whose books are closed (the day's close: ``office``), asked as ``closed_days(since)`` → the closed days on
# or after ``since``; registered by the part of the office that closes them. None registered: no day is closed.
_closed_days: list = []


def closed_days_register(closed_days) -> None:
    _closed_days[:] = [closed_days]


def _booked(postings: Sequence[Posting]) -> None:
    """Give each posting dated on a closed day the day it reaches the books (``LedgerEntry.booked_on``): the day it
    is entered, or the first open day after it when that is closed too, so a closed day's journal never changes;
    the others keep their own day."""
    if not _closed_days or not postings:
        return
    closed = _closed_days[0](min(p.posted_on for p in postings))
    if not closed:
        return
    entered = today()
    for p in postings:
        if p.posted_on in closed:
            day = max(p.posted_on, entered)
            while day in closed:
                day += timedelta(days=1)
            p.booked_on = day


CITATION_MAX = LedgerEntry._meta.get_field("citation").max_length


class PostingConflict(Conflict):
    """The same source and kind posted again with other facts: a retry posts the same row, never another."""


def _checked(posting: Posting) -> Posting:
    if len(posting.citation) > CITATION_MAX:
        raise ApplicationError(f"the citation '{posting.citation}' is {len(posting.citation)} characters; a ledger "
                               f"row keeps at most {CITATION_MAX}, and a citation is never cut short", field="citation")
    return posting


def _same(existing: LedgerEntry, posting: Posting) -> None:
    """A row already posted for the source must be the one asked for: a different amount, day, account or bill
    is a mistake in the caller, never quietly answered with the old row."""
    differs = [name for name in ("amount", "posted_on", "account", "bill")
               if _value(posting, name) != _value(existing, name)]
    if differs:
        raise PostingConflict(
            f"{posting.source} ({posting.kind}) is already posted with "
            + ", ".join(f"{name} {_value(existing, name)}" for name in differs)
            + "; posting it again with " + ", ".join(f"{name} {_value(posting, name)}" for name in differs)
            + " would change a fact the ledger already holds", field="source")


def _value(row, name: str):
    if name == "amount":
        return row.amount if isinstance(row, Posting) else row.amount.amount
    return getattr(row, {"account": "account_id", "bill": "bill_id"}.get(name, name))


def ledger_post(posting: Posting) -> LedgerEntry:
    """Write one row, or return the row already written for the same source and kind (refused when that row
    differs from the one asked for)."""
    _checked(posting)
    existing = LedgerEntry.objects.filter(source=posting.source, kind=posting.kind).first()
    if existing is not None:
        _same(existing, posting)
        return existing
    _booked([posting])
    try:
        with transaction.atomic():
            return LedgerEntry.objects.create(**_fields(posting))
    except IntegrityError:
        # Written by a concurrent retry between the check and the insert; its row is the one.
        existing = LedgerEntry.objects.filter(source=posting.source, kind=posting.kind).first()
        if existing is None:
            raise
        _same(existing, posting)
        return existing


def ledger_post_many(postings: Sequence[Posting], *, fresh: bool = False) -> int:
    """Write many rows; rows whose source and kind are already posted are skipped. ``fresh`` says the caller
    knows none is posted (a run's new bills; late charges compared with the books under the accounts'
    locks), which skips the check and lets PostgreSQL take them with COPY; the unique key still holds."""
    if not postings:
        return 0
    for posting in postings:
        _checked(posting)
    _booked(postings)
    if fresh and is_postgres():
        now = timezone.now()
        copy_rows(LedgerEntry, COLUMNS, [
            (p.account_id, p.kind, p.posted_on, p.amount, "USD", p.source, p.bill_id, p.citation,
             p.description[:200], p.payment_id, p.adjustment_id, p.corrects_id, p.due_on, p.booked_on, now)
            for p in postings])
        return len(postings)
    if not fresh:
        sources = sorted({p.source for p in postings})
        posted: dict[tuple[str, str], Decimal] = {}
        for start in range(0, len(sources), 5000):
            posted.update(((source, kind), amount) for source, kind, amount in LedgerEntry.objects.filter(
                source__in=sources[start:start + 5000]).values_list("source", "kind", "amount"))
        for p in postings:
            if (p.source, p.kind) in posted and posted[(p.source, p.kind)] != p.amount:
                raise PostingConflict(f"{p.source} ({p.kind}) is already posted with amount "
                                      f"{posted[(p.source, p.kind)]}; posting it again with amount {p.amount} would "
                                      "change a fact the ledger already holds", field="source")
        postings = [p for p in postings if (p.source, p.kind) not in posted]
    LedgerEntry.objects.bulk_create([p.entry() for p in postings], batch_size=5000)
    return len(postings)


def _fields(posting: Posting) -> dict:
    return {"account_id": posting.account_id, "kind": posting.kind, "posted_on": posting.posted_on,
            "amount": Money(posting.amount, "USD"), "source": posting.source, "bill_id": posting.bill_id,
            "citation": posting.citation, "description": posting.description[:200],
            "payment_id": posting.payment_id, "adjustment_id": posting.adjustment_id,
            "corrects_id": posting.corrects_id, "due_on": posting.due_on, "booked_on": posting.booked_on}
