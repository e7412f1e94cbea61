"""Each report on the small billed village of ``steps.py``, in dollars worked out by hand, and its totals tied
to the ledger: the register's total is the sum of its bills (and of their ledger charges), the aging total the
sum of every account's balance, the relevy total the aging's past-due amounts, the receipts' total the sum of
the payments. The sums are Python's Decimal sums, on SQLite and on PostgreSQL alike."""

from datetime import date
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Account
from billing.ledger.selectors import account_balances
from billing.models import Bill, LedgerEntry, Payment
from billing.selectors import account_statement
from billing.services.adjustments import bill_void
from ordinance.install import preset_install
from ordinance.selectors import section
from reports import selectors
from reports.catalog import report_build
from reports.render import report_view
from tests.billing.steps import account_with_meter, read, run

from .steps import ON, billed_village

pytestmark = pytest.mark.django_db
D = Decimal
AS_OF = date(2026, 5, 10)


@pytest.fixture
def village(mineola):
    return billed_village()


# --- register ---------------------------------------------------------------------------------------------

@pytest.mark.citation("§ 45.28 A(1)")
def test_the_register_lists_a_bill_dates_bills_by_book_and_their_lines_by_kind_and_citation(village):
    r = selectors.register(bill_date=date(2026, 2, 1))
    assert [(b.book, b.account_no, b.gallons, b.total) for b in r.bills] == [
        (1, "1-0001", 62_500, D("186.13")), (1, "1-0002", 20_000, D("45.00")), (1, "1-0003", 30_000, D("76.00")),
        (1, "1-0004", 10_000, D("45.00"))]
    assert [(b.book, b.bills, b.gallons, b.total) for b in r.books] == [(1, 4, 122_500, D("352.13"))]
    # Four minimums of $45.00; the consumption blocks: $93.00 + $48.13 (1-0001) and $31.00 (1-0003).
    assert [(line.kind, line.citation, line.count, line.amount) for line in r.lines] == [
        ("minimum", "§ 45.28 A(1), A(2)(a)", 4, D("180.00")), ("consumption", "§ 45.28 A(1)", 3, D("172.13"))]
    assert (r.gallons, r.total) == (122_500, D("352.13"))


def test_the_register_total_ties_to_the_bills_and_to_the_ledger(village):
    r = selectors.register(bill_date=date(2026, 2, 1))
    bills = Bill.objects.filter(bill_date=date(2026, 2, 1)).exclude(status="void")
    assert r.total == sum((b.total.amount for b in bills), D(0)) == D("352.13")
    assert r.total == sum((line.amount for line in r.lines), D(0))
    charged = LedgerEntry.objects.filter(bill__in=bills, kind__in=["water", "fee", "fine"])
    assert r.total == sum((e.amount.amount for e in charged), D(0))


def test_the_register_leaves_a_voided_bill_out_and_shows_the_bill_that_replaced_it(village):
    bill = Bill.objects.get(account__account_no="1-0002")
    bill_void(bill=bill, reason="misread meter", as_of=date(2026, 2, 15), actor=None)
    assert [b.account_no for b in selectors.register(bill_date=date(2026, 2, 1)).bills] == ["1-0001", "1-0003",
                                                                                              "1-0004"]
    run("run_billing", "--date", "2026-02-01")  # bills the voided period again
    r = selectors.register(bill_date=date(2026, 2, 1))
    assert [b.account_no for b in r.bills] == ["1-0001", "1-0002", "1-0003", "1-0004"]
    assert r.bills[1].number != bill.number and r.total == D("352.13")


def test_the_registers_bill_date_is_the_latest_on_or_before_the_date_unless_given(village):
    assert report_build(name="register", as_of=AS_OF).bill_date == date(2026, 3, 1)
    assert report_build(name="register", as_of=date(2026, 2, 20)).bill_date == date(2026, 2, 1)
    assert report_build(name="register", as_of=AS_OF, bill_date=date(2026, 2, 1)).total == D("352.13")


# --- aging ------------------------------------------------------------------------------------------------

@pytest.mark.citation("§ 45.29 E")
def test_aging_splits_each_balance_by_days_past_the_due_date_of_its_bill(village):
    a = selectors.aging(as_of=AS_OF)
    zero = D("0.00")
    assert [(row.account_no, row.buckets) for row in a.rows] == [
        # Due 2026-03-01: 70 days past due on 2026-05-10, penalties with their bill.
        ("1-0001", (zero, zero, zero, D("199.16"), zero, zero)),
        ("1-0003", (zero, zero, zero, D("27.82"), zero, zero)),
        # Paid $15.00 more than billed: a credit, shown as a negative current amount.
        ("1-0004", (D("-15.00"), zero, zero, zero, zero, zero)),
        # Due 2026-04-01: 39 days past due.
        ("3-0001", (zero, zero, D("113.42"), zero, zero, zero))]
    assert a.totals == (D("-15.00"), zero, D("113.42"), D("226.98"), zero, zero)
    assert a.total == D("325.40")


