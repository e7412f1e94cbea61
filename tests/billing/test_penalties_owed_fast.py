"""``penalties_owed`` gives exactly what the plain replay gives: on random ledgers, for Mineola's, Washingtonville's
and Lansing's schemes, with their shortcuts (the fast paths) and with the fast paths off, where the scheme is asked
only its ``dates`` and ``amount``, in both payment orders.

The oracle below is the plain algorithm, kept here on purpose: every entry replayed in order by a simple
allocation, the account's state taken afresh at the start of each late-charge day, each charge asked of
``scheme.amount`` with the bill's unpaid principal, total and interest, the answer sorted by day, bill and
kind."""

from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal
from itertools import groupby

from django.test import override_settings
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from billing.ledger.allocation import PENALTIES_FIRST, PRINCIPAL_FIRST, Entry
from billing.penalties.rules import (
    BillTerms,
    FirstThenMonthly,
    MonthlyInterestFebruaryPenalty,
    OneTime,
    penalties_owed,
)
from core.dates import add_months

MINEOLA = {"citation": "§ 45.29 E", "first_percent": "5", "monthly_percent": "1",
           "description": "Late payment penalty", "charges_on": ["water", "fee"]}
WASHINGTONVILLE = {"citation": "§ 169-26", "interest_percent": "2", "interest_days_after_due": 1,
                   "interest_description": "Interest on unpaid water rents", "penalty_percent": "5",
                   "penalty_month": 2, "penalty_day": 1, "penalty_description": "February 1 penalty",
                   "charges_on": ["water"]}
SCHEMES = {"mineola": (FirstThenMonthly, MINEOLA), "washingtonville": (MonthlyInterestFebruaryPenalty, WASHINGTONVILLE),
           "lansing": (OneTime, {"citation": "§ 141-17", "percent": "15", "charges_on": ["water"]})}
# One instance of each kept across examples, as a long-lived ordinance keeps it (its days worked out once).
KEPT = {name: cls(params) for name, (cls, params) in SCHEMES.items()}
START = date(2025, 1, 1)


class Plain:
    """A scheme seen only through ``dates`` and ``amount``: with the fast paths off (``billing.fast_paths``)
    nothing else of it is asked."""

    def __init__(self, scheme):
        self._scheme = scheme
        self.charges_on = scheme.charges_on  # what every scheme declares (the protocol)

    def dates(self, **kwargs):
        return self._scheme.dates(**kwargs)

    def amount(self, due, **kwargs):
        return self._scheme.amount(due, **kwargs)


# --- The oracle --------------------------------------------------------------------------------------------

CHARGE = {"water": "water", "fee": "fee", "fine": "fine", "debit": "fee", "penalty": "penalty",
          "interest": "interest", "penalty_correction": "penalty", "interest_correction": "interest"}
LATE = ("penalty", "interest", "penalty_correction", "interest_correction")


class PlainLedger:
    def __init__(self, order):
        self.order = order
        self.unpaid = defaultdict(lambda: {"penalty": Decimal(0), "fee": Decimal(0), "fine": Decimal(0),
                                           "water": Decimal(0)})
        self.pool = Decimal(0)
        self.day = None
        self.unsettled = False

    def post(self, kind, posted_on, amount, bill_key, entry_id):
        if kind in ("deposit", "deposit_refund", "payment_reversal"):
            return
        cat = CHARGE.get(kind)
        if self.unsettled and (posted_on != self.day or cat is None):
            self.settle()
        self.day = posted_on
        key = bill_key if bill_key is not None else (posted_on, -1, entry_id)
        if cat is not None:
            unpaid = self.unpaid[key]
            unpaid[cat] = unpaid.get(cat, Decimal(0)) + amount
            self.unsettled = True
            return
        if kind == "payment" or bill_key is None:
            self.pool -= amount
        else:
            unpaid, credit = self.unpaid[key], -amount
            for cat in ("water", "fee", "fine", "interest", "penalty"):
                take = min(credit, unpaid.get(cat, Decimal(0)))
                if take > 0:
                    unpaid[cat] -= take
                    credit -= take
            self.pool += credit
        self.settle()

    def settle(self):
        self.unsettled = False
        if self.order == PRINCIPAL_FIRST:
            passes = [("water", "fine", "fee"), ("interest", "penalty")]
        else:
            passes = [("penalty", "interest", "water", "fine", "fee")]
        for cats in passes:
            for key in sorted(self.unpaid):
                for cat in cats:
                    owed = self.unpaid[key].get(cat, Decimal(0))
                    if self.pool > 0 and owed > 0:
                        take = min(self.pool, owed)
                        self.unpaid[key][cat] = owed - take
                        self.pool -= take


def oracle(*, entries, bills, scheme, through, order, waived):
    facts = sorted((e for e in entries if e.kind not in LATE and e.posted_on <= through),
                   key=lambda e: (e.posted_on, e.kind not in CHARGE, e.entry_id))
    dues = sorted(((due, bill) for bill in bills
                   for due in scheme.dates(bill_date=bill.bill_date, due_date=bill.due_date, through=through)),
                  key=lambda pair: (pair[0].on, pair[1].key, pair[0].kind))
    ledger, owed, position = PlainLedger(order), [], 0
    for day, group in groupby(dues, key=lambda pair: pair[0].on):
        while position < len(facts) and facts[position].posted_on < day:
            e = facts[position]
            ledger.post(e.kind, e.posted_on, e.amount, e.bill_key, e.entry_id)
            position += 1
        if ledger.unsettled:
            ledger.settle()
        found = []
        for due, bill in group:
            if bill.key not in ledger.unpaid or (bill.key[1], due.on, due.kind) in waived:
                continue
            unpaid = ledger.unpaid[bill.key]
            principal = sum((unpaid[cat] for cat in scheme.charges_on), Decimal(0))
            extra = {"unpaid_interest": unpaid.get("interest", Decimal("0.00"))} if due.with_interest else {}
            amount = scheme.amount(due, unpaid_principal=principal, unpaid_total=sum(unpaid.values(), Decimal("0.00")),
                                   **extra)
            if amount > 0:
                found.append((bill.key, due, amount))
        for key, due, amount in found:
            ledger.post(due.kind, day, amount, key, 0)
        owed.extend(found)
    return owed


