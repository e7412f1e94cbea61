"""The relevy's late charges owed and not posted: a bill paid in full but late before the assessment ran, and
what the nightly assessment posted and what changed since.

Book 1 billed 2026-02-01, due 2026-03-01 (§ 45.29 A, D), no penalty assessed: 1-0001 $186.13 (docs/ordinances.md's
worked example) paid in full 2026-03-10, 1-0002 the $45.00 minimum paid on its due date, 1-0003 $76.00
paid 2026-03-02, the day the 5% falls (§ 45.29 E: a payment counts from the day after it is made). Owed
through 2026-04-10: 5% of $186.13 = $9.31 and 5% of $76.00 = $3.80; nothing on 1-0002, and no 1% on
2026-04-02 as no principal is then unpaid.
"""

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command

from billing.models import LedgerEntry
from ordinance.models import Utility
from reports import selectors
from tests.billing.steps import account_with_meter, pay, read, run

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.29 E")]
D = Decimal
LEVY_ON = date(2026, 4, 10)


@pytest.fixture
def paid_village(mineola):
    accounts = {}
    for number, gallons in (("1-0001", 62_500), ("1-0002", 20_000), ("1-0003", 30_000)):
        account, meter = account_with_meter(book=1, account_no=number)
        read(meter, date(2026, 1, 12), 1_000_000 + gallons)
        accounts[number] = account
    run("run_billing", "--date", "2026-02-01")
    pay(accounts["1-0001"], "186.13", "2026-03-10", "CHK-1")
    pay(accounts["1-0002"], "45.00", "2026-03-01", "CHK-2")
    pay(accounts["1-0003"], "76.00", "2026-03-02", "CHK-3")
    return accounts


def test_penalties_owed_on_bills_paid_late_in_full_are_reported_as_not_posted(paid_village):
    r = selectors.relevy(levy_on=LEVY_ON)
    assert r.rows == []
    assert r.late_charges_not_posted == D("13.11")  # $9.31 + $3.80


def test_once_assessed_the_late_charges_are_levied_and_nothing_is_left_not_posted(paid_village):
    # The office's floor (policy, $25.00) would leave both late charges off: lowered to list every amount.
    Utility.objects.update(list_floor=D("0.00"))
    run("assess_penalties", "--date", LEVY_ON.isoformat())
    r = selectors.relevy(levy_on=LEVY_ON)
    assert [(row.account_no, row.charges, row.late_charges) for row in r.rows] == [
        ("1-0001", D("0.00"), D("9.31")), ("1-0003", D("0.00"), D("3.80"))]
    assert (r.total, r.late_charges_not_posted) == (D("13.11"), D("0.00"))
    a = selectors.aging(as_of=LEVY_ON)
    assert sum((amount for row in a.rows for amount in row.buckets[1:]), D(0)) == r.total


# --- after the nightly assessment -------------------------------------------------------------------------

NIGHT = date(2026, 4, 1)  # the nightly job's day: 2026-03-02's 5% is on the books


@pytest.fixture
def assessed_village(mineola, monkeypatch):
    """1-0001 and 1-0002 billed $186.13 and unpaid, 1-0003 billed $186.13 and paid on time; the nightly job of
    2026-04-01 has posted the 5% of 2026-03-02, $9.31, on each unpaid bill."""
    from billing.penalties import shortcuts as penalty_shortcuts

    # Everything here happens within seconds: what is done before the nightly job counts as before it.
    monkeypatch.setattr(penalty_shortcuts, "RECORDED_MARGIN", timedelta(0), raising=False)
    accounts = {}
    for number in ("1-0001", "1-0002", "1-0003"):
        account, meter = account_with_meter(book=1, account_no=number)
        read(meter, date(2026, 1, 12), 1_062_500)
        accounts[number] = account
    run("run_billing", "--date", "2026-02-01")
    pay(accounts["1-0003"], "186.13", "2026-02-20", "ON-TIME")
    call_command("nightly", "--date", NIGHT.isoformat(), stdout=open("/dev/null", "w"))
    return accounts


def _rows(r):
    return [(row.account_no, row.charges, row.late_charges) for row in r.rows]


def test_after_the_nightly_assessment_the_relevy_still_counts_what_is_owed_and_not_posted(assessed_village):
    r = selectors.relevy(levy_on=NIGHT)
    assert _rows(r) == [("1-0001", D("186.13"), D("9.31")), ("1-0002", D("186.13"), D("9.31"))]
    assert r.late_charges_not_posted == 0
    # 2026-04-02: 1% of $186.13 = $1.86 on each unpaid bill, not yet assessed.
    assert selectors.relevy(levy_on=NIGHT + timedelta(days=1)).late_charges_not_posted == D("3.72")


def test_a_payment_recorded_after_the_nightly_assessment_and_dated_before_it_changes_what_is_owed(assessed_village):
    # A check dated 2026-02-25 (before the due date) recorded after the night: the $9.31 is no longer owed, and
    # posting the payment corrects it to nothing on its own day.
    pay(assessed_village["1-0002"], "186.13", "2026-02-25", "LATE-FILE")
    assert LedgerEntry.objects.filter(account=assessed_village["1-0002"], kind="penalty_correction").exists()
    r = selectors.relevy(levy_on=NIGHT)
    assert _rows(r) == [("1-0001", D("186.13"), D("9.31"))]
    assert r.late_charges_not_posted == 0


@pytest.mark.citation("policy: a floor under relevy lists")
def test_accounts_owing_less_than_the_floor_are_left_off_the_relevy_and_counted(paid_village):
    """Office policy: the late charges of $9.31 and $3.80 are under the $25.00 floor: left off, counted and said."""
    from reports.render import report_view

    run("assess_penalties", "--date", LEVY_ON.isoformat())
    r = selectors.relevy(levy_on=LEVY_ON)
    assert (r.rows, r.floor, r.below_floor, r.below_floor_amount) == ([], D("25.00"), 2, D("13.11"))
    notes = " ".join(report_view(r).notes)
    assert "Office policy, not the ordinance: accounts owing less than $25.00 are not put on the relevy list " \
           "(2 accounts left off)" in notes and "Together they owe $13.11." in notes
    Utility.objects.update(list_floor=D("5.00"))
    assert [row.account_no for row in selectors.relevy(levy_on=LEVY_ON).rows] == ["1-0001"]