def test_the_aging_total_is_the_sum_of_every_accounts_balance(village):
    a = selectors.aging(as_of=AS_OF)
    ids = list(Account.objects.values_list("id", flat=True))
    balances = account_balances(ids, through=AS_OF)
    assert a.total == sum((state.balance for state in balances.values()), D(0)) == D("325.40")
    statements = {account.account_no: D(account_statement(account=account, as_of=AS_OF)["balance"])
                  for account in Account.objects.all()}
    assert {row.account_no: row.balance for row in a.rows} == {no: b for no, b in statements.items() if b}
    assert "1-0002" not in {row.account_no for row in a.rows}  # paid in full: a zero balance is left out


def test_an_amount_is_current_until_its_due_date_has_passed(village):
    # 2026-03-01 is 1-0001's due date ("payable on or before", § 45.29 D): current; the day after, 1-30.
    on_due = {row.account_no: row.buckets for row in selectors.aging(as_of=date(2026, 3, 1)).rows}
    assert on_due["1-0001"][0] == D("186.13") and on_due["3-0001"][0] == D("107.00")
    after = {row.account_no: row.buckets for row in selectors.aging(as_of=date(2026, 3, 2)).rows}
    assert after["1-0001"][1] == D("195.44")  # $186.13 and the 5% penalty of that day, $9.31


def test_the_aging_buckets_by_days_past_due():
    assert [selectors.aging_bucket(days) for days in (-5, 0, 1, 30, 31, 60, 61, 90, 91, 120, 121, 900)] == [
        0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]


# --- delinquency ------------------------------------------------------------------------------------------

@pytest.mark.citation("§ 45.31")
def test_the_delinquency_list_is_the_termination_candidates_with_their_open_case(village):
    from tests.termination.steps import term

    number = term("open", "1-0001", "--grounds", "nonpayment", date_="2026-04-01")
    d = selectors.delinquency(as_of=AS_OF)
    assert d.citation == "§ 45.31"
    assert [(row.account_no, row.bills, row.delinquent_from, row.amount, row.case_number) for row in d.rows] == [
        ("1-0001", "202602-1-0001", date(2026, 3, 2), D("199.16"), number),
        ("1-0003", "202602-1-0003", date(2026, 3, 2), D("27.82"), ""),
        ("3-0001", "202603-3-0001", date(2026, 4, 2), D("113.42"), "")]
    assert (d.total, d.with_case) == (D("340.40"), 1)


# --- relevy -----------------------------------------------------------------------------------------------

@pytest.mark.citation("§ 45.29 F")
def test_the_relevy_list_gives_unpaid_charges_and_late_charges_apart_by_sbl(village):
    for number, sbl in (("1-0001", "9-10-3"), ("1-0003", "9-2-14"), ("3-0001", "")):
        premises = village[number].premises
        premises.sbl = sbl
        premises.save()
    r = selectors.relevy(levy_on=AS_OF)
    assert r.lien.citation == "§ 45.29 F; Village Law § 11-1118"
    assert [(row.sbl, row.account_no, row.charges, row.late_charges, row.total) for row in r.rows] == [
        ("9-2-14", "1-0003", D("26.00"), D("1.82"), D("27.82")),  # block 2 before block 10
        ("9-10-3", "1-0001", D("186.13"), D("13.03"), D("199.16")),  # $9.31 + $1.86 + $1.86
        ("", "3-0001", D("107.00"), D("6.42"), D("113.42"))]  # $5.35 + $1.07; no SBL: last, and said
    owner = village["1-0001"].owner
    assert (r.rows[1].owner, r.rows[1].owner_address) == (owner.name, ", ".join(owner.mailing_address.splitlines()))
    assert (r.charges, r.late_charges, r.total, r.without_sbl) == (D("319.13"), D("21.27"), D("340.40"), 1)
    assert r.late_charges_not_posted == 0


def test_the_relevy_total_is_the_aging_past_due_amount_on_the_levy_date(village):
    a = selectors.aging(as_of=AS_OF)
    past_due = sum((amount for row in a.rows for amount in row.buckets[1:]), D(0))
    assert selectors.relevy(levy_on=AS_OF).total == past_due == D("340.40")
    # On 2026-04-01 book 3's bill is not yet past due: only book 1's unpaid bills are on the list.
    assert [row.account_no for row in selectors.relevy(levy_on=date(2026, 4, 1)).rows] == ["1-0001", "1-0003"]


