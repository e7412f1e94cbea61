"""Same facts, same books: what an account owes never depends on when the jobs ran.

Penalties are owed by the facts (what was unpaid at the start of each penalty day). Assessing daily,
weekly or once in catch-up, and importing a payment before or after the assessments that follow its date,
must end with identical books.
"""

from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing.models import Bill, LedgerEntry
from billing.services.adjustments import bill_void
from tests.billing.steps import account_with_meter, pay, read, run, statement

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.29 E")]


def assess(on: date) -> str:
    return run("assess_penalties", "--date", on.isoformat())


def bill_due_2026_05_01_for_129_63():
    """Book 5 (billed April 1): 47,300 gal → $45.00 + 27,300 gal × $3.10/1,000 = $84.63 → $129.63, due
    2026-05-01."""
    account, meter = account_with_meter(book=5, start=date(2025, 9, 10), value=0)
    read(meter, date(2026, 3, 10), 47_300)
    run("run_billing", "--date", "2026-04-01")
    return account


def books(account) -> tuple:
    """The account's books: every charge and credit by kind, bill and day, a penalty net of its
    corrections (a penalty corrected to nothing is as if it was never posted), and the balance."""
    net: dict[tuple, Decimal] = defaultdict(Decimal)
    for entry in LedgerEntry.objects.filter(account=account).select_related("bill", "corrects"):
        kind = "penalty" if entry.kind == LedgerEntry.Kind.PENALTY_CORRECTION else entry.kind
        key = (kind, entry.bill.bill_date if entry.bill_id else None,
               entry.payment.reference if entry.payment_id else None, entry.posted_on)
        net[key] += entry.amount.amount
    return tuple(sorted((k, v) for k, v in net.items() if v)), statement(account.account_no, "2026-11-30")["balance"]


# --- The three orders of the issue ----------------------------------------------------------------------

def test_paid_the_day_after_the_due_date_owes_the_first_penalty_whatever_the_order(mineola):
    account = bill_due_2026_05_01_for_129_63()
    # Assessed before the payment is imported: 5% of 129.63 = 6.48 (6.4815) on 2026-05-02.
    assess(date(2026, 5, 2))
    pay(account, "129.63", "2026-05-02", "LATE-1")
    assess(date(2026, 6, 10))
    first = books(account)
    assert first[1] == "6.48"
    charges = statement(account.account_no, "2026-06-10")["charges"]
    assert [(c["kind"], c["date"], c["amount"]) for c in charges] == [("penalty", "2026-05-02", "6.48")]


def test_payment_imported_first_gives_the_same_penalty(mineola):
    account = bill_due_2026_05_01_for_129_63()
    pay(account, "129.63", "2026-05-02", "LATE-1")
    assess(date(2026, 5, 2))
    assess(date(2026, 6, 10))
    assert books(account)[1] == "6.48"
    assert LedgerEntry.objects.filter(kind="penalty").count() == 1


def test_one_catch_up_run_gives_the_same_penalty(mineola):
    account = bill_due_2026_05_01_for_129_63()
    pay(account, "129.63", "2026-05-02", "LATE-1")
    assert "1 posted" in assess(date(2026, 6, 10))
    assert books(account)[1] == "6.48"


def test_the_three_orders_give_identical_books(mineola):
    results = []
    for order in ("assess-then-import", "import-then-assess", "catch-up"):
        with transaction.atomic():
            account = bill_due_2026_05_01_for_129_63()
            if order == "assess-then-import":
                assess(date(2026, 5, 2))
                pay(account, "129.63", "2026-05-02", "LATE-1")
            elif order == "import-then-assess":
                pay(account, "129.63", "2026-05-02", "LATE-1")
                assess(date(2026, 5, 2))
            else:
                pay(account, "129.63", "2026-05-02", "LATE-1")
            assess(date(2026, 6, 10))
            results.append(books(account))
            transaction.set_rollback(True)
    assert results[0] == results[1] == results[2]


def test_a_payment_dated_on_time_but_imported_after_the_penalties_takes_them_back(mineola):
    account = bill_due_2026_05_01_for_129_63()
    assess(date(2026, 6, 10))  # 6.48 on 5/2, 1.30 (1.2963) on 6/2
    assert statement(account.account_no, "2026-06-10")["balance"] == "137.41"
    pay(account, "129.63", "2026-04-30", "MAILED-0430")  # on time; the bank file came late
    data = statement(account.account_no, "2026-06-10")
    assert data["balance"] == "0.00"
    assert data["charges"] == []  # the corrected penalties net to nothing and are not shown
    corrections = LedgerEntry.objects.filter(kind="penalty_correction").order_by("posted_on")
    assert [(c.posted_on, c.amount.amount) for c in corrections] == [
        (date(2026, 5, 2), Decimal("-6.48")), (date(2026, 6, 2), Decimal("-1.30"))]
    assert "0 posted" in assess(date(2026, 6, 10))  # nothing more to correct


