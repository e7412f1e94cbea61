"""What a payment pays: oldest due first, each charge by its own due date; among charges due the same day, water
rents, then fines, then fees (docs/ordinances.md, conventions). A fine whose ordinance sets its own time to pay is
due then, even when a later bill carries it — under both payment orders."""

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.ledger.allocation import PAYMENT_ORDERS, PENALTIES_FIRST, PRINCIPAL_FIRST, Entry, allocate

pytestmark = pytest.mark.citation("policy: oldest due first")
D = Decimal
MAY = (date(2026, 5, 1), 2)  # the May 1 bill, due May 31
APRIL = (date(2026, 4, 1), 1)  # the April 1 bill, due May 1


def unpaid(entries, order):
    out = {key: {cat: amount for cat, amount in bill.unpaid.items() if amount}
           for key, bill in allocate(entries, order=order).bills.items()}
    return {key: left for key, left in out.items() if left}


@pytest.mark.parametrize("order", PAYMENT_ORDERS)
def test_an_overdue_fine_on_a_later_bill_is_paid_before_that_bills_rents(order):
    """The worked Washingtonville case: a $100.00 fine imposed Mar 12, due Mar 22, carried on the May 1 bill beside
    $35.00 of water rent due May 31; $100.00 paid May 13 pays the fine."""
    entries = [Entry("water", date(2026, 5, 1), D("35.00"), MAY, 1, due_on=date(2026, 5, 31)),
               Entry("fine", date(2026, 5, 1), D("100.00"), MAY, 2, due_on=date(2026, 3, 22)),
               Entry("payment", date(2026, 5, 13), D("-100.00"), None, 3)]
    assert unpaid(entries, order) == {MAY: {"water": D("35.00")}}


@pytest.mark.parametrize("order", PAYMENT_ORDERS)
def test_a_fee_without_a_time_of_its_own_waits_behind_the_rents(order):
    """The visitation fee: due with its bill, so on the same day as the rents, and paid after them."""
    entries = [Entry("water", date(2026, 5, 1), D("35.00"), MAY, 1, due_on=date(2026, 5, 31)),
               Entry("fee", date(2026, 5, 1), D("100.00"), MAY, 2, due_on=date(2026, 5, 31)),
               Entry("payment", date(2026, 5, 5), D("-35.00"), None, 3)]
    assert unpaid(entries, order) == {MAY: {"fee": D("100.00")}}


def test_a_fine_due_before_an_older_bill_is_paid_first():
    """A fine due Apr 25 on the May bill is older than the April bill's rents, due May 1: it is paid first; the
    April rents come next, then the May rents."""
    entries = [Entry("water", date(2026, 4, 1), D("50.00"), APRIL, 1, due_on=date(2026, 5, 1)),
               Entry("water", date(2026, 5, 1), D("35.00"), MAY, 2, due_on=date(2026, 5, 31)),
               Entry("fine", date(2026, 5, 1), D("60.00"), MAY, 3, due_on=date(2026, 4, 25)),
               Entry("payment", date(2026, 5, 10), D("-80.00"), None, 4)]
    assert unpaid(entries, PRINCIPAL_FIRST) == {APRIL: {"water": D("30.00")}, MAY: {"water": D("35.00")}}


def test_penalties_first_pays_an_overdue_fine_before_the_bills_penalty():
    entries = [Entry("water", date(2026, 5, 1), D("35.00"), MAY, 1, due_on=date(2026, 5, 31)),
               Entry("fine", date(2026, 5, 1), D("100.00"), MAY, 2, due_on=date(2026, 3, 22)),
               Entry("penalty", date(2026, 6, 1), D("3.50"), MAY, 3, due_on=date(2026, 5, 31)),
               Entry("payment", date(2026, 6, 2), D("-100.00"), None, 4)]
    assert unpaid(entries, PENALTIES_FIRST) == {MAY: {"water": D("35.00"), "penalty": D("3.50")}}


@given(st.lists(st.tuples(st.sampled_from(["water", "fee", "fine"]), st.integers(1, 20_000)), min_size=1, max_size=8),
       st.integers(1, 30_000), st.sampled_from(PAYMENT_ORDERS))
def test_without_due_dates_of_their_own_each_bill_pays_rents_then_fines_then_fees(charges, paid, order):
    """Charges that carry no due date of their own fall due with their bill: the order is the bill's (oldest first)
    and, within it, water rents, then fines, then fees — the order before due dates were read."""
    bills = [(date(2026, 1, 1 + i % 28), i) for i in range(len(charges))]
    entries = [Entry(kind, bills[i][0], D(cents) / 100, bills[i], i + 1) for i, (kind, cents) in enumerate(charges)]
    entries.append(Entry("payment", date(2026, 3, 1), -D(paid) / 100, None, 99))
    left = D(paid) / 100
    rank = {"water": 0, "fine": 1, "fee": 2}
    expected = {}
    for key, (kind, cents) in sorted(zip(bills, charges, strict=True),
                                        key=lambda pair: (pair[0], rank[pair[1][0]])):
        amount = D(cents) / 100
        take = min(left, amount)
        left -= take
        if amount - take:
            expected[key] = {kind: amount - take}
    assert unpaid(entries, order) == expected
