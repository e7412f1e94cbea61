"""Calendar, penalty schedule and ledger allocation — pure rules, worked by hand."""

import tomllib
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.ledger.allocation import Entry, allocate
from billing.ordinance import CALENDARS, PENALTY_SCHEMES
from core.dates import add_months
from ordinance.files import PRESET_DIR
from ordinance.install import jsonable as _jsonable

D = Decimal


@pytest.fixture(scope="module")
def preset():
    return _jsonable(tomllib.loads((PRESET_DIR / "mineola.toml").read_text()))


@pytest.fixture(scope="module")
def calendar(preset):
    return CALENDARS.build(preset["calendar"]["scheme"], preset["calendar"])


@pytest.fixture(scope="module")
def scheme(preset):
    return PENALTY_SCHEMES.build(preset["penalty"]["scheme"], preset["penalty"])


@pytest.mark.citation("conventions: a month after a date")
def test_month_arithmetic_clamps_to_month_end():
    assert add_months(date(2026, 1, 31), 1) == date(2026, 2, 28)
    assert add_months(date(2028, 1, 31), 1) == date(2028, 2, 29)
    assert add_months(date(2026, 12, 15), 1) == date(2027, 1, 15)


@pytest.mark.citation("§ 45.29 A")
@pytest.mark.parametrize("book,months", [(1, (2, 8)), (2, (2, 8)), (3, (3, 9)), (4, (3, 9)), (5, (4, 10)),
                                         (6, (4, 10)), (7, (5, 11)), (8, (5, 11)), (9, (6, 12)), (10, (6, 12))])
def test_book_billing_months(calendar, book, months):
    due = [m for m in range(1, 13)
           if calendar.is_due(book=book, frequency="semiannual", on=date(2026, m, 1))]
    assert tuple(due) == months
    assert calendar.billable_year_start(book=book, on=date(2026, months[1], 1)) == date(2026, months[0], 1)


@pytest.mark.citation("§ 45.29 C")
def test_monthly_meters_due_every_first(calendar):
    assert calendar.frequency_for("1 1/2") == "monthly"
    assert calendar.frequency_for("1") == "semiannual"
    assert calendar.frequency_for("5/8") == "semiannual"
    assert all(calendar.is_due(book=1, frequency="monthly", on=date(2026, m, 1)) for m in range(1, 13))
    assert not calendar.is_due(book=1, frequency="monthly", on=date(2026, 3, 2))


@pytest.mark.citation("§ 45.29 D")
def test_reading_in_january_bills_february_due_march(calendar):
    cycle = calendar.cycle(book=1, frequency="semiannual", bill_date=date(2026, 2, 1))
    assert cycle.read_window == (date(2026, 1, 1), date(2026, 1, 31))
    assert cycle.due_date == date(2026, 3, 1)
    december = calendar.cycle(book=9, frequency="semiannual", bill_date=date(2025, 12, 1))
    assert december.read_window == (date(2025, 11, 1), date(2025, 11, 30))
    assert december.due_date == date(2026, 1, 1)
    assert december.billable_year_start == date(2025, 6, 1)


@pytest.mark.citation("§ 45.29 E")
def test_penalty_dates_mineola(scheme):
    dues = scheme.dates(bill_date=date(2026, 2, 1), due_date=date(2026, 3, 1), through=date(2026, 5, 10))
    assert [(d.on, d.percent) for d in dues] == [(date(2026, 3, 2), D(5)), (date(2026, 4, 2), D(1)),
                                                 (date(2026, 5, 2), D(1))]
    assert scheme.dates(bill_date=date(2026, 2, 1), due_date=date(2026, 3, 1), through=date(2026, 3, 1)) == []


@pytest.mark.citation("§ 45.29 E")
def test_penalty_amounts_worked_example(scheme):
    dues = scheme.dates(bill_date=date(2026, 2, 1), due_date=date(2026, 3, 1), through=date(2026, 5, 10))
    principal = D("186.13")
    assert [scheme.amount(d, unpaid_principal=principal, unpaid_total=principal) for d in dues] == \
        [D("9.31"), D("1.86"), D("1.86")]


def bill(amount, day=date(2026, 2, 1), bill_id=1, kind="water"):
    return Entry(kind=kind, posted_on=day, amount=D(amount), bill_key=(day, bill_id))


def pay(amount, day):
    return Entry(kind="payment", posted_on=day, amount=-D(amount))


TWO_BILLS_AND_A_PENALTY = [
    bill("100.00", date(2026, 2, 1), 1), bill("50.00", date(2026, 8, 1), 2),
    Entry(kind="penalty", posted_on=date(2026, 3, 2), amount=D("5.00"), bill_key=(date(2026, 2, 1), 1))]


