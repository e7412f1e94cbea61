"""Washingtonville (Chapter 169) worked examples through the commands a clerk runs: setup_utility →
import accounts → import readings → run billing → import payments → assess penalties → statement.

Sample rates (§§ 169-25, 169-26): a quarterly bill is $35.00 including 10,000 gal, then $6.25 per 1,000.
Bills are dated Feb/May/Aug/Nov 1 from the reading of the month before and due 30 days after the bill date.
§ 169-26: interest 2% of the unpaid rents on bill date + 31 days and each monthly anniversary of that day;
every February 1, a penalty of 5% of the unpaid rents plus the interest still unpaid, on bills past due.
"""

import io
import json
from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import transaction
from django.db.models import F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing.models import Bill, LedgerEntry

pytestmark = pytest.mark.django_db

HEADER = ("account_no,book,category,owner_name,owner_address,occupant_name,service_address,sbl,meter_serial,"
          "meter_size,meter_unit,initial_reading,initial_read_date\n")
# W-1: read 2025-10-20 → bill 2025-11-01, due 2025-12-01. W-2: read 2025-07-20 → bill 2025-08-01, due
# 2025-08-31.
ACCOUNTS = {
    "1-0001": "1-0001,1,one_two_family,Rose Kelly,\"3 Main St, Washingtonville, NY 10992\",,3 Main St,"
              "101-1-1,WV0001,5/8,gal,0,2025-07-15\n",
    "1-0002": "1-0002,1,one_two_family,Sam Ortiz,\"9 Oak Ln, Washingtonville, NY 10992\",,9 Oak Ln,"
              "101-1-2,WV0002,5/8,gal,0,2025-04-15\n",
}
READINGS = {
    "1-0001": "WV0001,2025-10-20,18000,actual\n",
    "1-0002": "WV0002,2025-07-20,30000,actual\n",
}
BILL_DATE = {"1-0001": "2025-11-01", "1-0002": "2025-08-01"}


def cmd(*args):
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def statement(account_no, on):
    return json.loads(cmd("statement", account_no, "--json", "--date", on))


def charges(data):
    return [(c["kind"], c["date"], c["amount"]) for c in data["charges"]]


@pytest.fixture
def washingtonville(db):
    cmd("setup_utility", "washingtonville", "--demo", "0", "--date", "2025-01-01")


@pytest.fixture
def village(washingtonville, tmp_path):
    """Set up one account, read and billed: ``village("1-0001")``."""

    def make(account_no):
        accounts, readings = tmp_path / "accounts.csv", tmp_path / "readings.csv"
        accounts.write_text(HEADER + ACCOUNTS[account_no])
        readings.write_text("meter_serial,read_date,reading,read_type\n" + READINGS[account_no])
        cmd("import_accounts", str(accounts), "--date", "2025-10-31")
        cmd("import_readings", str(readings), "--date", "2025-10-31")
        cmd("run_billing", "--date", BILL_DATE[account_no], "--no-progress")
        return account_no

    return make


def pay(tmp_path, account_no, amount, paid_on, reference, *, imported_on=None):
    path = tmp_path / f"pay-{reference}.csv"
    path.write_text(f"account_no,amount,paid_on,reference\n{account_no},{amount},{paid_on},{reference}\n")
    cmd("import_payments", str(path), "--date", imported_on or paid_on)


def assess(on):
    return cmd("assess_penalties", "--date", on, "--no-progress")


@pytest.mark.citation("§§ 169-25, 169-26")
def test_a_quarterly_bill(village):
    village("1-0001")
    (bill,) = statement("1-0001", "2025-11-01")["bills"]
    # 18,000 gal: $35.00 minimum including 10,000 gal + 8,000 gal × $6.25/1,000 = $50.00 → $85.00.
    assert (bill["bill_date"], bill["due_date"], bill["period_end"], bill["gallons"], bill["total"]) == (
        "2025-11-01", "2025-12-01", "2025-10-20", 18000, "85.00")
    assert [(line["kind"], line["quantity"], line["rate"], line["amount"], line["citation"])
            for line in bill["lines"]] == [
        ("minimum", "10000", "35.00", "35.00", "§§ 169-25, 169-26"),
        ("consumption", "8000", "6.25", "50.00", "§§ 169-25, 169-26")]


