"""Monthly interest and a February 1 penalty (Washingtonville § 169-26): pure, the dollars worked by hand."""

from datetime import date
from decimal import Decimal

import pytest

from billing.ledger.allocation import Entry, allocate
from billing.penalties.rules import BillTerms, MonthlyInterestFebruaryPenalty, penalties_owed

pytestmark = pytest.mark.citation("§ 169-26")

D = Decimal
SCHEME = MonthlyInterestFebruaryPenalty({
    "citation": "§ 169-26", "interest_percent": "2", "penalty_percent": "5", "penalty_month": 2, "penalty_day": 1,
    "charges_on": ["water"]})


def bill(bill_date, due_date, amount, bill_id=1):
    key = (bill_date, bill_id)
    return BillTerms(key=key, bill_date=bill_date, due_date=due_date), \
        Entry(kind="water", posted_on=bill_date, amount=D(amount), bill_key=key)


def owed(terms, entries, through):
    return [(p.due.on, p.due.kind, p.amount) for p in
            penalties_owed(entries=entries, bills=terms, scheme=SCHEME, through=through)]


def test_interest_on_each_monthly_anniversary_clamped_to_month_end():
    # Due Dec 30: first interest Dec 31, then the 31st or the month's last day (Feb 28), not drifting.
    days = [due.on for due in SCHEME.dates(bill_date=date(2025, 11, 30), due_date=date(2025, 12, 30),
                                           through=date(2026, 4, 30))]
    assert days == [date(2025, 12, 31), date(2026, 1, 31), date(2026, 2, 1), date(2026, 2, 28),
                    date(2026, 3, 31), date(2026, 4, 30)]


def test_a_bill_due_after_february_1_owes_no_penalty_that_february():
    dues = SCHEME.dates(bill_date=date(2026, 2, 1), due_date=date(2026, 3, 3), through=date(2027, 2, 1))
    assert [due.on for due in dues if due.kind == "penalty"] == [date(2027, 2, 1)]
    assert dues[0].on == date(2026, 3, 4)  # bill date + 31 days


def test_the_penalty_never_charges_on_earlier_penalties():
    terms, water = bill(date(2025, 8, 1), date(2025, 8, 31), "100.00")
    out = owed([terms], [water], date(2027, 2, 1))
    # Interest 2.00 a month from 2025-09-01. 2026-02-01: 5% of (100 + 5 × 2.00) = 5.50.
    # 2027-02-01: 5% of (100 + 17 × 2.00 interest before that day) = 6.70, not of the 5.50 penalty.
    penalties = [(day, amount) for day, kind, amount in out if kind == "penalty"]
    assert penalties == [(date(2026, 2, 1), D("5.50")), (date(2027, 2, 1), D("6.70"))]
    assert {amount for _, kind, amount in out if kind == "interest"} == {D("2.00")}
    assert sum(1 for _, kind, _ in out if kind == "interest") == 18  # Sep 2025 – Feb 2027


def test_interest_and_penalty_on_the_same_day_are_independent():
    terms, water = bill(date(2025, 8, 1), date(2025, 8, 31), "100.00")
    out = owed([terms], [water], date(2026, 2, 1))
    # Feb 1: interest 2% of 100 = 2.00; penalty 5% of (100 + 5 × 2.00 before the day) = 5.50.
    assert out[-2:] == [(date(2026, 2, 1), "interest", D("2.00")), (date(2026, 2, 1), "penalty", D("5.50"))]


def test_payments_pay_principal_then_interest_then_penalties():
    terms, water = bill(date(2025, 8, 1), date(2025, 8, 31), "100.00")
    entries = [water, Entry(kind="interest", posted_on=date(2025, 9, 1), amount=D("2.00"), bill_key=terms.key),
               Entry(kind="penalty", posted_on=date(2026, 2, 1), amount=D("5.10"), bill_key=terms.key),
               Entry(kind="payment", posted_on=date(2026, 2, 5), amount=D("-101.00"))]
    (balance,) = allocate(entries).bills.values()
    assert balance.unpaid == {"penalty": D("5.10"), "fee": D(0), "water": D(0), "interest": D("1.00")}
    assert balance.unpaid_interest == D("1.00")