@pytest.mark.citation("policy: payment order")
def test_payment_pays_principal_oldest_bill_first_then_penalties():
    # $60: principal first → 60 of the first bill's 100.00 water; its 5.00 penalty and the second bill wait.
    state = allocate([*TWO_BILLS_AND_A_PENALTY, pay("60.00", date(2026, 8, 5))])
    first, second = state.bills[(date(2026, 2, 1), 1)], state.bills[(date(2026, 8, 1), 2)]
    assert first.unpaid == {"penalty": D("5.00"), "fee": D(0), "water": D("40.00")}
    assert second.unpaid_total == D("50.00")
    assert state.balance == D("95.00")
    # $200: all principal (100 + 50), then the penalty (5.00); 45.00 left as a credit.
    state = allocate([*TWO_BILLS_AND_A_PENALTY, pay("200.00", date(2026, 8, 5))])
    assert state.bills[(date(2026, 2, 1), 1)].unpaid_total == D(0) and state.credit == D("45.00")


@pytest.mark.citation("policy: payment order")
def test_penalties_first_pays_each_bills_penalty_before_its_charges():
    # $60: the first bill's 5.00 penalty, then 55.00 of its water; the second bill waits.
    state = allocate([*TWO_BILLS_AND_A_PENALTY, pay("60.00", date(2026, 8, 5))], order="penalties_first")
    first, second = state.bills[(date(2026, 2, 1), 1)], state.bills[(date(2026, 8, 1), 2)]
    assert first.unpaid == {"penalty": D(0), "fee": D(0), "water": D("45.00")}
    assert second.unpaid_total == D("50.00")
    assert state.balance == D("95.00")


@pytest.mark.citation("policy: payment order")
def test_overpayment_is_a_credit_the_next_bill_uses():
    state = allocate([bill("100.00"), pay("130.00", date(2026, 2, 20))])
    assert state.credit == D("30.00") and state.balance == D("-30.00")
    state = allocate([bill("100.00"), pay("130.00", date(2026, 2, 20)), bill("45.00", date(2026, 8, 1), 2)])
    assert state.bills[(date(2026, 8, 1), 2)].unpaid_total == D("15.00")
    assert state.balance == D("15.00")


@pytest.mark.citation("policy: payment order")
def test_credit_memo_reduces_its_bill():
    memo = Entry(kind="credit", posted_on=date(2026, 2, 10), amount=D("-20.00"), bill_key=(date(2026, 2, 1), 1))
    state = allocate([bill("100.00"), memo])
    assert state.bills[(date(2026, 2, 1), 1)].unpaid_principal == D("80.00")


cents = st.decimals(min_value=D("0.01"), max_value=D("5000"), places=2)


@pytest.mark.citation("conventions: exact decimal dollars")
@given(charges=st.lists(cents, min_size=1, max_size=6), payments=st.lists(cents, max_size=6))
def test_balance_is_the_sum_of_entries(charges, payments):
    entries = [bill(str(c), date(2026, 1 + i % 12, 1), i) for i, c in enumerate(charges)]
    entries += [pay(str(p), date(2026, 6, 1)) for p in payments]
    state = allocate(entries)
    assert state.balance == sum(charges, D(0)) - sum(payments, D(0))
    assert all(v >= 0 for b in state.bills.values() for v in b.unpaid.values())


@pytest.mark.citation("§ 45.29 E")
@pytest.mark.citation("policy: payment order")
def test_a_later_penalty_never_takes_money_from_an_earlier_payment():
    # Penalties first: $186.13 unpaid; 9.31 on 3/2 and 1.86 on 4/2; $100 on 4/15 pays both penalties
    # (11.17) and 88.83 of water, leaving 97.30 principal for good: the 5/2 penalty (0.97) must not pull
    # money back from it.
    key = (date(2026, 2, 1), 1)
    entries = [bill("186.13"),
               Entry(kind="penalty", posted_on=date(2026, 3, 2), amount=D("9.31"), bill_key=key),
               Entry(kind="penalty", posted_on=date(2026, 4, 2), amount=D("1.86"), bill_key=key),
               pay("100.00", date(2026, 4, 15)),
               Entry(kind="penalty", posted_on=date(2026, 5, 2), amount=D("0.97"), bill_key=key)]
    state = allocate(entries, order="penalties_first")
    assert state.bills[key].unpaid_principal == D("97.30")
    assert state.bills[key].unpaid["penalty"] == D("0.97")
    # Principal first the payment went to water (86.13 left) and every penalty is still owed.
    state = allocate(entries)
    assert state.bills[key].unpaid_principal == D("86.13")
    assert state.bills[key].unpaid["penalty"] == D("12.14")


@pytest.mark.citation("policy: payment order")
def test_credit_memo_on_a_paid_bill_becomes_account_credit():
    memo = Entry(kind="credit", posted_on=date(2026, 3, 10), amount=D("-20.00"), bill_key=(date(2026, 2, 1), 1))
    state = allocate([bill("100.00"), pay("100.00", date(2026, 2, 20)), memo])
    assert state.credit == D("20.00") and state.balance == D("-20.00")