@pytest.mark.citation("§ 169-26")
def test_paid_on_the_thirtieth_day_owes_no_interest(village, tmp_path):
    village("1-0001")
    pay(tmp_path, "1-0001", "85.00", "2025-12-01", "CHK-1")  # bill date + 30: "within 30 days"
    assess("2026-03-10")
    data = statement("1-0001", "2026-03-10")
    assert data["charges"] == [] and data["balance"] == "0.00"


@pytest.mark.citation("§ 169-26")
def test_interest_monthly_and_the_february_penalty_on_rents_and_interest(village):
    village("1-0001")
    for day in ("2025-12-02", "2026-01-02", "2026-02-01", "2026-02-02", "2026-03-02"):
        assess(day)
    data = statement("1-0001", "2026-03-10")
    # Interest 2% of $85.00 = $1.70 on 12/2 (bill date + 31 days) and each month after (1/2, 2/2, 3/2).
    # February 1: 5% of ($85.00 rents + $3.40 interest so far) = 5% of $88.40 = $4.42.
    # Balance 85.00 + 4 × 1.70 + 4.42 = 96.22.
    assert charges(data) == [
        ("interest", "2025-12-02", "1.70"), ("interest", "2026-01-02", "1.70"), ("penalty", "2026-02-01", "4.42"),
        ("interest", "2026-02-02", "1.70"), ("interest", "2026-03-02", "1.70")]
    assert {c["citation"] for c in data["charges"]} == {"§ 169-26"}
    assert data["balance"] == "96.22"
    # The penalty is 5% once a year: it never charges interest on itself nor on earlier penalties.
    assert data["bills"][0]["balance"] == "85.00"


@pytest.mark.citation("§ 169-26")
def test_a_partial_payment_a_payment_on_an_interest_day_and_the_penalty_on_the_same_day_as_interest(
        village, tmp_path):
    village("1-0002")
    # Bill 2025-08-01: 30,000 gal → $35.00 + 20,000 × $6.25/1,000 = $125.00 → $160.00, due 2025-08-31.
    assess("2025-09-10")   # 9/1: interest 2% of 160.00 = 3.20
    pay(tmp_path, "1-0002", "100.00", "2025-09-15", "CHK-1")  # principal first: 60.00 rents left
    assess("2025-10-01")   # 2% of 60.00 = 1.20
    pay(tmp_path, "1-0002", "20.00", "2025-11-01", "CHK-2")   # on an interest day
    assess("2025-11-01")   # the day's interest reads the account at the start of the day: 2% of 60.00 = 1.20
    assess("2026-02-10")   # 12/1, 1/1: 2% of 40.00 = 0.80 each; 2/1: interest 0.80 and the February penalty
    data = statement("1-0002", "2026-02-10")
    # February 1: rents 40.00 + interest charged before that day and unpaid (3.20 + 1.20 + 1.20 + 0.80 + 0.80
    # = 7.20; both payments went to rents) = 47.20 → 5% = 2.36, its own entry beside that day's interest.
    assert charges(data) == [
        ("interest", "2025-09-01", "3.20"), ("interest", "2025-10-01", "1.20"), ("interest", "2025-11-01", "1.20"),
        ("interest", "2025-12-01", "0.80"), ("interest", "2026-01-01", "0.80"), ("interest", "2026-02-01", "0.80"),
        ("penalty", "2026-02-01", "2.36")]
    by_kind = {c["kind"]: (c["citation"], c["bill"]) for c in data["charges"]}
    assert by_kind["interest"] == by_kind["penalty"] == ("§ 169-26", data["bills"][0]["number"])
    assert "February 1 penalty" in data["charges"][-1]["description"]
    # 40.00 + 7.20 + 0.80 + 2.36
    assert data["balance"] == "50.36"
    assert LedgerEntry.objects.filter(kind="interest", posted_on=date(2026, 2, 1)).count() == 1
    assert LedgerEntry.objects.filter(kind="penalty", posted_on=date(2026, 2, 1)).count() == 1


