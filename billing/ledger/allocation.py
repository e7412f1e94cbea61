"""Balances derived from ledger entries, with no database.

Entries are debits (water and fee charges, penalties, debit memos; positive) and credits (payments,
credit memos, voids; negative). Replaying them day by day gives every balance:

* **A day's charges, then its credits.** All charges posted on a day are added together and only then
  does any credit left over (an overpayment) go to them, so the order in which same-day charges were
  recorded never changes who owes what. Each credit is then applied as it comes.
* **What a payment pays** is the preset's policy (docs/ordinances.md, conventions). ``principal_first`` (the
  default): unpaid principal, oldest due first by each charge's own due date (a fine whose ordinance sets its
  time to pay is due then, even when a later bill carries it; ``Entry.due_on``), and among charges due the same
  day water rents, then sewer rents, then fines, then fees; only then late charges, oldest bill first, each bill's
  interest before its penalties; an unpaid penalty therefore never turns into principal that draws more penalties.
  Interest is kept apart from penalties because a rule may charge a penalty on unpaid interest (Washingtonville
  § 169-26: 5% of the amount due "including accumulated interest") but never on penalties; paying a bill's
  interest first pays first what can still draw a charge. ``penalties_first``: each bill's penalties, then its
  interest, then its water, fines and fees, oldest bill first, a fine with a time of its own at its own due date.
* **A credit tied to a bill** (a credit memo or a void) reduces that bill's own charges — water, then
  fees, then interest, then penalties; what the bill no longer owes because it was paid already becomes a
  credit for the account.
* **A correction of a late charge** (a payment dated before a penalty or interest charge was recorded
  after it) sits on the charge's own day and bill, so the replay is the one the charge would have had if
  the payment had been known in time.
* A payment applies on its own day; a charge posted later never takes money from an earlier payment,
  except a credit left over, which the next charge uses.

* **A deposit is not owed.** A refundable deposit (``deposit`` when received, ``deposit_refund`` when
  returned) is money held for the customer, not a payment and not a charge: it pays no bill, no penalty is
  computed on it, and the balance leaves it out (``DEPOSIT_KINDS``). The statement shows it apart.

Because allocation is a pure function of the entries up to a day, "the principal unpaid at the start of
day D" is the state after the entries posted before D, and replaying twice gives the same answer.

**What each credit paid** (``Ledger(order, record=True)``): every amount the replay takes from a credit
is kept as an ``Application`` — the credit's entry, the bill (or lone charge) and category it paid, how
much, and the day. A credit left over waits in the pool with the entries it came from, first in, first
out, so when a later charge uses it the part it takes is put down to the oldest credit still waiting.
Only the account page and the statement ask for this; the default replay keeps nothing extra.
"""

from collections import defaultdict, deque
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import NamedTuple

from core.money import ZERO

_DAY = timedelta(days=1)

PRINCIPAL_FIRST = "principal_first"
PENALTIES_FIRST = "penalties_first"
PAYMENT_ORDERS = (PRINCIPAL_FIRST, PENALTIES_FIRST)

# A bill's balance by category; ``interest`` joins a bill's dicts with its first interest charge, so the
# bills of a village that charges none show only these three.
CATEGORIES = ("penalty", "fee", "water")
# Principal: what a bill charges for service, fines and fees, in the order a payment pays them within a bill
# (office policy in every preset, docs/ordinances.md conventions): water rents first, so a customer who pays the
# rents is never open to a shut-off for a fee and a charge on "the unpaid water rent" is the smallest the
# payment allows; then fines, which ground a shut-off where fees do not (Washingtonville § 169-26); then fees.
# A fine is kept apart from fees (it joins a bill's dicts with its first fine, as interest does) because a
# section may charge a late charge on fees but never on a fine (Lansing § 141-17: water rent only), and a
# shut-off may be for a fine on its own days (Washingtonville § 169-26).
# A sewer rent (General Municipal Law art. 14-F), billed with the water, is paid right after the water rents of its
# day: it joins a bill's dicts with its first sewer charge, as a fine does.
PRINCIPAL_CATEGORIES = ("water", "sewer", "fine", "fee")
# Order of a bill's charges for ``penalties_first``: its late charges, then its principal in the same order.
PENALTIES_FIRST_ORDER = ("penalty", "interest", *PRINCIPAL_CATEGORIES)
# Order when a bill's own credit (memo, void) applies: the charges first.
CREDIT_ORDER = ("water", "sewer", "fee", "fine", "interest", "penalty")
# What a payment pays of each bill once every bill's principal is paid (``principal_first``).
LATE_ORDER = ("interest", "penalty")
# Charges by the category they add to; a correction adds (usually a negative amount) to what it corrects.
# A late charge the village's previous system charged before the cutover (``converted_penalty``,
# ``converted_interest``) is owed like one of ours, but it is a fact: the penalty replay never makes its own.
# A refund of the customer's credit is a charge not on a bill, paid by the credit it refunds (a refund is only
# made of a credit the account has), so it is never owed unless that credit is taken back later (a returned check).
CATEGORY = {"water": "water", "sewer": "sewer", "fee": "fee", "fine": "fine", "debit": "fee", "penalty": "penalty",
            "interest": "interest", "penalty_correction": "penalty", "interest_correction": "interest",
            "converted_penalty": "penalty", "converted_interest": "interest", "refund": "fee"}