def test_a_partial_late_payment_corrects_penalties_to_what_was_unpaid(mineola):
    account = bill_due_2026_05_01_for_129_63()
    assess(date(2026, 6, 10))
    pay(account, "100.00", "2026-04-20", "PART-0420")
    # 29.63 unpaid on 5/2: 5% = 1.48 (1.4815); on 6/2 1% = 0.30 (0.2963). Balance 29.63 + 1.48 + 0.30.
    data = statement(account.account_no, "2026-06-10")
    assert [(c["date"], c["amount"]) for c in data["charges"]] == [("2026-05-02", "1.48"), ("2026-06-02", "0.30")]
    assert data["balance"] == "31.41"


def test_voiding_a_bill_takes_back_its_penalties(mineola):
    account = bill_due_2026_05_01_for_129_63()
    assess(date(2026, 6, 10))
    bill_void(bill=Bill.objects.get(), reason="wrong meter", as_of=date(2026, 6, 10), actor=None)
    data = statement(account.account_no, "2026-06-10")
    assert data["balance"] == "0.00"
    assert [(c["kind"], c["amount"]) for c in data["charges"]] == [("void", "-129.63")]


# --- Daily, weekly and catch-up assessment; payments imported late ------------------------------------

MONTHLY_BILLS = ("2026-03-01", "2026-04-01", "2026-05-01", "2026-06-01")
FIRST_DAY, LAST_DAY = date(2026, 3, 1), date(2026, 9, 30)


def monthly_account():
    """A 2" meter ("other", Book 3, billable year from March 1): March $480.00 (the annual minimum; 70,000 of
    its 125,000 gal), April 90,000 gal − the 55,000 left = 35,000 × $3.85/1,000 = $134.75, May and June
    90,000 × $3.85/1,000 = $346.50 each."""
    account, meter = account_with_meter(book=3, category="other", size="2", start=date(2026, 1, 20), value=0)
    for month, value in ((2, 70_000), (3, 160_000), (4, 250_000), (5, 340_000)):
        read(meter, date(2026, month, 20), value)
    for bill_date in MONTHLY_BILLS:
        run("run_billing", "--date", bill_date)
    return account


def replay(account, payments, *, assess_on: list[date], lags: list[int]) -> tuple:
    """Play the jobs in the order a real office would see them, then a final assessment; roll back."""
    events = [(d, 1, ("assess", d)) for d in assess_on]
    events += [(paid_on + timedelta(days=lag), 0, ("pay", i)) for i, ((paid_on, _), lag) in
               enumerate(zip(payments, lags, strict=True))]
    with transaction.atomic():
        for _, _, (what, value) in sorted(events):
            if what == "assess":
                assess(value)
            else:
                paid_on, amount = payments[value]
                pay(account, f"{amount:.2f}", paid_on.isoformat(), f"P-{value}")
        assess(LAST_DAY)
        result = books(account)
        transaction.set_rollback(True)
    return result


def test_daily_weekly_and_catch_up_assessment_give_the_same_books(mineola):
    account = monthly_account()
    payments = [(date(2026, 4, 1), Decimal("480.00")), (date(2026, 5, 15), Decimal("100.00")),
                (date(2026, 7, 3), Decimal("700.00"))]
    days = [FIRST_DAY + timedelta(days=n) for n in range((LAST_DAY - FIRST_DAY).days + 1)]
    catch_up = replay(account, payments, assess_on=[], lags=[0, 0, 0])
    daily = replay(account, payments, assess_on=days, lags=[0, 0, 0])
    weekly_late = replay(account, payments, assess_on=days[::7], lags=[3, 20, 45])
    assert daily == catch_up == weekly_late
    assert Decimal(catch_up[1]) > 0


days_in_range = st.integers(min_value=0, max_value=(LAST_DAY - FIRST_DAY).days).map(
    lambda n: FIRST_DAY + timedelta(days=n))


@st.composite
def schedules(draw):
    payments = draw(st.lists(st.tuples(days_in_range, st.decimals(min_value=Decimal("0.01"),
                                                                   max_value=Decimal("900"), places=2)),
                             max_size=5))
    assess_on = sorted(set(draw(st.lists(days_in_range, max_size=10))))
    lags = draw(st.lists(st.integers(min_value=0, max_value=60), min_size=len(payments), max_size=len(payments)))
    return payments, assess_on, lags


def test_any_schedule_of_assessments_and_imports_gives_the_same_books(mineola):
    account = monthly_account()

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(schedule=schedules())
    def check(schedule):
        payments, assess_on, lags = schedule
        reference = replay(account, payments, assess_on=[], lags=[0] * len(payments))
        assert replay(account, payments, assess_on=assess_on, lags=lags) == reference

    check()
