"""Old Westbury (docs/ordinances.md) end to end through the commands, the dollars worked by hand.

Chapter 210 sets no billing frequency, rates or penalties. Sample: a quarterly minimum of $40.00 including
15,000 gal, then $4.50 per 1,000 gal; bills dated Feb/May/Aug/Nov 1 from the reading of the month before,
due 30 days after the bill date; no late penalty, ever.

Every account reads 1,000,000 gal on 2025-10-15 and 1,030,000 gal on 2026-01-14: 30,000 gal on the bill
dated 2026-02-01 → $40.00 + 15,000 gal × $4.50/1,000 = $67.50 → $107.50, due 2026-03-03.
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
    f"1-000{n},1,one_two_family,Owner {n},\"{n} Store Hill Rd, Old Westbury, NY 11568\",,{n} Store Hill Rd,"
    f"19-1-{n},OW00{n},5/8,gal,1000000,2025-10-15" for n in range(1, 4)]
READINGS = [f"OW00{n},2026-01-14,1030000,actual" for n in range(1, 4)] + ["OW003,2026-04-14,1040000,actual"]
PAYMENTS = ["1-0002,50.00,2026-02-20,CHK-2"]


ASSESSED = ["2026-03-03", "2026-03-04", "2026-04-04", "2026-11-30"]


@pytest.fixture(params=["daily", "catch_up"])
def village(request, db, tmp_path):
    # Assessed day by day, or in one catch-up run long after: the same ledger.
    billed_village(tmp_path, "old_westbury", accounts_rows=ACCOUNTS, reading_rows=READINGS, payment_rows=PAYMENTS,
                   paid_by="2026-02-20", assessed=ASSESSED if request.param == "daily" else ASSESSED[-1:])
    return tmp_path


@pytest.mark.citation("Ch. 210")
def test_a_quarterly_bill_is_the_minimum_and_the_excess_due_thirty_days_later(village):
    (first,) = statement("1-0001", "2026-02-01")["bills"]
    assert (first["bill_date"], first["due_date"], first["period_start"], first["period_end"], first["gallons"]) == (
        "2026-02-01", "2026-03-03", "2025-10-15", "2026-01-14", 30000)
    # $40.00 including 15,000 gal; 15,000 gal × $4.50 = $67.50.
    assert lines(first) == [("minimum", "15000", "40.00", "40.00", "Ch. 210 (sample rates)"),
                            ("consumption", "15000", "4.50", "67.50", "Ch. 210 (sample rates)")]
    assert first["total"] == "107.50"


@pytest.mark.citation("Ch. 210")
def test_no_late_penalty_ever(village):
    # Unpaid for nine months, or paid in part: no charge but the bill's own.
    assert charges("1-0001", "2026-11-30") == [] and statement("1-0001", "2026-11-30")["balance"] == "107.50"
    assert charges("1-0002", "2026-11-30") == [] and statement("1-0002", "2026-11-30")["balance"] == "57.50"


@pytest.mark.citation("Ch. 210, underground sprinkler systems")
def test_the_sprinkler_permit_is_carried_on_the_next_bill(village):
    cmd("charge_fee", "1-0003", "sprinkler_permit", "--date", "2026-03-10")
    bill("2026-05-01")
    may = statement("1-0003", "2026-05-01")["bills"][-1]
    # 1,040,000 − 1,030,000 = 10,000 gal, within the minimum's 15,000: $40.00; the permit $300.00.
    assert lines(may) == [("minimum", "15000", "40.00", "40.00", "Ch. 210 (sample rates)"),
                          ("fee", "1", "300.00", "300.00", "Ch. 210, underground sprinkler systems")]
    assert (may["bill_date"], may["due_date"], may["total"]) == ("2026-05-01", "2026-05-31", "340.00")