# Late charges: owed because of when principal was paid, never principal themselves.
PENALTY_KINDS = ("penalty", "interest", "penalty_correction", "interest_correction")
# Money held for the customer (a refundable deposit and its refund): never part of what is owed.
DEPOSIT_KINDS = ("deposit", "deposit_refund")
# A payment taken back: not a charge. From its date on the payment and its reversal are both left out of the
# entries (``billing.ledger.selectors.entries_for_accounts``), as if the payment had never been made.
REVERSAL_KIND = "payment_reversal"
_NOT_OWED = frozenset((*DEPOSIT_KINDS, REVERSAL_KIND))  # neither a charge nor a credit in the replay


# What a leftover credit pays, pass by pass, under each payment order; and the same without the categories a bill has
# only once it is charged one (most ledgers never have a fine or a sewer rent), for each set of those charged.
_PASSES = {PRINCIPAL_FIRST: (PRINCIPAL_CATEGORIES, LATE_ORDER), PENALTIES_FIRST: (PENALTIES_FIRST_ORDER,)}
_JOINING = ("fine", "sewer")
_PASSES_WITH = {(order, frozenset(present)): tuple(tuple(cat for cat in cats
                                                         if cat not in _JOINING or cat in present) for cats in passes)
                for order, passes in _PASSES.items()
                for present in ((), ("fine",), ("sewer",), ("fine", "sewer"))}


@dataclass(frozen=True)
class Entry:
    kind: str  # water, fee, fine, penalty, interest, penalty_correction, interest_correction, debit, payment,
    # credit, void
    posted_on: date
    amount: Decimal
    bill_key: tuple | None = None  # (bill_date, bill_id) orders bills oldest first; None = not on a bill
    entry_id: int = 0
    recorded_at: datetime | None = None  # when it was written (a payment may be recorded days after its date)
    # When the charge falls due: its bill's due date, a fine's own time to pay (earlier than its bill's when the
    # ordinance sets one), an invoice's due date; None: its item's first day (the bill date, or the day posted).
    due_on: date | None = None

    @property
    def is_charge(self) -> bool:
        return self.kind in CATEGORY


@dataclass
class BillBalance:
    charged: dict[str, Decimal] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, ZERO))
    unpaid: dict[str, Decimal] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, ZERO))

    @property
    def unpaid_principal(self) -> Decimal:
        unpaid = self.unpaid
        return unpaid["fee"] + unpaid.get("fine", ZERO) + unpaid.get("sewer", ZERO) + unpaid["water"]

    @property
    def unpaid_interest(self) -> Decimal:
        return self.unpaid.get("interest", ZERO)

    @property
    def unpaid_total(self) -> Decimal:
        return sum(self.unpaid.values(), ZERO)

    @property
    def charged_total(self) -> Decimal:
        return sum(self.charged.values(), ZERO)


# An item of the allocation is a bill, keyed ``(bill_date, bill_id)``, or a charge on no bill (an invoice, a debit
# memo, a refund), keyed ``(posted_on, LONE, entry_id)``: both sort oldest first. Keys are read only through
# ``key_bill_id`` and ``key_entry_id``, never unpacked, since the two shapes differ.
LONE = -1


def lone_key(posted_on: date, entry_id: int) -> tuple:
    return (posted_on, LONE, entry_id)


def key_bill_id(key: tuple) -> int | None:
    """The bill an item's key names; None for a charge on no bill."""
    return None if key[1] == LONE else key[1]


def key_entry_id(key: tuple) -> int | None:
    """The ledger entry of a charge on no bill; None for a bill."""
    return key[2] if key[1] == LONE else None