@pytest.mark.citation("§ 169-26")
@pytest.mark.citation("policy: payment order")
def test_interest_paid_before_february_is_not_in_the_penalty(village, tmp_path):
    village("1-0002")
    pay(tmp_path, "1-0002", "100.00", "2025-09-15", "CHK-1")
    pay(tmp_path, "1-0002", "20.00", "2025-11-01", "CHK-2")
    # Interest 3.20 (9/1), 1.20 (10/1), 1.20 (11/1), 0.80 (12/1), 0.80 (1/1) = 7.20 by Jan 20; rents 40.00.
    # $45.00 on Jan 20 pays the 40.00 rents first, then 5.00 of the interest: 2.20 interest left unpaid.
    pay(tmp_path, "1-0002", "45.00", "2026-01-20", "CHK-3")
    assess("2026-03-10")
    data = statement("1-0002", "2026-03-10")
    # February 1: no rents unpaid, so no interest; the penalty is 5% of the 2.20 interest = 0.11.
    assert charges(data)[-1] == ("penalty", "2026-02-01", "0.11")
    assert [c for c in charges(data) if c[1] >= "2026-02-01"] == [("penalty", "2026-02-01", "0.11")]
    assert data["balance"] == "2.31"


@pytest.mark.citation("§ 169-26")
def test_catch_up_gives_the_same_books_as_daily(village, tmp_path):
    village("1-0002")
    pay(tmp_path, "1-0002", "100.00", "2025-09-15", "CHK-1")
    with transaction.atomic():
        day = date(2025, 8, 31)
        while day <= date(2026, 3, 10):
            assess(day.isoformat())
            day += timedelta(days=1)
        daily = statement("1-0002", "2026-03-10")
        transaction.set_rollback(True)
    assert "posted" in assess("2026-03-10")
    catch_up = statement("1-0002", "2026-03-10")
    assert charges(daily) == charges(catch_up) and daily["balance"] == catch_up["balance"]
    # 60.00 rents from 9/15: interest 3.20 (9/1), then 1.20 a month from 10/1 to 3/1 (6 × 1.20 = 7.20);
    # February 1: 5% of (60.00 + interest before it, 3.20 + 4 × 1.20 = 8.00) = 5% of 68.00 = 3.40.
    assert ("penalty", "2026-02-01", "3.40") in charges(catch_up)
    assert catch_up["balance"] == "73.80"  # 60.00 + 3.20 + 7.20 + 3.40


@pytest.mark.citation("§ 169-26")
def test_a_payment_imported_late_corrects_interest_and_the_penalty(village, tmp_path):
    village("1-0001")
    assess("2026-03-10")
    assert statement("1-0001", "2026-03-10")["balance"] == "96.22"
    # Paid on the due date, the bank file arrived in March: every interest charge and the penalty go.
    pay(tmp_path, "1-0001", "85.00", "2025-12-01", "MAILED", imported_on="2026-03-10")
    data = statement("1-0001", "2026-03-10")
    assert data["charges"] == [] and data["balance"] == "0.00"
    assert LedgerEntry.objects.filter(kind="interest_correction").count() == 4
    assert LedgerEntry.objects.filter(kind="penalty_correction").count() == 1
    assert "0 posted" in assess("2026-03-10")


