"""Balances derived from ledger entries, with no database.

Entries are debits (water and fee charges, penalties, debit memos; positive) and credits (payments,
credit memos, voids; negative). A credit tied to a bill (a credit memo or a void) reduces that bill's
charges — water, then fees, then penalties. A payment applies on its own day to the oldest open bill
first (bills by bill date), and within a bill to penalties, then fees, then water (ORDINANCES.md,
conventions); a penalty posted later never takes money from an earlier payment. What no bill can take
is a credit that the next charge uses.

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
    """Replay the entries in date order (a day's charges before its credits).

    A payment applies on its own day to what is open then; a charge posted later never takes money from
    an earlier payment, except from a credit left over (an overpayment), which the next charge uses.
    """
    bills: dict[tuple, BillBalance] = defaultdict(BillBalance)
    pool = ZERO

    def apply_pool() -> None:
        nonlocal pool
        for key in sorted(bills):
            if pool <= ZERO:
                return
            bill = bills[key]
            for cat in PAY_ORDER:
                take = min(pool, bill.unpaid[cat])
                if take > ZERO:
                    bill.unpaid[cat] -= take
                    pool -= take

    for e in sorted(entries, key=lambda e: (e.posted_on, e.kind not in CATEGORY, e.entry_id)):
        # Charges not on a bill (a counter fee) stand as their own item, ordered by posting date.
        key = e.bill_key if e.bill_key is not None else (e.posted_on, -1, e.entry_id)
        if e.kind in CATEGORY:
            bill = bills[key]
            bill.charged[CATEGORY[e.kind]] += e.amount
            bill.unpaid[CATEGORY[e.kind]] += e.amount
        elif e.kind == "payment" or e.bill_key is None:
            pool += -e.amount
        else:
            # A credit memo or void reduces its own bill's charges; what they no longer owe (because it
            # was paid already) becomes a credit for the account.
            bill = bills[key]
            credit = -e.amount
            for cat in CREDIT_ORDER:
                take = min(credit, bill.unpaid[cat])
                bill.unpaid[cat] -= take
                bill.charged[cat] -= take
                credit -= take
            pool += credit
        apply_pool()
    return AccountBalance(bills=dict(bills), credit=pool)