@dataclass
class AccountBalance:
    bills: dict[tuple, BillBalance]  # by item key: bills and charges on no bill (see ``LONE``)
    credit: Decimal  # unapplied payments and credits (positive number = the customer's credit)

    def on_bills(self) -> dict[int, BillBalance]:
        """The bills' balances by bill id, without the charges on no bill."""
        return {key[1]: balance for key, balance in self.bills.items() if key[1] != LONE}

    def lone(self) -> dict[int, tuple[date, BillBalance]]:
        """The charges on no bill: (posted on, balance) by ledger entry id."""
        return {key[2]: (key[0], balance) for key, balance in self.bills.items() if key[1] == LONE}

    @property
    def balance(self) -> Decimal:
        return sum((b.unpaid_total for b in self.bills.values()), ZERO) - self.credit


class Application(NamedTuple):
    """An amount of a credit (payment, credit memo, void) that paid a charge."""

    credit_id: int  # the credit's ``entry_id``
    bill_key: tuple  # the bill's key, or a lone charge's ``lone_key``
    category: str  # water, fee, interest or penalty
    amount: Decimal
    applied_on: date  # the day it paid: the credit's own, or a later charge's for a credit left over


def replay_order(e: Entry) -> tuple:
    """Day by day; a day's charges before its credits; credits in the order they were recorded."""
    return (e.posted_on, e.kind not in CATEGORY, e.entry_id)


