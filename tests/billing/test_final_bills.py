"""Final bills on a move-out or a sale, closing letters, and the next owner's account; dollars worked by hand.

Mineola one_two_family, Book 1 (docs/ordinances.md worked example): reads 1,000,000 gal on 2025-07-10 and
1,062,500 gal on 2026-01-12 → the bill dated 2026-02-01 of $186.13. Move-out reading 1,080,500 gal on
2026-05-12 → 18,000 gal. Office policy ([final_bill] minimum = "pro_rata"): the six-month period runs from the
bill date 2026-02-01 to the next, 2026-08-01: 181 days; 2026-02-01 → 2026-05-12 is 100 days. Minimum
$45.00 × 100/181 = $24.8618 → $24.86; allowance 20,000 × 100/181 = 11,049.7 → 11,050 gal; the $3.10 block's
bound 50,000 × 100/181 = 27,624.3 → 27,624 gal. 18,000 − 11,050 = 6,950 gal × $3.10/1,000 = $21.545 → $21.55.
Final bill $46.41, issued 2026-05-15, due a month after issue (§ 45.29 D's rule): 2026-06-15.
"""

from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command

from accounts.models import Account, Customer
from billing.documents.closing_letter import closing_figures, closing_letter_pdf
from billing.ledger.selectors import account_balances
from billing.models import Adjustment, Bill, LedgerEntry
from billing.services.charges import charge_create
from billing.services.final_bills import account_move, final_bill_issue, final_bill_preview
from core.errors import ApplicationError
from meters.models import Installation, Reading
from tests.billing.steps import account_with_meter, read, run
from tests.factories import AccountFactory, CustomerFactory

pytestmark = pytest.mark.django_db


def _lines(bill):
    return [(line.kind, line.description, line.citation, line.amount.amount) for line in bill.lines.all()]


def _balance(account, on):
    return account_balances([account.pk], through=on)[account.pk].balance