@pytest.mark.citation("§ 169-23")
@pytest.mark.citation("§ 169-26")
def test_a_fee_goes_on_the_next_bill_and_draws_no_interest_only_water_rents_do(washingtonville, tmp_path):
    accounts = tmp_path / "accounts.csv"
    accounts.write_text(HEADER + ACCOUNTS["1-0001"])
    cmd("import_accounts", str(accounts), "--date", "2025-10-31")
    cmd("charge_fee", "1-0001", "vacancy_shut_off", "--date", "2025-10-15")
    readings = tmp_path / "readings.csv"
    readings.write_text("meter_serial,read_date,reading,read_type\n" + READINGS["1-0001"])
    cmd("import_readings", str(readings), "--date", "2025-10-31")
    cmd("run_billing", "--date", "2025-11-01", "--no-progress")
    (bill,) = statement("1-0001", "2025-11-01")["bills"]
    # $85.00 water + $25.00 shut-off fee = $110.00; interest on 12/2 is 2% of the water rents only (§ 169-26): 2% of
    # 85.00 = 1.70, not 2% of 110.00 = 2.20.
    assert [(line["kind"], line["amount"], line["citation"]) for line in bill["lines"]][-1] == (
        "fee", "25.00", "§ 169-23")
    assert bill["total"] == "110.00"
    assess("2025-12-02")
    assert charges(statement("1-0001", "2025-12-02")) == [("interest", "2025-12-02", "1.70")]


@pytest.mark.citation("§ 169-21")
def test_fees_are_quoted_from_the_preset(washingtonville):
    from billing.models import Fee

    fees = {fee.code: (fee.amount.amount if fee.amount is not None else None, fee.citation)
            for fee in Fee.objects.all()}
    assert fees == {
        "meter_install_standard": (Decimal("500.00"), "§ 169-21"),
        "meter_install_nonstandard": (Decimal("750.00"), "§ 169-21"),
        "visitation": (Decimal("100.00"), "§ 169-21"),
        "vacancy_shut_off": (Decimal("25.00"), "§ 169-23"),
        "vacancy_turn_on": (Decimal("25.00"), "§ 169-23"),
        "hydrant_deposit": (Decimal("250.00"), "§ 169-4"),  # held for the customer, never charged
        "meter_test": (Decimal("20.00"), "§ 169-22"),  # unless the meter registers over 3% fast
        # § 169-26 "the cost of discontinuing and restoring": sample values, the § 169-23 amounts.
        "discontinue": (Decimal("25.00"), "§ 169-26"),
        "restore": (Decimal("25.00"), "§ 169-26"),
        # § 169-37: up to $250 a day, the amount the clerk imposes on the notice (backflow fine --post).
        "backflow_fine": (None, "§ 169-37"),
    }


# --- Any order, same books -------------------------------------------------------------------------------

FIRST_DAY, LAST_DAY = date(2025, 8, 1), date(2026, 4, 30)


def books(account_no) -> tuple:
    """Every charge and credit by kind, bill and day, a late charge net of its corrections, and the
    balance."""
    net: dict[tuple, Decimal] = defaultdict(Decimal)
    for entry in LedgerEntry.objects.filter(account__account_no=account_no).select_related("bill", "payment"):
        kind = {"penalty_correction": "penalty", "interest_correction": "interest"}.get(entry.kind, entry.kind)
        key = (kind, entry.bill.bill_date if entry.bill_id else None,
               entry.payment.reference if entry.payment_id else None, entry.posted_on)
        net[key] += entry.amount.amount
    return (tuple(sorted((k, v) for k, v in net.items() if v)),
            statement(account_no, LAST_DAY.isoformat())["balance"])