# --- Random ledgers ----------------------------------------------------------------------------------------

cents = st.integers(min_value=1, max_value=60_000).map(lambda n: Decimal(n) / 100)
KINDS = ["water", "fee", "fine", "debit", "payment", "payment", "payment", "credit", "void", "penalty", "interest",
         "penalty_correction", "deposit", "deposit_refund", "payment_reversal"]


@st.composite
def ledgers(draw):
    """A few bills on monthly bill dates (some sharing one, as a book's do), their charges, and payments,
    credits and other entries falling around the due dates, often on a late-charge day itself."""
    count = draw(st.integers(min_value=1, max_value=6))
    bills = []
    for n in range(count):
        bill_date = add_months(START, draw(st.integers(min_value=0, max_value=14)))
        due_date = bill_date + timedelta(days=draw(st.sampled_from([20, 30, 30])))
        bills.append(BillTerms(key=(bill_date, 100 + n), bill_date=bill_date, due_date=due_date))
    entries = []
    for bill in bills:  # each bill's own charges, on its bill date
        entries.append(Entry(kind="water", posted_on=bill.bill_date, amount=draw(cents), bill_key=bill.key,
                             entry_id=draw(st.integers(min_value=1, max_value=80))))
    for _ in range(draw(st.integers(min_value=0, max_value=14))):
        kind = draw(st.sampled_from(KINDS))
        on_bill = draw(st.booleans())
        bill = draw(st.sampled_from(bills))
        amount = draw(cents)
        if kind in ("payment", "credit", "void", "deposit"):
            amount = -amount
        elif kind == "penalty_correction":
            amount = -amount if draw(st.booleans()) else amount
        late_day = add_months(bill.due_date + timedelta(days=1), draw(st.integers(min_value=0, max_value=4)))
        posted_on = late_day + timedelta(days=draw(st.sampled_from([0, 0, -1, 1, -20, 7, 25])))
        entries.append(Entry(kind=kind, posted_on=posted_on, amount=amount,
                             bill_key=bill.key if on_bill or kind == "void" else None,
                             entry_id=draw(st.integers(min_value=1, max_value=80))))
    entries = draw(st.permutations(entries))
    bills = draw(st.permutations(bills))
    through = min(b.due_date for b in bills) + timedelta(days=draw(st.integers(min_value=-5, max_value=400)))
    waived = set()
    for bill in draw(st.lists(st.sampled_from(bills), max_size=2)):
        day = add_months(bill.due_date + timedelta(days=1), draw(st.integers(min_value=0, max_value=3)))
        waived.add((bill.key[1], day, draw(st.sampled_from(["penalty", "interest"]))))
    return entries, bills, through, waived


def answers(owed):
    return [(key, due, str(amount)) for key, due, amount in owed]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ledger=ledgers(), name=st.sampled_from(sorted(SCHEMES)), order=st.sampled_from([PRINCIPAL_FIRST, PENALTIES_FIRST]),
       fast_paths=st.booleans())
def test_penalties_owed_is_the_plain_replay(ledger, name, order, fast_paths):
    entries, bills, through, waived = ledger
    cls, params = SCHEMES[name]
    scheme = KEPT[name] if fast_paths else Plain(KEPT[name])
    with override_settings(BILLING_FAST_PATHS=fast_paths):
        fast = penalties_owed(entries=entries, bills=bills, scheme=scheme, through=through, order=order,
                              waived=waived)
    expected = oracle(entries=entries, bills=bills, scheme=cls(params), through=through, order=order, waived=waived)
    event(f"late charges: {min(len(expected), 5)}")
    assert answers((p.bill_key, p.due, p.amount) for p in fast) == answers(expected)


def test_a_late_payment_in_part_worked_out_by_hand():
    """A $100.00 Mineola bill due March 20, $40.00 paid March 25: 5% of $100.00 on March 21 ($5.00); the
    payment pays principal first, so 1% of $60.00 on April 21 ($0.60) and May 21 ($0.60)."""
    bill = BillTerms(key=(date(2025, 3, 1), 7), bill_date=date(2025, 3, 1), due_date=date(2025, 3, 20))
    entries = [Entry(kind="water", posted_on=date(2025, 3, 1), amount=Decimal("100.00"), bill_key=bill.key, entry_id=1),
               Entry(kind="payment", posted_on=date(2025, 3, 25), amount=Decimal("-40.00"), entry_id=2)]
    owed = penalties_owed(entries=entries, bills=[bill], scheme=KEPT["mineola"], through=date(2025, 5, 30))
    assert [(p.due.on, p.amount) for p in owed] == [(date(2025, 3, 21), Decimal("5.00")),
                                                   (date(2025, 4, 21), Decimal("0.60")),
                                                   (date(2025, 5, 21), Decimal("0.60"))]
