"""What each payment paid: the ledger replay recording its applications (``Ledger(order, record=True)``).

Worked by hand from the Mineola example (docs/ordinances.md): a $186.13 bill dated 2026-02-01, due 2026-03-01; a
payment of $100.00 on 2026-02-15; the 2026-03-02 penalty is 5% of the $86.13 unpaid = $4.31 (4.3065 half-up);
a second payment of $90.44 on 2026-03-10 pays the $86.13 of water left and then the $4.31 penalty.
"""

from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal as D

from hypothesis import given, settings
from hypothesis import strategies as st

from billing.ledger.allocation import (
    CATEGORY,
    PAYMENT_ORDERS,
    PENALTIES_FIRST,
    PRINCIPAL_FIRST,
    Application,
    Entry,
    Ledger,
    allocate,
    replay_order,
)

FEB = (date(2026, 2, 1), 1)
MAR = (date(2026, 3, 1), 2)


def replay(entries, order=PRINCIPAL_FIRST) -> Ledger:
    ledger = Ledger(order, record=True)
    for e in sorted(entries, key=replay_order):
        ledger.post(e)
    ledger.state()
    return ledger


def paid_by(ledger: Ledger, entry_id: int) -> list[tuple]:
    return [(a.bill_key, a.category, a.amount, a.applied_on) for a in ledger.applications if a.credit_id == entry_id]


def test_the_mineola_worked_example():
    entries = [Entry("water", date(2026, 2, 1), D("186.13"), FEB, entry_id=1),
               Entry("payment", date(2026, 2, 15), D("-100.00"), entry_id=2),
               Entry("penalty", date(2026, 3, 2), D("4.31"), FEB, entry_id=3),
               Entry("payment", date(2026, 3, 10), D("-90.44"), entry_id=4)]
    ledger = replay(entries)
    assert paid_by(ledger, 2) == [(FEB, "water", D("100.00"), date(2026, 2, 15))]
    assert paid_by(ledger, 4) == [(FEB, "water", D("86.13"), date(2026, 3, 10)),
                                  (FEB, "penalty", D("4.31"), date(2026, 3, 10))]
    assert ledger.state().balance == D("0.00") and ledger.waiting() == {}


def test_an_overpayment_pays_the_next_bill_when_it_is_issued():
    # $250.00 pays the February bill's $186.13; $63.87 waits and pays $63.87 of March's $100.00 on Mar 1.
    entries = [Entry("water", date(2026, 2, 1), D("186.13"), FEB, entry_id=1),
               Entry("payment", date(2026, 2, 15), D("-250.00"), entry_id=2),
               Entry("water", date(2026, 3, 1), D("100.00"), MAR, entry_id=3)]
    ledger = replay(entries)
    assert paid_by(ledger, 2) == [(FEB, "water", D("186.13"), date(2026, 2, 15)),
                                  (MAR, "water", D("63.87"), date(2026, 3, 1))]
    assert ledger.state().balance == D("36.13")


def test_credit_left_over_is_used_first_in_first_out():
    # $20.00 then $30.00 wait; a $40.00 fee takes the $20.00 first, then $20.00 of the $30.00; $10.00 waits.
    entries = [Entry("payment", date(2026, 1, 5), D("-20.00"), entry_id=1),
               Entry("payment", date(2026, 1, 6), D("-30.00"), entry_id=2),
               Entry("water", date(2026, 2, 1), D("40.00"), FEB, entry_id=3)]
    ledger = replay(entries)
    assert paid_by(ledger, 1) == [(FEB, "water", D("20.00"), date(2026, 2, 1))]
    assert paid_by(ledger, 2) == [(FEB, "water", D("20.00"), date(2026, 2, 1))]
    assert ledger.waiting() == {2: D("10.00")}
    assert ledger.state().credit == D("10.00")


def test_a_credit_memo_pays_its_own_bill_and_its_leftover_the_next_charge():
    # February's $50.00 is paid in full; a $10.00 credit memo on it finds nothing owed there: it waits, and
    # pays $10.00 of March's water on Mar 1. A $5.00 credit on March pays March's water directly.
    entries = [Entry("water", date(2026, 2, 1), D("50.00"), FEB, entry_id=1),
               Entry("payment", date(2026, 2, 10), D("-50.00"), entry_id=2),
               Entry("credit", date(2026, 2, 20), D("-10.00"), FEB, entry_id=3),
               Entry("water", date(2026, 3, 1), D("80.00"), MAR, entry_id=4),
               Entry("credit", date(2026, 3, 5), D("-5.00"), MAR, entry_id=5)]
    ledger = replay(entries)
    assert paid_by(ledger, 3) == [(MAR, "water", D("10.00"), date(2026, 3, 1))]
    assert paid_by(ledger, 5) == [(MAR, "water", D("5.00"), date(2026, 3, 5))]
    assert ledger.state().balance == D("65.00")


