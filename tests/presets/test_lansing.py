"""Lansing (docs/ordinances.md) end to end through the commands, the dollars worked by hand.

Sample rates and calendar: a quarterly minimum of $30.00 including 9,000 gal, then $5.10 per 1,000 gal;
bills dated Feb/May/Aug/Nov 1 from the reading of the month before; sample due date 30 days after the bill
date. § 141-17: 15% of the unpaid part of a delinquent water rent, once, the day after the due date.

Every account reads 1,000,000 gal on 2025-10-15 and 1,030,000 gal on 2026-01-14: 30,000 gal on the bill
dated 2026-02-01 → $30.00 + 21,000 gal × $5.10/1,000 = $107.10 → $137.10, due 2026-02-01 + 30 days =
2026-03-03; the penalty falls on 2026-03-04: 15% of $137.10 = $20.565 → $20.57 (half-up).
"""

import pytest

from tests.presets.quarterly import (
    bill,
    billed_village,
    charges,
    cmd,
    lines,
    statement,
)

pytestmark = pytest.mark.django_db

ACCOUNTS = [
    f"1-000{n},1,one_two_family,Owner {n},\"{n} Ridge Rd, Lansing, NY 14882\",,{n} Ridge Rd,37-1-{n},"
    f"LA00{n},5/8,gal,1000000,2025-10-15" for n in range(1, 6)]
READINGS = [f"LA00{n},2026-01-14,1030000,actual" for n in range(1, 6)] + ["LA004,2026-04-14,1040000,actual"]
PAYMENTS = [
    "1-0002,100.00,2026-02-20,CHK-2",  # partial, before the penalty day
    "1-0003,137.10,2026-03-04,CHK-3",  # in full on the penalty day itself
    "1-0004,137.10,2026-03-03,CHK-4",  # in full on the due date
]


ASSESSED = ["2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-04-04", "2026-05-10"]


@pytest.fixture(params=["daily", "catch_up"])
def village(request, db, tmp_path):
    # Assessed day by day, or in one catch-up run long after: the same ledger.
    billed_village(tmp_path, "lansing", accounts_rows=ACCOUNTS, reading_rows=READINGS, payment_rows=PAYMENTS,
                   paid_by="2026-03-04", assessed=ASSESSED if request.param == "daily" else ASSESSED[-1:])
    return tmp_path


@pytest.mark.citation("§ 141-17")
def test_a_quarterly_bill_is_the_minimum_and_the_excess_due_thirty_days_later(village):
    (first,) = statement("1-0001", "2026-02-01")["bills"]
    assert (first["bill_date"], first["due_date"], first["period_start"], first["period_end"], first["gallons"]) == (
        "2026-02-01", "2026-03-03", "2025-10-15", "2026-01-14", 30000)
    # $30.00 including 9,000 gal; 21,000 gal × $5.10 = $107.10.
    assert lines(first) == [("minimum", "9000", "30.00", "30.00", "§ 141-17 (sample rates)"),
                            ("consumption", "21000", "5.10", "107.10", "§ 141-17 (sample rates)")]
    assert first["total"] == "137.10"


@pytest.mark.citation("§ 141-17")
def test_fifteen_percent_once_the_day_after_the_due_date(village):
    # Nothing on the due date itself.
    assert charges("1-0001", "2026-03-03") == []
    # 15% of $137.10 = $20.565 → $20.57 on 2026-03-04, once: nothing more by 2026-05-10.
    assert charges("1-0001", "2026-05-10") == [("penalty", "2026-03-04", "20.57", "§ 141-17")]
    assert statement("1-0001", "2026-05-10")["balance"] == "157.67"  # 137.10 + 20.57


@pytest.mark.citation("§ 141-17")
def test_a_partial_payment_before_the_penalty_day_leaves_the_penalty_on_the_unpaid_part(village):
    # $137.10 − $100.00 = $37.10 unpaid on 2026-03-04: 15% = $5.565 → $5.57.
    assert charges("1-0002", "2026-05-10") == [("penalty", "2026-03-04", "5.57", "§ 141-17")]
    assert statement("1-0002", "2026-05-10")["balance"] == "42.67"


@pytest.mark.citation("§ 141-17")
def test_paid_on_the_penalty_day_still_owes_the_penalty_paid_on_the_due_date_owes_none(village):
    assert charges("1-0003", "2026-05-10") == [("penalty", "2026-03-04", "20.57", "§ 141-17")]
    assert statement("1-0003", "2026-05-10")["balance"] == "20.57"
    assert charges("1-0004", "2026-05-10") == []


@pytest.mark.citation("§ 141-10 D")
def test_the_certification_filing_fee_is_carried_on_the_next_bill(village):
    cmd("charge_fee", "1-0004", "certification_filing", "--date", "2026-03-10")
    bill("2026-05-01")
    may = statement("1-0004", "2026-05-01")["bills"][-1]
    # 1,040,000 − 1,030,000 = 10,000 gal: $30.00 + 1,000 gal × $5.10 = $5.10; the filing fee, sample $50.00.
    assert lines(may) == [("minimum", "9000", "30.00", "30.00", "§ 141-17 (sample rates)"),
                          ("consumption", "1000", "5.10", "5.10", "§ 141-17 (sample rates)"),
                          ("fee", "1", "50.00", "50.00", "§ 141-10 D")]
    assert (may["bill_date"], may["due_date"], may["total"]) == ("2026-05-01", "2026-05-31", "85.10")
