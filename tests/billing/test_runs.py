"""Billing runs through the commands: exceptions, holds, idempotence, crash safety."""

import io
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from billing.models import Bill, BillingException, BillingRun, BillLine, LedgerEntry
from billing.runs.exceptions import billing_exception_release
from billing.runs.lifecycle import billing_run_chunk_execute, billing_run_create
from billing.sections import policy_from
from core.errors import ApplicationError
from meters.models import Installation, Reading
from ordinance.models import Utility
from tests.billing.steps import account_with_meter, pay, read, run, statement
from tests.factories import InstallationFactory, MeterFactory
from tests.ordinance_steps import section_set

pytestmark = pytest.mark.django_db


def test_worked_example_semiannual_book_1(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    out = run("run_billing", "--date", "2026-02-01")
    assert "1 bills issued totalling $186.13" in out
    bill = Bill.objects.get()
    assert (bill.bill_date, bill.due_date, bill.period_start, bill.period_end, bill.gallons) == (
        date(2026, 2, 1), date(2026, 3, 1), date(2025, 7, 10), date(2026, 1, 12), 62500)
    assert [line.amount.amount for line in bill.lines.all()] == [Decimal("45.00"), Decimal("93.00"),
                                                                  Decimal("48.13")]
    for day in ("2026-03-01", "2026-03-02", "2026-04-02", "2026-05-02", "2026-05-10"):
        run("assess_penalties", "--date", day)
    data = statement(account.account_no, "2026-05-10")
    assert data["balance"] == "199.16"
    assert [(c["date"], c["amount"], c["citation"]) for c in data["charges"]] == [
        ("2026-03-02", "9.31", "§ 45.29 E"), ("2026-04-02", "1.86", "§ 45.29 E"), ("2026-05-02", "1.86", "§ 45.29 E")]
    assert data["bills"][0]["total"] == "186.13" and data["bills"][0]["balance"] == "186.13"
    assert data["bills"][0]["lines"][0] == {"kind": "minimum", "description": "Minimum charge, includes 20,000 gal",
                                            "citation": "§ 45.28 A(1), A(2)(a)", "quantity": "20000",
                                            "rate": "45.00", "amount": "45.00"}


def test_penalty_catch_up_posts_each_month_on_its_own_day(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    out = run("assess_penalties", "--date", "2026-05-10")
    assert "3 posted" in out
    assert statement(account.account_no, "2026-05-10")["balance"] == "199.16"
    assert "0 posted" in run("assess_penalties", "--date", "2026-05-10")
    assert LedgerEntry.objects.filter(kind="penalty").count() == 3


def test_no_penalty_when_paid_on_the_due_date(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    pay(account, "186.13", "2026-03-01", "CHK-1")
    run("assess_penalties", "--date", "2026-05-10")
    assert statement(account.account_no, "2026-05-10")["balance"] == "0.00"
    assert not LedgerEntry.objects.filter(kind="penalty").exists()


def test_partial_payment_penalty_on_principal_then_unpaid(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    # Principal first: $100 on 2026-02-20 leaves 86.13 → 5% on 2026-03-02 = 4.31 (4.3065). $50 on
    # 2026-03-15 pays water: 86.13 − 50.00 = 36.13 unpaid principal (the 4.31 penalty waits) → 1% on
    # 2026-04-02 = 0.36 (0.3613). Balance 36.13 + 4.31 + 0.36 = 40.80.
    pay(account, "100.00", "2026-02-20", "P1")
    pay(account, "50.00", "2026-03-15", "P2")
    run("assess_penalties", "--date", "2026-04-10")
    data = statement(account.account_no, "2026-04-10")
    assert [c["amount"] for c in data["charges"]] == ["4.31", "0.36"]
    assert data["balance"] == "40.80"


def test_partial_payment_penalties_first_where_the_village_says_so(mineola):
    section_set("policy", payment_order="penalties_first")
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    # Penalties first: $50 on 2026-03-15 pays the 4.31 penalty, then 45.69 of water: 86.13 − 45.69 = 40.44
    # unpaid principal → 1% on 2026-04-02 = 0.40 (0.4044). Balance 40.44 + 0.40 = 40.84.
    pay(account, "100.00", "2026-02-20", "P1")
    pay(account, "50.00", "2026-03-15", "P2")
    run("assess_penalties", "--date", "2026-04-10")
    data = statement(account.account_no, "2026-04-10")
    assert [c["amount"] for c in data["charges"]] == ["4.31", "0.40"]
    assert data["balance"] == "40.84"


def test_december_bill_from_november_reading(mineola):
    account, meter = account_with_meter(book=9, start=date(2025, 5, 12), value=0)
    read(meter, date(2025, 11, 14), 30000)
    run("run_billing", "--date", "2025-12-01")
    bill = Bill.objects.get(account=account)
    assert (bill.bill_date, bill.due_date, bill.gallons, bill.total.amount) == (
        date(2025, 12, 1), date(2026, 1, 1), 30000, Decimal("76.00"))


def test_february_bill_from_january_reading_and_nothing_on_other_days(mineola):
    account, meter = account_with_meter(book=2, start=date(2025, 7, 15), value=500)
    read(meter, date(2026, 1, 20), 20500)
    assert "0 bills issued" in run("run_billing", "--date", "2026-01-01")
    assert "0 bills issued" in run("run_billing", "--date", "2026-02-02")
    run("run_billing", "--date", "2026-02-01")
    assert Bill.objects.get().total.amount == Decimal("45.00")


def test_monthly_meter_allowance_across_the_billable_year(mineola):
    account, meter = account_with_meter(book=3, category="other", size="2", start=date(2026, 1, 30), value=0)
    read(meter, date(2026, 2, 27), 90000)
    read(meter, date(2026, 3, 30), 150000)
    read(meter, date(2026, 4, 29), 190000)
    for day in ("2026-03-01", "2026-04-01", "2026-05-01"):
        run("run_billing", "--date", day)
    totals = list(Bill.objects.order_by("bill_date").values_list("total", flat=True))
    assert totals == [Decimal("480.00"), Decimal("96.25"), Decimal("154.00")]
    assert Bill.objects.filter(frequency="monthly").count() == 3


def test_nonprofit_monthly_above_and_below_two_million(mineola):
    account, meter = account_with_meter(book=5, category="nonprofit", size="6", start=date(2026, 3, 2), value=0)
    read(meter, date(2026, 3, 31), 2_400_000)   # April bill: 2,400,000 × 0.90 = 2,160.00
    read(meter, date(2026, 4, 30), 3_000_000)   # May bill: 600,000 gal, regular: $3,000 minimum (800,000 incl.)
    run("run_billing", "--date", "2026-04-01")
    run("run_billing", "--date", "2026-05-01")
    april, may = Bill.objects.order_by("bill_date")
    assert [(line.kind, line.amount.amount) for line in april.lines.all()] == [("nonprofit", Decimal("2160.00"))]
    assert [(line.kind, line.amount.amount) for line in may.lines.all()] == [("minimum", Decimal("3000.00"))]


def test_cubic_feet_converted_to_gallons(mineola):
    account, meter = account_with_meter(book=1, unit="cf", value=1000)
    read(meter, date(2026, 1, 12), 9000)  # 8,000 ft³ × 7.48052 = 59,844.16 → 59,844 gal
    run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get()
    # 45 + 30,000 × 3.10 = 93.00 + 9,844 × 3.85 = 37.8994 → 37.90
    assert (bill.gallons, bill.total.amount) == (59844, Decimal("175.90"))


def test_meter_change_out_within_the_period(mineola):
    account, old = account_with_meter(book=1, value=1_000_000)
    read(old, date(2025, 10, 3), 1_030_000, read_type="final")
    Installation.objects.filter(meter=old).update(removed_on=date(2025, 10, 3))
    new = MeterFactory()
    InstallationFactory(meter=new, account=account, installed_on=date(2025, 10, 3))
    read(new, date(2025, 10, 3), 0)
    read(new, date(2026, 1, 12), 32500)
    run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get()
    assert bill.gallons == 62500 and bill.total.amount == Decimal("186.13")
    assert bill.period_start == date(2025, 7, 10) and bill.end_reading.meter == new


def test_exceptions_no_reading_and_lower_reading(mineola):
    missing, _ = account_with_meter(book=1)
    lower, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 999_000)
    out = run("run_billing", "--date", "2026-02-01")
    assert "0 bills issued" in out and "2 exceptions" in out
    kinds = dict(BillingException.objects.values_list("account__account_no", "kind"))
    assert kinds == {missing.account_no: "no_reading", lower.account_no: "lower_reading"}
    assert "lower than" in BillingException.objects.get(kind="lower_reading").detail


def test_high_usage_held_then_released_and_billed(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    read(meter, date(2026, 7, 10), 1_462_500)  # 400,000 gal in 179 days vs 62,500 in 186: far over 4×
    out = run("run_billing", "--date", "2026-08-01")
    assert "0 bills issued" in out and "1 exceptions" in out
    held = BillingException.objects.get(kind="high_usage")
    assert "held for review" in held.detail
    assert "0 bills issued" in run("run_billing", "--date", "2026-08-01")
    billing_exception_release(exception=held, actor=None)
    assert "1 bills issued" in run("run_billing", "--date", "2026-08-01")
    assert Bill.objects.get(bill_date=date(2026, 8, 1)).gallons == 400000
    held.refresh_from_db()
    assert held.status == "released"


def test_the_high_usage_hold_is_the_offices_factor(mineola):
    """The hold is office policy ([policy] high_usage_factor, 4 in every preset), which the clerk may change on the
    Utility page: 400,000 gal in 179 days is 6.65× the 62,500 gal in 186 days before, held at 4×, billed at 7×."""
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    read(meter, date(2026, 7, 10), 1_462_500)
    assert Utility.objects.get().high_usage_factor == Decimal("4")
    preview = run("run_billing", "--date", "2026-08-01", "--dry-run")
    assert "over 4× the average of 336 gal/day" in preview
    Utility.objects.update(high_usage_factor=Decimal("7"))
    assert "1 bills issued" in run("run_billing", "--date", "2026-08-01")
    assert not BillingException.objects.exists()


@pytest.mark.parametrize("factor", ["1", "0.5", "four", "4.001"])
def test_a_preset_high_usage_factor_must_be_a_number_over_one(factor):
    with pytest.raises(ApplicationError, match=rf"\[policy\] high_usage_factor '{factor}' is not a number over 1"):
        policy_from({"high_usage_factor": factor})
    assert policy_from({}).high_usage_factor == Decimal("4")


def test_first_bill_is_never_held_for_high_usage(mineola):
    account, meter = account_with_meter(book=1, value=0)
    read(meter, date(2026, 1, 12), 5_000_000)
    assert "1 bills issued" in run("run_billing", "--date", "2026-02-01")


def test_rerun_bills_nothing_new(mineola):
    for _ in range(3):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    counts = (Bill.objects.count(), BillLine.objects.count(), LedgerEntry.objects.count())
    out = run("run_billing", "--date", "2026-02-01")
    assert "0 bills issued" in out and "3 already billed" in out
    assert (Bill.objects.count(), BillLine.objects.count(), LedgerEntry.objects.count()) == counts


def test_run_killed_half_way_then_rerun_gives_same_totals(mineola):
    for i in range(6):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_000_000 + 20_000 + 10_000 * i)
    killed = billing_run_create(run_on=date(2026, 2, 1), chunk_size=2)
    billing_run_chunk_execute(chunk_id=killed.chunks.get(index=0).pk)  # then the worker dies
    assert Bill.objects.count() == 2
    run("run_billing", "--date", "2026-02-01")
    totals = sorted(Bill.objects.values_list("total", flat=True))
    # 20,000..70,000 gal: 45.00, 76.00, 107.00, 138.00, 45+93+38.50=176.50, 45+93+77=215.00
    assert totals == [Decimal(x) for x in ("45.00", "76.00", "107.00", "138.00", "176.50", "215.00")]
    assert sum(totals) == Decimal("757.50")


def test_future_date_is_refused(mineola):
    with pytest.raises(CommandError, match="after today"):
        run("run_billing", "--date", "2099-02-01")


def test_dry_run_writes_nothing(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    out = run("run_billing", "--date", "2026-02-01", "--dry-run")
    assert "1 bills totalling $186.13" in out
    assert not Bill.objects.exists() and not BillingRun.objects.exists()


def test_void_then_rebill_keeps_the_record(mineola):
    from billing.services.adjustments import bill_void

    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    first = Bill.objects.get()
    bill_void(bill=first, reason="misread", as_of=date(2026, 2, 5), actor=None)
    # corrected read 42,500 gal: 45.00 + 22,500 × 3.10 = 69.75 → 114.75
    Reading.objects.filter(meter=meter, read_on=date(2026, 1, 12)).update(value=1_042_500)
    run("run_billing", "--date", "2026-02-01")
    assert Bill.objects.count() == 2
    rebill = Bill.objects.exclude(pk=first.pk).get()
    assert rebill.total.amount == Decimal("114.75") and rebill.number.endswith("-2")
    assert statement(account.account_no, "2026-02-10")["balance"] == "114.75"


def test_estimated_reading_entered_after_an_exception_is_billed_next_run(mineola, tmp_path):
    account, meter = account_with_meter(book=1)
    assert "1 exceptions" in run("run_billing", "--date", "2026-02-01")
    csv = tmp_path / "est.csv"
    csv.write_text(f"meter_serial,read_date,reading,read_type\n{meter.serial},2026-01-30,1062500,estimated\n")
    call_command("import_readings", str(csv), "--date", "2026-02-02", stdout=io.StringIO())
    assert "1 bills issued totalling $186.13" in run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get()
    assert bill.estimated
    assert BillingException.objects.get().status == "resolved"


def test_property_bill_total_is_sum_of_lines_and_balance_sum_of_entries(mineola):
    for i in range(5):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_000_000 + 17_777 * i)
    run("run_billing", "--date", "2026-02-01")
    run("assess_penalties", "--date", "2026-05-10")
    for bill in Bill.objects.prefetch_related("lines"):
        assert bill.total.amount == sum(line.amount.amount for line in bill.lines.all())
        data = statement(bill.account.account_no, "2026-05-10")
        entries = LedgerEntry.objects.filter(account=bill.account).values_list("amount", flat=True)
        assert Decimal(data["balance"]) == sum(entries)


def test_partial_payment_then_monthly_penalties_on_the_principal_left(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    pay(account, "100.00", "2026-04-15", "P-415")
    run("assess_penalties", "--date", "2026-07-10")
    data = statement(account.account_no, "2026-07-10")
    # 9.31 and 1.86 before the payment; principal first, it pays 100.00 of water, leaving 86.13: then
    # 1% = 0.86 (0.8613) on 5/2, 6/2 and 7/2. Balance 86.13 + 9.31 + 1.86 + 0.86 × 3 = 99.88.
    assert [c["amount"] for c in data["charges"]] == ["9.31", "1.86", "0.86", "0.86", "0.86"]
    assert data["bills"][0]["balance"] == "86.13"
    assert data["balance"] == "99.88"


def test_meter_upsized_mid_year_first_monthly_bill_carries_the_annual_minimum(mineola):
    # Book 1, "other" use, a 1" meter billed semiannually; its billable year starts 2026-02-01.
    account, old = account_with_meter(book=1, category="other", size="1")
    read(old, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    february = Bill.objects.get()
    # 62,500 gal: $60.00 with 20,000 gal + 42,500 × $3.85/1,000 = 163.625 → 163.63 → $223.63
    assert (february.frequency, february.total.amount) == ("semiannual", Decimal("223.63"))

    # Changed to a 2" meter on 2026-03-16 (§ 45.29 C: larger than 1" is billed monthly from then on).
    read(old, date(2026, 3, 16), 1_080_000, read_type="final")
    Installation.objects.filter(meter=old).update(removed_on=date(2026, 3, 16))
    new = MeterFactory(size="2")
    InstallationFactory(meter=new, account=account, installed_on=date(2026, 3, 16))
    read(new, date(2026, 3, 16), 0)
    read(new, date(2026, 3, 30), 40_000)
    read(new, date(2026, 4, 29), 90_000)
    read(new, date(2026, 5, 28), 130_000)
    for day in ("2026-04-01", "2026-05-01", "2026-06-01"):
        run("run_billing", "--date", day)
    april, may, june = Bill.objects.filter(frequency="monthly").order_by("bill_date")

    # April, the first monthly bill of the billable year: 17,500 gal on the old meter since the February
    # reading (1,062,500 → 1,080,000) + 40,000 on the new = 57,500 gal. The 2" annual minimum, $480.00 with
    # 125,000 gal, regardless of usage; 67,500 gal of the allowance left. The 62,500 gal already billed on
    # the semiannual bill are not counted against it.
    assert april.gallons == 57_500
    assert [(line.kind, line.citation, line.quantity, line.amount.amount) for line in april.lines.all()] == [
        ("minimum", "§ 45.28 A(1), § 45.29 C", Decimal("125000"), Decimal("480.00"))]
    assert april.lines.get().description == 'Annual minimum charge, 2" meter, includes 125,000 gal for the billable year'
    assert april.total.amount == Decimal("480.00") and april.includes_annual_minimum
    # May: 50,000 gal, 107,500 of 125,000 used: nothing to charge, and the bill still says why.
    assert may.gallons == 50_000 and may.total.amount == Decimal("0.00")
    assert [(line.kind, line.quantity, line.amount.amount) for line in may.lines.all()] == [
        ("consumption", Decimal("50000"), Decimal("0.00"))]
    assert "17,500 gal left" in may.lines.get().description
    # June: 40,000 gal takes the year to 147,500: 22,500 gal × $3.85/1,000 = 86.625 → $86.63.
    assert [(line.kind, line.quantity, line.amount.amount) for line in june.lines.all()] == [
        ("consumption", Decimal("22500"), Decimal("86.63"))]
    assert not BillingException.objects.exists()


def test_a_rating_with_no_lines_is_held_as_an_exception_not_issued(mineola, monkeypatch):
    from billing.rating import MinimumAndBlocks, Rated

    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    monkeypatch.setattr(MinimumAndBlocks, "rate", lambda self, bill: Rated((), bill.gallons, False))
    out = run("run_billing", "--date", "2026-02-01")
    assert "0 bills issued" in out and "1 exceptions" in out
    assert not Bill.objects.exists() and not LedgerEntry.objects.exists()
    exception = BillingException.objects.get()
    assert exception.kind == "rating" and "no lines" in exception.detail


def monthly_bills_paid_in_full_after_one_late_payment(mineola, order):
    """A 2" meter ("other", Book 3): bills of $480.00 (03-01, the annual minimum with 70,000 of its
    125,000 gal), $134.75 (04-01: 90,000 − 55,000 left = 35,000 × $3.85), $346.50 (05-01) and $346.50
    (06-01: 90,000 × $3.85). The first is paid one day late, every later one in full on its due date."""
    section_set("policy", payment_order=order)
    account, meter = account_with_meter(book=3, category="other", size="2", start=date(2026, 1, 20), value=0)
    for month, value in ((2, 70_000), (3, 160_000), (4, 250_000), (5, 340_000)):
        read(meter, date(2026, month, 20), value)
    for bill_date in ("2026-03-01", "2026-04-01", "2026-05-01", "2026-06-01"):
        run("run_billing", "--date", bill_date)
    for amount, on in (("480.00", "2026-04-02"), ("134.75", "2026-05-01"), ("346.50", "2026-06-01"),
                       ("346.50", "2026-07-01")):
        pay(account, amount, on, f"ON-TIME-{on}")
    run("assess_penalties", "--date", "2026-08-15")
    return statement(account.account_no, "2026-08-15")


def test_principal_first_an_old_penalty_never_makes_later_bills_late(mineola):
    # The one late payment owes 5% of 480.00 = 24.00 on 04-02. Principal first, every later payment pays
    # its bill in full; the 24.00 waits and draws nothing (penalties are on principal only).
    data = monthly_bills_paid_in_full_after_one_late_payment(mineola, "principal_first")
    assert [(c["date"], c["amount"]) for c in data["charges"]] == [("2026-04-02", "24.00")]
    assert data["balance"] == "24.00"


def test_penalties_first_the_old_penalty_moves_forward_and_pyramids(mineola):
    # Penalties first: 04-02's 480.00 pays the 24.00 penalty first, leaving 24.00 of water; each later
    # payment pays the oldest bill first, so the shortfall moves to the newest bill and draws its 5%:
    # 05-02 5% × 24.00 = 1.20; 06-01 pays 1.20 + 24.00 of bill 2 → bill 3 short 25.20 → 06-02 1.26;
    # 07-01 pays 1.26 + 25.20 → bill 4 short 26.46 → 07-02 1.32 (1.323); 08-02 1% × 26.46 = 0.26.
    data = monthly_bills_paid_in_full_after_one_late_payment(mineola, "penalties_first")
    assert [(c["date"], c["amount"]) for c in data["charges"]] == [
        ("2026-04-02", "24.00"), ("2026-05-02", "1.20"), ("2026-06-02", "1.26"), ("2026-07-02", "1.32"),
        ("2026-08-02", "0.26")]
    assert data["balance"] == "28.04"  # 26.46 + 1.32 + 0.26


def test_a_released_absurd_reading_is_a_rating_exception_not_a_crash(mineola):
    """A reading of 10^15 (recorded before readings were bounded, or straight into the database) is held
    for high usage; released, it would overflow the bill's columns, so the rating refuses it with a reason
    and the run finishes."""
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    read(meter, date(2026, 7, 10), 10 ** 15)
    assert "1 exceptions" in run("run_billing", "--date", "2026-08-01")
    billing_exception_release(exception=BillingException.objects.get(kind="high_usage"), actor=None)
    out = run("run_billing", "--date", "2026-08-01")
    assert "0 bills issued" in out and "1 exceptions" in out
    refused = BillingException.objects.get(kind="rating")
    assert refused.detail.startswith("999,999,998,937,500 gal ($3,849,999,995,854.88) is more than a bill can hold")
    assert "more than a bill can hold" in refused.detail and "check the readings" in refused.detail
    assert set(BillingRun.objects.values_list("status", flat=True)) == {"done"}
    assert not Bill.objects.filter(bill_date=date(2026, 8, 1)).exists()
    call_command("nightly", "--date", "2026-08-01", stdout=io.StringIO())
    assert [b["total"] for b in statement(account.account_no, "2026-08-01")["bills"]] == ["186.13"]


@pytest.mark.parametrize(("given", "rule"), [("20260201", "'20260201' is not a date; use YYYY-MM-DD"),
                                             ("0026-02-01", "the year 0026 is before 1900; check the year")])
def test_date_argument_is_yyyy_mm_dd_from_1900(mineola, given, rule):
    with pytest.raises(CommandError, match=rule):
        run("run_billing", "--date", given)
    assert not BillingRun.objects.exists()