class Ledger:
    """The allocation replayed one entry at a time, in ``replay_order``; ``state()`` at any point is the
    account as it stood then. ``allocate`` replays a whole list; the penalty assessment replays day by day
    and adds the penalties it finds as it goes."""

    def __init__(self, order: str = PRINCIPAL_FIRST, *, record: bool = False):
        if order not in PAYMENT_ORDERS:
            raise ValueError(f"unknown payment order '{order}'; known: {', '.join(PAYMENT_ORDERS)}")
        self.order = order
        self.bills: dict[tuple, BillBalance] = defaultdict(BillBalance)
        self.pool = ZERO
        self._unsettled = False  # charges added that a leftover credit has not yet been offered to
        self._day: date | None = None
        # What a leftover credit pays, pass by pass: (unpaid amounts, category, item key), oldest due first
        # (``_order``), rebuilt when an item or a due date is added (``_shape``).
        self._order: list[list[tuple[dict, str, tuple]]] = []
        self._shape: tuple = ()
        self._due: dict[tuple, date] = {}  # each item's due date, as its charges give it
        self._fine_due: dict[tuple, date] = {}  # the earliest own due date of an item's fines
        # Recording only: what each credit paid, and the pool's money by the credit it came from (FIFO).
        self.record = record
        self.applications: list[Application] = []
        self._sources: deque[list] = deque()  # [entry_id, amount still waiting]
        self._shortfall = ZERO  # a negative pool (a positive non-charge entry) that later credits fill first
        # The categories a leftover credit pays, in order: without the fine and sewer categories until one is charged
        # (most ledgers never have one, and the replay settles every bill after every credit).
        self._joined: frozenset = frozenset()
        self._passes = _PASSES_WITH[(order, self._joined)]

    def post(self, e: Entry) -> None:
        kind = e.kind
        if kind in _NOT_OWED:
            # A reversal and the payment it takes back are left out together by the loader
            # (``entries_for_accounts``); one reaching the replay alone is neither a charge nor a credit.
            return
        posted_on = e.posted_on
        cat = CATEGORY.get(kind)  # None: not a charge
        if cat is not None:  # as ``charge``
            if self._unsettled and posted_on != self._day:
                self._settle()
            self._day = posted_on
            # Charges not on a bill (a counter fee) stand as their own item, ordered by posting date.
            key = e.bill_key
            if key is None:
                key = lone_key(posted_on, e.entry_id)
            bill, amount = self.bills[key], e.amount
            charged, unpaid = bill.charged, bill.unpaid
            due_on = e.due_on
            if cat in _JOINING and cat not in self._joined:
                self._join(cat)
            if cat == "fine":
                if due_on is not None and due_on < self._fine_due.get(key, due_on + _DAY):
                    self._fine_due[key] = due_on
            elif due_on is not None and key not in self._due:
                self._due[key] = due_on
            charged[cat] = charged.get(cat, ZERO) + amount
            unpaid[cat] = unpaid.get(cat, ZERO) + amount
            self._unsettled = True
            return
        if self._unsettled:
            self._settle()
        self._day = posted_on
        if kind == "payment" or e.bill_key is None:
            self.pool += -e.amount
            if self.record:
                self._pool_add(e.entry_id, -e.amount)
        else:
            key = e.bill_key
            bill = self.bills[key]
            credit = -e.amount
            for cat in CREDIT_ORDER:
                take = min(credit, bill.unpaid.get(cat, ZERO))
                if take > ZERO:
                    bill.unpaid[cat] -= take
                    bill.charged[cat] -= take
                    credit -= take
                    if self.record:
                        self.applications.append(Application(e.entry_id, key, cat, take, e.posted_on))
            self.pool += credit
            if self.record:
                self._pool_add(e.entry_id, credit)
        self._settle()

    def charge(self, posted_on: date, key: tuple, kind: str, amount: Decimal) -> None:
        """Post a charge of ``kind`` on the bill (or lone charge) ``key``: ``post`` of a charge's entry."""
        if self._unsettled and posted_on != self._day:
            self._settle()
        self._day = posted_on
        cat = CATEGORY[kind]
        if cat in _JOINING and cat not in self._joined:
            self._join(cat)
        bill = self.bills[key]
        charged, unpaid = bill.charged, bill.unpaid
        charged[cat] = charged.get(cat, ZERO) + amount
        unpaid[cat] = unpaid.get(cat, ZERO) + amount
        self._unsettled = True

    def _join(self, cat: str) -> None:
        self._joined = self._joined | {cat}
        self._passes = _PASSES_WITH[(self.order, self._joined)]

    def settle(self) -> None:
        """Offer a credit left over to the charges added since it was last offered (``state`` does first)."""
        if self._unsettled:
            self._settle()

    def _settle(self) -> None:
        self._unsettled = False
        pool = self.pool
        if pool <= ZERO:
            return
        shape = (len(self.bills), len(self._due), len(self._fine_due), id(self._passes))
        if shape != self._shape:  # an item or a due date added since (none is ever removed): order them again
            self._shape = shape
            self._order = self._ordered()
        record = self.record
        for each in self._order:
            for unpaid, cat, key in each:
                owed = unpaid.get(cat, ZERO)
                if owed > ZERO:
                    take = pool if pool <= owed else owed  # min(pool, owed), the pool when equal
                    unpaid[cat] = owed - take
                    pool -= take
                    if record:
                        self._pool_apply(key, cat, take)
                    if pool <= ZERO:
                        self.pool = pool
                        return
        self.pool = pool

    def _ordered(self) -> list[list[tuple[dict, str, tuple]]]:
        """Each pass's charges in the order a credit pays them: oldest due first, each by its own due date (a fine
        whose ordinance sets its time to pay is due then, even on a later bill); of charges due the same day the
        oldest item's first, and an item's in the pass's order of categories (water rents, then fines, then
        fees)."""
        bills, due, fine_due = self.bills, self._due, self._fine_due
        out = []
        for cats in self._passes:
            rows = []
            for key, bill in bills.items():
                item_due = due.get(key, key[0])
                for rank, cat in enumerate(cats):
                    when = min(fine_due.get(key, item_due), item_due) if cat == "fine" else item_due
                    rows.append((when, key, rank, cat, bill.unpaid))
            rows.sort(key=lambda row: row[:3])
            out.append([(unpaid, cat, key) for _, key, _, cat, unpaid in rows])
        return out

    def _pool_add(self, entry_id: int, amount: Decimal) -> None:
        """Recording: ``amount`` joins the pool from this entry (a negative amount leaves it, the newest
        money first, and what the pool lacks waits to be filled by the next credits)."""
        if amount > ZERO:
            filled = min(amount, self._shortfall)
            self._shortfall -= filled
            if amount > filled:
                self._sources.append([entry_id, amount - filled])
            return
        owed = -amount
        while owed > ZERO and self._sources:
            source = self._sources[-1]
            take = min(owed, source[1])
            source[1] -= take
            owed -= take
            if source[1] <= ZERO:
                self._sources.pop()
        self._shortfall += owed

    def _pool_apply(self, key: tuple, cat: str, amount: Decimal) -> None:
        """Recording: the pool paid ``amount`` of a charge; put it down to the oldest credits waiting."""
        while amount > ZERO and self._sources:
            source = self._sources[0]
            take = min(amount, source[1])
            self.applications.append(Application(source[0], key, cat, take, self._day))
            source[1] -= take
            amount -= take
            if source[1] <= ZERO:
                self._sources.popleft()

    def waiting(self) -> dict[int, Decimal]:
        """Recording: the credit still unapplied, by the entry it came from (sums to the pool when the pool
        is not negative)."""
        out: dict[int, Decimal] = defaultdict(Decimal)
        for entry_id, amount in self._sources:
            out[entry_id] += amount
        return dict(out)

    def state(self) -> AccountBalance:
        self.settle()
        return AccountBalance(bills=dict(self.bills), credit=self.pool)


def allocate(entries: list[Entry], *, order: str = PRINCIPAL_FIRST) -> AccountBalance:
    """Replay the entries (any order given) and return the account as it stands after them."""
    ledger = Ledger(order)
    for e in sorted(entries, key=replay_order):
        ledger.post(e)
    return ledger.state()