@pytest.fixture
def billed(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    assert Bill.objects.get(account=account).total.amount == Decimal("186.13")
    return account, meter


def test_mineola_move_out_pro_rata_minimum_and_allowance(billed):
    account, meter = billed
    bill = final_bill_issue(account=account, read_on=date(2026, 5, 12), reading=1_080_500, as_of=date(2026, 5, 15),
                            actor=None)
    assert bill.final and bill.run_id is None
    assert (bill.bill_date, bill.issued_on, bill.due_date, bill.period_start, bill.period_end, bill.gallons) == (
        date(2026, 5, 12), date(2026, 5, 15), date(2026, 6, 15), date(2026, 1, 12), date(2026, 5, 12), 18_000)
    assert bill.frequency == "semiannual" and bill.number == f"20260512-{account.account_no}-F"
    assert _lines(bill) == [
        ("minimum", "Minimum charge $45.00, pro rata 100/181 days, includes 11,050 gal",
         "§ 45.28 A(1), A(2)(a); final bill pro rata: policy", Decimal("24.86")),
        ("consumption", "11,051–27,624 gal: 6,950 gal at $3.10 per 1,000", "§ 45.28 A(1)", Decimal("21.55")),
    ]
    assert bill.total.amount == Decimal("46.41")
    end = Reading.objects.get(pk=bill.end_reading_id)
    assert (end.read_on, end.value, end.read_type) == (date(2026, 5, 12), 1_080_500, "final")
    water = LedgerEntry.objects.get(bill=bill)
    assert (water.kind, water.amount.amount, water.posted_on) == ("water", Decimal("46.41"), date(2026, 5, 15))
    assert _balance(account, date(2026, 5, 15)) == Decimal("232.54")  # 186.13 + 46.41
    account.refresh_from_db()
    assert (account.status, account.closed_on) == ("closed", date(2026, 5, 12))
    assert Installation.objects.get(account=account).removed_on == date(2026, 5, 12)


def test_closed_account_is_not_billed_by_the_next_regular_run(billed):
    account, meter = billed
    final_bill_issue(account=account, read_on=date(2026, 5, 12), reading=1_080_500, as_of=date(2026, 5, 15),
                     actor=None)
    assert "0 bills issued" in run("run_billing", "--date", "2026-08-01")
    assert Bill.objects.filter(account=account).count() == 2


def test_keep_open_bills_without_closing(billed):
    account, _ = billed
    final_bill_issue(account=account, read_on=date(2026, 5, 12), reading=1_080_500, as_of=date(2026, 5, 15),
                     actor=None, close=False)
    account.refresh_from_db()
    assert account.status == "active" and account.closed_on is None
    assert Installation.objects.get(account=account).removed_on is None


def test_the_waiting_charge_is_carried(billed):
    account, _ = billed
    charge = charge_create(account=account, code="tank_wagon", as_of=date(2026, 5, 1), actor=None)
    bill = final_bill_issue(account=account, read_on=date(2026, 5, 12), reading=1_080_500, as_of=date(2026, 5, 15),
                            actor=None)
    assert bill.total.amount == Decimal("71.41")  # 46.41 + 25.00 (§ 45.28 D)
    assert _lines(bill)[-1] == ("fee", "Water-supply tank wagon, up to 1,000 gallons", "§ 45.28 D", Decimal("25.00"))
    charge.refresh_from_db()
    assert charge.bill_id == bill.pk
    fee = LedgerEntry.objects.get(bill=bill, kind="fee")
    assert fee.amount.amount == Decimal("25.00") and fee.source == f"charge:{charge.pk}"
    assert LedgerEntry.objects.get(bill=bill, kind="water").amount.amount == Decimal("46.41")


def test_the_preview_rates_without_writing(billed):
    account, _ = billed
    plan = final_bill_preview(account=account, read_on=date(2026, 5, 12), reading=1_080_500, as_of=date(2026, 5, 15))
    assert plan.bill.total == Decimal("46.41") and plan.pro_rata.days == 100 and plan.pro_rata.of_days == 181
    assert Bill.objects.count() == 1 and Reading.objects.filter(read_type="final").count() == 0
    assert Account.objects.get(pk=account.pk).status == "active"


def test_a_final_bill_on_the_day_of_a_regular_bill_is_dated_the_next_day(billed):
    account, _ = billed
    # Read on the regular bill's date: that date has a live bill, so the final bill is dated 2026-02-02, 1 day
    # into the period: $45.00 × 1/181 = $0.2486 → $0.25; allowance 20,000 × 1/181 = 110.5 → 111 gal; block
    # bound 50,000/181 = 276.2 → 276 gal. 500 gal: 111–276 → 165 gal × $3.10 = $0.5115 → $0.51; 224 gal over
    # 276 × $3.85 = $0.8624 → $0.86. Total $1.62.
    bill = final_bill_issue(account=account, read_on=date(2026, 2, 1), reading=1_063_000, as_of=date(2026, 2, 3),
                            actor=None)
    assert bill.bill_date == date(2026, 2, 2)
    assert [line[3] for line in _lines(bill)] == [Decimal("0.25"), Decimal("0.51"), Decimal("0.86")]
    assert bill.total.amount == Decimal("1.62")


def test_monthly_two_inch_final_bill_has_no_further_minimum(mineola):
    # § 45.29 C worked example: Book 3, billable year from 2026-03-01, 2" meter, allowance 125,000 gal. The March
    # bill (90,000 gal) is the $480.00 annual minimum; the final reading 2026-03-20 adds 60,000 gal: 150,000
    # year to date, 25,000 over the allowance × $3.85 = $96.25, and no further minimum.
    account, meter = account_with_meter(book=3, category="other", size="2", start=date(2026, 2, 1), value=0)
    read(meter, date(2026, 2, 27), 90_000)
    run("run_billing", "--date", "2026-03-01")
    assert Bill.objects.get(account=account).total.amount == Decimal("480.00")
    bill = final_bill_issue(account=account, read_on=date(2026, 3, 20), reading=150_000, as_of=date(2026, 3, 20),
                            actor=None)
    assert (bill.frequency, bill.gallons, bill.includes_annual_minimum) == ("monthly", 60_000, False)
    assert _lines(bill) == [("consumption", "25,000 gal over the year's 125,000 gal allowance at $3.85 per 1,000",
                             "§ 45.28 A(1), § 45.29 C", Decimal("96.25"))]
    assert bill.due_date == date(2026, 4, 20)


def _quarterly(preset, *, first):
    call_command("setup_utility", preset, "--demo", "0", "--date", "2026-01-01", stdout=open("/dev/null", "w"))
    account, meter = account_with_meter(book=1, start=date(2025, 10, 15), value=1_000_000)
    read(meter, date(2026, 1, 14), 1_030_000)
    run("run_billing", "--date", "2026-02-01")
    assert Bill.objects.get(account=account).total.amount == first
    return account, meter


def test_lansing_quarterly_final_bill_pro_rata(db):
    # Lansing (sample): $30.00 including 9,000 gal, then $5.10/1,000. Bill 2026-02-01: 30,000 gal → $137.10.
    # Final reading 2026-03-18: 6,000 gal. Quarter 2026-02-01 → 2026-05-01 = 89 days; 45 days elapsed.
    # $30.00 × 45/89 = $15.168 → $15.17; allowance 9,000 × 45/89 = 4,550.6 → 4,551 gal; 1,449 gal × $5.10 =
    # $7.3899 → $7.39. Total $22.56, due 30 days after issue (sample calendar).
    account, _ = _quarterly("lansing", first=Decimal("137.10"))
    bill = final_bill_issue(account=account, read_on=date(2026, 3, 18), reading=1_036_000, as_of=date(2026, 3, 20),
                            actor=None)
    assert [line[3] for line in _lines(bill)] == [Decimal("15.17"), Decimal("7.39")]
    assert bill.total.amount == Decimal("22.56") and bill.due_date == date(2026, 4, 19)
    assert "pro rata 45/89 days" in _lines(bill)[0][1]


def test_washingtonville_final_bill_charges_the_full_quarterly_minimum(db):
    # Washingtonville (sample): $35.00 including 10,000 gal, then $6.25/1,000. Bill 2026-02-01: 30,000 gal →
    # $35.00 + 20,000 × $6.25 = $125.00 → $160.00. Final 2026-03-16: 4,000 gal, within the allowance; office
    # policy (§ 169-23: no vacancy deduction under 3 months) charges the full minimum: $35.00.
    account, _ = _quarterly("washingtonville", first=Decimal("160.00"))
    bill = final_bill_issue(account=account, read_on=date(2026, 3, 16), reading=1_034_000, as_of=date(2026, 3, 20),
                            actor=None)
    assert _lines(bill) == [("minimum", "Minimum charge, includes 10,000 gal", "§§ 169-25, 169-26", Decimal("35.00"))]
    assert bill.due_date == date(2026, 4, 19)


@pytest.mark.parametrize(("read_on", "reading", "as_of", "field", "words"), [
    (date(2026, 5, 12), 1_050_000, date(2026, 5, 15), "reading", "lower"),
    (date(2026, 5, 16), 1_080_500, date(2026, 5, 15), "read_on", "after the issue date"),
    (date(2026, 1, 10), 1_062_000, date(2026, 5, 15), "read_on", "end of the period of the last bill"),
])
def test_refusals_name_the_field_and_write_nothing(billed, read_on, reading, as_of, field, words):
    account, _ = billed
    with pytest.raises(ApplicationError) as exc:
        final_bill_issue(account=account, read_on=read_on, reading=reading, as_of=as_of, actor=None)
    assert field in [e.field for e in exc.value.errors]
    assert words in str(exc.value)
    assert Bill.objects.count() == 1 and not Reading.objects.filter(read_type="final").exists()
    assert Account.objects.get(pk=account.pk).status == "active"


def test_refusals_for_a_closed_account_and_one_without_a_meter(billed):
    account, _ = billed
    final_bill_issue(account=account, read_on=date(2026, 5, 12), reading=1_080_500, as_of=date(2026, 5, 15),
                     actor=None)
    with pytest.raises(ApplicationError) as exc:
        final_bill_issue(account=Account.objects.get(pk=account.pk), read_on=date(2026, 5, 14), reading=1_081_000,
                         as_of=date(2026, 5, 15), actor=None)
    assert "account" in [e.field for e in exc.value.errors] and "already closed" in str(exc.value)
    bare = AccountFactory(book=1)
    with pytest.raises(ApplicationError) as exc:
        final_bill_issue(account=bare, read_on=date(2026, 5, 12), reading=10, as_of=date(2026, 5, 15), actor=None)
    assert "meter" in [e.field for e in exc.value.errors]


def test_a_final_reading_in_the_future_is_refused(billed):
    account, _ = billed
    with pytest.raises(ApplicationError) as exc:
        final_bill_issue(account=account, read_on=date(2099, 1, 1), reading=1_080_500, as_of=date(2099, 1, 1),
                         actor=None)
    assert exc.value.errors[0].field in ("read_on", "date")


def test_move_opens_a_clean_account_with_the_meter_from_the_final_reading(billed):
    account, meter = billed
    buyer = CustomerFactory(name="New Owner")
    move = account_move(account=account, on=date(2026, 5, 12), new_owner=buyer, new_account_no="1-9001", actor=None,
                        final_reading=1_080_500, as_of=date(2026, 5, 15))
    assert move.final_bill.total.amount == Decimal("46.41") and move.transferred == Decimal("0")
    new = move.new_account
    assert (new.book, new.category, new.premises_id, new.owner_id, new.status) == (
        account.book, account.category, account.premises_id, buyer.pk, "active")
    assert _balance(new, date(2026, 5, 15)) == Decimal("0")
    assert _balance(account, date(2026, 5, 15)) == Decimal("232.54")  # stays with the former owner
    # The new account's first regular bill starts from the final reading: 1,080,500 → 1,100,500 = 20,000 gal,
    # the $45.00 minimum (§ 45.28 A(1)).
    read(meter, date(2026, 7, 15), 1_100_500)
    run("run_billing", "--date", "2026-08-01")
    first = Bill.objects.get(account=new)
    assert (first.period_start, first.gallons, first.total.amount) == (date(2026, 5, 12), 20_000, Decimal("45.00"))
    assert Bill.objects.filter(account=account).count() == 2


def test_south_farmingdale_arrears_follow_the_property(db):
    # § 4.2, Gen. Info 5. Sample rates: $28.00 including 12,000 gal, then $2.40/1,000. Bill 2026-02-01: 30,000 gal
    # → $28.00 + 18,000 × $2.40 = $43.20 → $71.20, due when rendered; 10% penalty on bill date + 31 days
    # (2026-03-04) = $7.12. Sale 2026-03-18, final reading 6,000 gal: quarter 89 days, 45 elapsed: $28.00 × 45/89
    # = $14.157 → $14.16; allowance 12,000 × 45/89 = 6,067 gal covers the 6,000. Unpaid after the final bill:
    # 71.20 + 7.12 + 14.16 = $92.48, moved to the new owner's account.
    account, _ = _quarterly("south_farmingdale", first=Decimal("71.20"))
    run("assess_penalties", "--date", "2026-03-04", "--no-progress")
    assert _balance(account, date(2026, 3, 4)) == Decimal("78.32")
    move = account_move(account=account, on=date(2026, 3, 18), new_owner=CustomerFactory(), new_account_no="2-0001",
                        actor=None, final_reading=1_036_000, as_of=date(2026, 3, 20))
    assert move.final_bill.total.amount == Decimal("14.16")
    assert move.transferred == Decimal("92.48")
    assert _balance(account, date(2026, 3, 20)) == Decimal("0.00")
    assert _balance(move.new_account, date(2026, 3, 20)) == Decimal("92.48")
    credit, debit = (Adjustment.objects.get(account=account), Adjustment.objects.get(account=move.new_account))
    assert (credit.kind, credit.amount.amount, debit.kind, debit.amount.amount) == (
        "credit", Decimal("92.48"), "debit", Decimal("92.48"))
    assert "§ 4.2, Gen. Info 5" in credit.description and "§ 4.2, Gen. Info 5" in debit.description
    assert LedgerEntry.objects.get(adjustment=debit).citation == "§ 4.2, Gen. Info 5"
    # No more penalties on the old account: its bills are paid by the transfer.
    run("assess_penalties", "--date", "2026-05-10", "--no-progress")
    assert _balance(account, date(2026, 5, 10)) == Decimal("0.00")


def test_account_owner_change_still_keeps_the_account(billed):
    from accounts.services import account_owner_change

    account, _ = billed
    buyer = Customer.objects.create(name="Keeps", mailing_address="1 Elm St")
    account_owner_change(account=account, new_owner=buyer, on=date(2026, 5, 12), actor=None)
    account.refresh_from_db()
    assert account.owner_id == buyer.pk and account.status == "active" and not Bill.objects.filter(final=True).exists()


def test_closing_figures_to_the_cent(billed):
    account, _ = billed
    for day in ("2026-03-02", "2026-04-02", "2026-05-02"):
        run("assess_penalties", "--date", day, "--no-progress")
    charge_create(account=account, code="tank_wagon", as_of=date(2026, 5, 1), actor=None)
    # Balance 2026-05-10: $199.16 (docs/ordinances.md). Average: 62,500 gal over 2025-07-10 → 2026-01-12 = 186 days;
    # 2026-01-12 → 2026-05-20 is 128 days: 62,500 × 128/186 = 43,010.75 → 43,011 gal. Rated as a final bill dated
    # 2026-05-20: 108/181 days: $45.00 × 108/181 = $26.8508 → $26.85; allowance 20,000 × 108/181 = 11,933.7 →
    # 11,934; bound 50,000 × 108/181 = 29,834.3 → 29,834. 17,900 gal × $3.10 = $55.49; 13,177 gal × $3.85 =
    # $50.73145 → $50.73. Estimate $133.07; with the $25.00 waiting charge: 199.16 + 25.00 + 133.07 = $357.23.
    figures = closing_figures(account=account, closing_on=date(2026, 5, 20), as_of=date(2026, 5, 10))
    assert figures.balance == Decimal("199.16")
    assert figures.charges_total == Decimal("25.00")
    assert (figures.estimate_days, figures.estimate_gallons) == (128, 43_011)
    assert [line.amount for line in figures.estimate_lines] == [Decimal("26.85"), Decimal("55.49"), Decimal("50.73")]
    assert figures.estimate_total == Decimal("133.07")
    assert figures.total == Decimal("357.23")
    assert figures.lien.citation == "§ 45.29 F; Village Law § 11-1118"
    pdf = closing_letter_pdf(account=account, closing_on=date(2026, 5, 20), as_of=date(2026, 5, 10))
    assert pdf.startswith(b"%PDF")


def test_the_command_issues_a_final_bill(billed):
    account, _ = billed
    out = run("final_bill", account.account_no, "--read-on", "2026-05-12", "--reading", "1080500",
              "--date", "2026-05-15")
    assert "$46.41" in out and "closed" in out
    assert Bill.objects.get(final=True).total.amount == Decimal("46.41")


@pytest.mark.django_db(transaction=True)
def test_the_preview_runs_outside_a_request_transaction(mineola):
    # The reading's rules lock the meter; on PostgreSQL that needs a transaction of the preview's own.
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    plan = final_bill_preview(account=account, read_on=date(2026, 5, 12), reading=1_080_500, as_of=date(2026, 5, 15))
    assert plan.bill.total == Decimal("46.41")


def test_the_final_bill_prints_as_final_not_as_a_correction(billed):
    import subprocess

    from billing.services.bill_pdfs import bill_pdf_render

    account, _ = billed
    bill = final_bill_issue(account=account, read_on=date(2026, 5, 12), reading=1_080_500, as_of=date(2026, 5, 15),
                            actor=None)
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=bill_pdf_render(bill=bill), capture_output=True,
                          check=True).stdout.decode()
    assert "Final bill, to the final reading, issued May 15, 2026." in text
    assert "Corrected bill" not in text and "pro rata 100/181 days" in text
    assert "paperless" not in text and "closes your billing at the final reading" in text  # no paperless invitation
