"""Balances derived from ledger entries, with no database.

Entries are debits (water and fee charges, penalties, debit memos; positive) and credits (payments,
credit memos, voids; negative). A credit tied to a bill (a credit memo or a void) reduces that bill's
charges — water, then fees, then penalties. Payments are pooled and applied to the oldest open bill first
(bills by bill date), and within a bill to penalties, then fees, then water (ORDINANCES.md, conventions).
What no bill can take is a credit that the next bill uses.

Because allocation is a pure function of the entries up to a day, "the principal unpaid on that day" is
simply ``allocate(entries posted before that day)``, and replaying twice gives the same answer.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from .money import ZERO

# Order within a bill when a payment applies: penalties first, then fees, then water.
PAY_ORDER = ("penalty", "fee", "water")
# Order when a bill's own credit (memo, void) applies: the charges first.
CREDIT_ORDER = ("water", "fee", "penalty")
CATEGORY = {"water": "water", "fee": "fee", "debit": "fee", "penalty": "penalty"}


@dataclass(frozen=True)
class Entry:
    kind: str  # water, fee, penalty, debit, payment, credit, void
    posted_on: date
    amount: Decimal
    bill_key: tuple | None = None  # (bill_date, bill_id) orders bills oldest first; None = not on a bill
    entry_id: int = 0


@dataclass
class BillBalance:
    charged: dict[str, Decimal] = field(default_factory=lambda: dict.fromkeys(PAY_ORDER, ZERO))
    unpaid: dict[str, Decimal] = field(default_factory=lambda: dict.fromkeys(PAY_ORDER, ZERO))

    @property
    def unpaid_principal(self) -> Decimal:
        return self.unpaid["fee"] + self.unpaid["water"]

    @property
    def unpaid_total(self) -> Decimal:
        return sum(self.unpaid.values(), ZERO)


@dataclass
class AccountBalance:
    bills: dict[tuple, BillBalance]
    credit: Decimal  # unapplied payments and credits (positive number = the customer's credit)

    @property
    def balance(self) -> Decimal:
        return sum((b.unpaid_total for b in self.bills.values()), ZERO) - self.credit


def allocate(entries: list[Entry]) -> AccountBalance:
    bills: dict[tuple, BillBalance] = defaultdict(BillBalance)
    pool = ZERO
    for e in entries:
        # Charges not on a bill (a counter fee) stand as their own item, ordered by posting date.
        key = e.bill_key if e.bill_key is not None else (e.posted_on, -1, e.entry_id)
        if e.kind in CATEGORY:
            bills[key].charged[CATEGORY[e.kind]] += e.amount
        elif e.kind == "payment" or e.bill_key is None:
            pool += -e.amount
        else:  # a credit memo or void on a bill
            bills[key].charged["water"] += e.amount

    for key in sorted(bills):
        bill = bills[key]
        # A bill's own credits first reduce its charges (a negative 'water' total spills over).
        over = ZERO
        for cat in CREDIT_ORDER:
            value = bill.charged[cat] + over
            over = min(value, ZERO)
            bill.unpaid[cat] = max(value, ZERO)
        pool += -over
    for key in sorted(bills):
        bill = bills[key]
        for cat in PAY_ORDER:
            take = min(pool, bill.unpaid[cat])
            if take > ZERO:
                bill.unpaid[cat] -= take
                pool -= take
    return AccountBalance(bills=dict(bills), credit=pool)