@pytest.mark.citation("§ 45.29 E")
def test_the_relevy_list_says_when_penalties_owed_through_the_levy_date_are_not_posted(village):
    # Assessed through 2026-05-10 only: 2026-06-02's 1% on 1-0001 ($1.86), 1-0003 ($0.26) and 3-0001 ($1.07).
    r = selectors.relevy(levy_on=date(2026, 6, 5))
    assert r.late_charges_not_posted == D("3.19")
    assert ("Penalties and interest owed through the levy date differ from those posted by $3.19: run "
            "assess_penalties --date 2026-06-05 first.") in report_view(r).notes
    run("assess_penalties", "--date", "2026-06-05")
    assert selectors.relevy(levy_on=date(2026, 6, 5)).late_charges_not_posted == 0


@pytest.mark.parametrize(("preset", "citation", "policy"), [
    pytest.param("mineola", "§ 45.29 F; Village Law § 11-1118", False, marks=pytest.mark.citation("§ 45.29 F")),
    pytest.param("washingtonville", "§ 169-24; Village Law § 11-1118", False, marks=pytest.mark.citation("§ 169-24")),
    pytest.param("south_farmingdale", "§ 4.2", False, marks=pytest.mark.citation("§ 4.2")),
    pytest.param("lansing", "policy", True, marks=pytest.mark.citation("policy")),
    pytest.param("old_westbury", "policy", True, marks=pytest.mark.citation("policy")),
])
def test_each_preset_names_its_lien_and_relevy_section(db, preset, citation, policy):
    preset_install(code=preset, mark_demo_site=True)
    rule = section("lien")
    assert (rule.citation, rule.is_policy) == (citation, policy)
    assert rule.words and rule.list_for


def test_tax_map_order_compares_numbers_as_numbers():
    sbls = ["9-10-1", "9-2-10", "9-2-9", "", "10-1-1", "9-2-9A", "43.-1-5"]
    assert sorted(sbls, key=selectors.sbl_order) == ["9-2-9", "9-2-9A", "9-2-10", "9-10-1", "10-1-1", "43.-1-5", ""]


# --- receipts ---------------------------------------------------------------------------------------------

def test_receipts_by_day_and_source_total_the_payments_of_the_range(village):
    r = selectors.receipts(start=date(2026, 2, 1), end=date(2026, 2, 28))
    assert [(line.day, line.source, line.count, line.total) for line in r.lines] == [
        (date(2026, 2, 10), "api", 1, D("60.00")), (date(2026, 2, 20), "counter", 1, D("45.00")),
        (date(2026, 2, 25), "import", 1, D("50.00"))]
    assert [(line.source, line.count, line.total) for line in r.sources] == [
        ("api", 1, D("60.00")), ("counter", 1, D("45.00")), ("import", 1, D("50.00"))]
    assert (r.count, r.total) == (3, D("155.00"))
    payments = Payment.objects.filter(paid_on__range=(date(2026, 2, 1), date(2026, 2, 28)))
    assert r.total == sum((p.amount.amount for p in payments), D(0))


def test_receipts_take_both_ends_of_the_range_and_default_to_the_date_alone(village):
    assert selectors.receipts(start=date(2026, 2, 10), end=date(2026, 2, 20)).total == D("105.00")
    assert selectors.receipts(start=date(2026, 2, 11), end=date(2026, 2, 19)).total == D("0")
    one_day = report_build(name="receipts", as_of=date(2026, 2, 25))
    assert (one_day.start, one_day.end, one_day.total) == (date(2026, 2, 25), date(2026, 2, 25), D("50.00"))
    since = report_build(name="receipts", as_of=date(2026, 2, 28), start=date(2026, 2, 15))
    assert (since.start, since.end, since.total) == (date(2026, 2, 15), date(2026, 2, 28), D("95.00"))


# --- a fixed number of queries ------------------------------------------------------------------------------

def _queries(fn) -> int:
    with CaptureQueriesContext(connection) as ctx:
        fn()
    return len(ctx.captured_queries)


def test_each_report_reads_in_a_fixed_number_of_queries_whatever_the_number_of_accounts(village):
    reports = {
        "register": lambda: selectors.register(bill_date=date(2026, 2, 1)),
        "aging": lambda: selectors.aging(as_of=AS_OF),
        "relevy": lambda: selectors.relevy(levy_on=AS_OF),
        "receipts": lambda: selectors.receipts(start=date(2026, 2, 1), end=date(2026, 2, 28)),
    }
    before = {name: _queries(fn) for name, fn in reports.items()}
    for n in range(5, 11):
        account, meter = account_with_meter(book=1, account_no=f"1-{n:04d}")
        read(meter, date(2026, 1, 12), 1_030_000)
    run("run_billing", "--date", "2026-02-01")
    run("assess_penalties", "--date", ON)
    assert len(selectors.aging(as_of=AS_OF).rows) == 10
    assert {name: _queries(fn) for name, fn in reports.items()} == before
