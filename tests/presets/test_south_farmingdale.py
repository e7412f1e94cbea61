"""South Farmingdale (docs/ordinances.md) end to end through the commands, the dollars worked by hand.

Sample rates (§ 3.1): a quarterly minimum of $28.00 including 12,000 gal, then $2.40 per 1,000 gal. Bills
dated Feb/May/Aug/Nov 1 from the reading of the month before, due when rendered (§ 4.2); a bill more than 30
days past its bill date draws a one-time 10% penalty on its unpaid charges, on bill date + 31 days.

Every account reads 1,000,000 gal on 2025-10-15 and 1,030,000 gal on 2026-01-14: 30,000 gal on the bill
dated 2026-02-01 → $28.00 + 18,000 gal × $2.40/1,000 = $43.20 → $71.20, due 2026-02-01; the penalty day is
2026-02-01 + 31 days = 2026-03-04: 10% of $71.20 = $7.12.
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
    f"1-000{n},1,one_two_family,Owner {n},\"{n} Main St, Farmingdale, NY 11735\",,{n} Main St,48-1-{n},"
    f"SF00{n},5/8,gal,1000000,2025-10-15" for n in range(1, 6)]
READINGS = [f"SF00{n},2026-01-14,1030000,actual" for n in range(1, 6)] + ["SF004,2026-04-14,1040000,actual"]
PAYMENTS = [
    "1-0002,50.00,2026-02-20,CHK-2",  # partial, before the penalty day
    "1-0003,71.20,2026-03-04,CHK-3",  # in full on the penalty day itself
    "1-0004,71.20,2026-03-03,CHK-4",  # in full on the last day without a penalty
]


ASSESSED = ["2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-04-04", "2026-05-10"]


@pytest.fixture(params=["daily", "catch_up"])
def village(request, db, tmp_path):
    # Assessed day by day, or in one catch-up run long after: the same ledger.
    billed_village(tmp_path, "south_farmingdale", accounts_rows=ACCOUNTS, reading_rows=READINGS, payment_rows=PAYMENTS,
                   paid_by="2026-03-04", assessed=ASSESSED if request.param == "daily" else ASSESSED[-1:])
    return tmp_path


@pytest.mark.citation("§ 3.1")
def test_a_quarterly_bill_is_the_minimum_and_the_excess(village):
    (first,) = statement("1-0001", "2026-02-01")["bills"]
    assert (first["bill_date"], first["due_date"], first["period_start"], first["period_end"], first["gallons"]) == (
        "2026-02-01", "2026-02-01", "2025-10-15", "2026-01-14", 30000)
    # $28.00 including 12,000 gal; 18,000 gal × $2.40 = $43.20.
    assert lines(first) == [("minimum", "12000", "28.00", "28.00", "§ 3.1"),
                            ("consumption", "18000", "2.40", "43.20", "§ 3.1")]
    assert first["total"] == "71.20"


@pytest.mark.citation("§ 4.2")
def test_due_when_rendered_and_ten_percent_once_on_bill_date_plus_31_days(village):
    # Nothing on 2026-03-03 (30 days past the bill date: not yet "in excess of thirty days").
    assert charges("1-0001", "2026-03-03") == []
    # 10% of $71.20 = $7.12 on 2026-03-04, once: nothing more by 2026-05-10.
    assert charges("1-0001", "2026-05-10") == [("penalty", "2026-03-04", "7.12", "§ 4.2")]
    assert statement("1-0001", "2026-05-10")["balance"] == "78.32"  # 71.20 + 7.12


@pytest.mark.citation("§ 4.2")
def test_a_partial_payment_before_the_penalty_day_leaves_the_penalty_on_the_unpaid_part(village):
    # $71.20 − $50.00 = $21.20 unpaid on 2026-03-04: 10% = $2.12.
    assert charges("1-0002", "2026-05-10") == [("penalty", "2026-03-04", "2.12", "§ 4.2")]
    assert statement("1-0002", "2026-05-10")["balance"] == "23.32"


@pytest.mark.citation("§ 4.2")
def test_paid_on_the_penalty_day_still_owes_the_penalty_paid_the_day_before_owes_none(village):
    # Unpaid at the end of day 30: the penalty is owed at the start of 2026-03-04, whatever the payment's hour.
    assert charges("1-0003", "2026-05-10") == [("penalty", "2026-03-04", "7.12", "§ 4.2")]
    assert statement("1-0003", "2026-05-10")["balance"] == "7.12"
    assert charges("1-0004", "2026-05-10") == []


@pytest.mark.citation("§ 3.7")
def test_a_miscellaneous_charge_is_carried_on_the_next_bill(village):
    cmd("charge_fee", "1-0004", "final_reading", "--date", "2026-03-10")
    bill("2026-05-01")
    may = statement("1-0004", "2026-05-01")["bills"][-1]
    # 1,040,000 − 1,030,000 = 10,000 gal, within the minimum's 12,000: $28.00; the final reading, sample $25.00.
    assert lines(may) == [("minimum", "12000", "28.00", "28.00", "§ 3.1"),
                          ("fee", "1", "25.00", "25.00", "§ 3.7")]
    assert (may["bill_date"], may["due_date"], may["total"]) == ("2026-05-01", "2026-05-01", "53.00")


@pytest.mark.citation("§ 2.4")
def test_no_new_service_while_the_owner_owes_arrears(village):
    from django.core.management.base import CommandError

    from billing.models import PendingCharge

    # Owner 1 owes $78.32 past due on 2026-05-10 (the bill and its penalty): the application is refused,
    # naming the arrears and the section, and nothing is charged.
    with pytest.raises(CommandError) as refused:
        cmd("charge_fee", "1-0001", "new_service", "--date", "2026-05-10")
    assert "$78.32 on account 1-0001" in str(refused.value) and "§ 2.4" in str(refused.value)
    assert not PendingCharge.objects.filter(account__account_no="1-0001").exists()
    # Owner 4 paid in full before the penalty day: the installation charge (sample $500.00, § 3.4) is taken.
    cmd("charge_fee", "1-0004", "new_service", "--date", "2026-05-10")
    assert PendingCharge.objects.get(account__account_no="1-0004").amount.amount == 500