def replay(tmp_path, payments, *, assess_on, lags) -> tuple:
    """Jobs in the order an office would see them, then a final assessment; rolled back."""
    events = [(d, 1, ("assess", d)) for d in assess_on]
    events += [(paid_on + timedelta(days=lag), 0, ("pay", i)) for i, ((paid_on, _), lag) in
               enumerate(zip(payments, lags, strict=True))]
    with transaction.atomic():
        for when, _, (what, value) in sorted(events):
            if what == "assess":
                assess(value.isoformat())
            else:
                paid_on, amount = payments[value]
                pay(tmp_path, "1-0002", f"{amount:.2f}", paid_on.isoformat(), f"P-{value}",
                    imported_on=when.isoformat())
        assess(LAST_DAY.isoformat())
        result = books("1-0002")
        transaction.set_rollback(True)
    return result


@pytest.fixture
def two_bills(village, tmp_path):
    """W-2 billed 2025-08-01 ($160.00, above) and 2025-11-01: read 2025-10-20 at 36,000 → 6,000 gal, the
    $35.00 minimum; interest falls on the 1st (Aug bill) and the 2nd (Nov bill), the penalty on 2026-02-01."""
    village("1-0002")
    readings = tmp_path / "more.csv"
    readings.write_text("meter_serial,read_date,reading,read_type\nWV0002,2025-10-20,36000,actual\n")
    cmd("import_readings", str(readings), "--date", "2025-10-31")
    cmd("run_billing", "--date", "2025-11-01", "--no-progress")
    assert Bill.objects.count() == 2


@pytest.mark.citation("§ 169-26")
def test_daily_weekly_and_catch_up_with_late_imports_give_the_same_books(two_bills, tmp_path):
    payments = [(date(2025, 9, 1), Decimal("100.00")), (date(2025, 12, 2), Decimal("80.00")),
                (date(2026, 2, 1), Decimal("30.00"))]
    days = [FIRST_DAY + timedelta(days=n) for n in range((LAST_DAY - FIRST_DAY).days + 1)]
    catch_up = replay(tmp_path, payments, assess_on=[], lags=[0, 0, 0])
    daily = replay(tmp_path, payments, assess_on=days, lags=[0, 0, 0])
    weekly_late = replay(tmp_path, payments, assess_on=days[::7], lags=[5, 31, 40])
    assert daily == catch_up == weekly_late
    kinds = {key[0] for key, _ in catch_up[0]}
    assert {"interest", "penalty"} <= kinds


days_in_range = st.integers(min_value=0, max_value=(LAST_DAY - FIRST_DAY).days).map(
    lambda n: FIRST_DAY + timedelta(days=n))


@st.composite
def schedules(draw):
    payments = draw(st.lists(st.tuples(days_in_range, st.decimals(min_value=Decimal("0.01"),
                                                                   max_value=Decimal("250"), places=2)),
                             max_size=4))
    assess_on = sorted(set(draw(st.lists(days_in_range, max_size=8))))
    lags = draw(st.lists(st.integers(min_value=0, max_value=60), min_size=len(payments), max_size=len(payments)))
    return payments, assess_on, lags


@pytest.mark.citation("§ 169-26")
def test_any_schedule_of_assessments_and_imports_gives_the_same_books(two_bills, tmp_path):
    @settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
    @given(schedule=schedules())
    def check(schedule):
        payments, assess_on, lags = schedule
        reference = replay(tmp_path, payments, assess_on=[], lags=[0] * len(payments))
        assert replay(tmp_path, payments, assess_on=assess_on, lags=lags) == reference

    check()


@pytest.mark.citation("§ 169-26")
def test_setup_utility_builds_a_demo_village_that_bills_quarterly(db):
    cmd("setup_utility", "washingtonville", "--demo", "12", "--date", "2026-03-31")
    for day in ("2025-11-01", "2026-02-01"):
        assert "12 bills issued" in cmd("run_billing", "--date", day, "--no-progress")
    assess("2026-03-31")
    kinds = set(LedgerEntry.objects.values_list("kind", flat=True))
    assert {"water", "interest", "penalty"} <= kinds  # nobody in a demo village pays
    assert not Bill.objects.exclude(due_date=F("bill_date") + timedelta(days=30)).exists()