def test_penalties_first_pays_the_penalty_before_the_water():
    entries = [Entry("water", date(2026, 2, 1), D("186.13"), FEB, entry_id=1),
               Entry("penalty", date(2026, 3, 2), D("9.31"), FEB, entry_id=2),
               Entry("payment", date(2026, 3, 10), D("-50.00"), entry_id=3)]
    ledger = replay(entries, PENALTIES_FIRST)
    assert paid_by(ledger, 3) == [(FEB, "penalty", D("9.31"), date(2026, 3, 10)),
                                  (FEB, "water", D("40.69"), date(2026, 3, 10))]


def test_the_default_replay_records_nothing():
    ledger = Ledger()
    ledger.post(Entry("water", date(2026, 2, 1), D("10.00"), FEB, entry_id=1))
    ledger.post(Entry("payment", date(2026, 2, 2), D("-10.00"), entry_id=2))
    assert ledger.applications == [] and ledger.waiting() == {}
    assert isinstance(Application(1, FEB, "water", D("1.00"), date(2026, 2, 2)).amount, D)


# --- property: applications add up ------------------------------------------------------------------------

cents = st.integers(min_value=1, max_value=30_000).map(lambda c: D(c) / 100)


@st.composite
def ledgers(draw):
    start = date(2026, 1, 1)
    bills = [(start + timedelta(days=30 * i), i + 1) for i in range(draw(st.integers(1, 4)))]
    entries = []
    for n in range(draw(st.integers(1, 25))):
        day = start + timedelta(days=draw(st.integers(0, 150)))
        kind = draw(st.sampled_from(["water", "fee", "penalty", "interest", "fine", "payment", "payment", "credit",
                                     "credit_on_bill", "void"]))
        amount = draw(cents)
        if kind in ("water", "fee", "penalty", "interest"):
            entries.append(Entry(kind, day, amount, draw(st.sampled_from(bills)), entry_id=n + 1))
        elif kind == "fine":  # a charge on no bill
            entries.append(Entry("fine", day, amount, None, entry_id=n + 1))
        elif kind in ("payment", "credit"):
            entries.append(Entry(kind, day, -amount, None, entry_id=n + 1))
        else:
            entries.append(Entry("credit" if kind == "credit_on_bill" else "void", day, -amount,
                                 draw(st.sampled_from(bills)), entry_id=n + 1))
    return entries, draw(st.sampled_from(PAYMENT_ORDERS))


@settings(max_examples=300, deadline=None)
@given(ledgers())
def test_each_credit_paid_exactly_what_it_gave_and_balances_are_unchanged(case):
    entries, order = case
    ledger = replay(entries, order)
    recorded, plain = ledger.state(), allocate(entries, order=order)
    assert recorded.credit == plain.credit
    assert {k: (b.charged, b.unpaid) for k, b in recorded.bills.items()} == \
        {k: (b.charged, b.unpaid) for k, b in plain.bills.items()}
    paid: dict[int, D] = defaultdict(D)
    on_charge: dict[tuple, D] = defaultdict(D)
    for a in ledger.applications:
        assert a.amount > 0
        paid[a.credit_id] += a.amount
        on_charge[(a.bill_key, a.category)] += a.amount
    waiting = ledger.waiting()
    for e in entries:
        if not e.is_charge:
            assert paid[e.entry_id] + waiting.get(e.entry_id, D(0)) == -e.amount, e
    assert sum(waiting.values(), D(0)) == recorded.credit
    # What was applied to each charge is what it no longer owes.
    charged: dict[tuple, D] = defaultdict(D)
    for e in entries:
        if e.is_charge:
            key = e.bill_key if e.bill_key is not None else (e.posted_on, -1, e.entry_id)
            charged[(key, CATEGORY[e.kind])] += e.amount
    for (key, cat), amount in charged.items():
        assert amount - recorded.bills[key].unpaid[cat] == on_charge.get((key, cat), D(0)), (key, cat)
