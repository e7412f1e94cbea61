"""Mineola worked examples end to end through the commands a clerk runs:
import accounts → import readings → run billing → import payments → assess penalties → statement."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from billing.models import Bill, LedgerEntry, Payment

pytestmark = pytest.mark.django_db

ACCOUNTS = """account_no,book,category,owner_name,owner_address,occupant_name,service_address,sbl,meter_serial,meter_size,meter_unit,initial_reading,initial_read_date
1-0001,1,one_two_family,Maria Russo,"12 Willis Ave, Mineola, NY 11501",,12 Willis Ave,9-101-1,N100001,5/8,gal,1000000,2025-07-10
3-0002,3,other,Jericho Deli LLC,"PO Box 7, Mineola, NY 11501",,200 Jericho Tpke,9-300-2,N300002,2,gal,0,2026-01-30
1-0003,1,one_two_family,Ann Lee,"4 Elm Pl, Garden City, NY 11530",Tom Ortiz,14 Willis Ave,9-101-2,N100003,3/4,gal,500000,2025-07-11
"""

READINGS = """meter_serial,read_date,reading,read_type
N100001,2026-01-12,1062500,actual
N300002,2026-02-27,90000,actual
N300002,2026-03-30,150000,actual
N300002,2026-04-29,190000,actual
N100003,2026-01-14,540000,actual
"""

PAYMENTS = """account_no,amount,paid_on,reference
1-0003,107.00,2026-03-01,CHK-5001
"""


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    return str(path)


def cmd(*args):
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def statement(account_no, on):
    return json.loads(cmd("statement", account_no, "--json", "--date", on))


@pytest.fixture
def village(mineola, tmp_path):
    cmd("import_accounts", write(tmp_path, "accounts.csv", ACCOUNTS), "--date", "2026-01-31")
    cmd("import_readings", write(tmp_path, "readings.csv", READINGS), "--date", "2026-04-30")
    for day in ("2026-02-01", "2026-03-01", "2026-04-01", "2026-05-01"):
        cmd("run_billing", "--date", day, "--no-progress")
    cmd("import_payments", write(tmp_path, "payments.csv", PAYMENTS), "--date", "2026-03-01")
    for day in ("2026-03-02", "2026-04-02", "2026-05-02", "2026-05-10"):
        cmd("assess_penalties", "--date", day, "--no-progress")
    return tmp_path


def test_semiannual_worked_example_to_the_cent(village):
    data = statement("1-0001", "2026-05-10")
    assert data["balance"] == "199.16"
    (bill,) = data["bills"]
    assert (bill["bill_date"], bill["due_date"], bill["period_start"], bill["period_end"], bill["gallons"]) == (
        "2026-02-01", "2026-03-01", "2025-07-10", "2026-01-12", 62500)
    assert [(line["kind"], line["quantity"], line["rate"], line["amount"]) for line in bill["lines"]] == [
        ("minimum", "20000", "45.00", "45.00"), ("consumption", "30000", "3.10", "93.00"),
        ("consumption", "12500", "3.85", "48.13")]
    assert bill["total"] == "186.13"
    assert [(c["kind"], c["date"], c["amount"], c["citation"], c["bill"]) for c in data["charges"]] == [
        ("penalty", "2026-03-02", "9.31", "§ 45.29 E", bill["number"]),
        ("penalty", "2026-04-02", "1.86", "§ 45.29 E", bill["number"]),
        ("penalty", "2026-05-02", "1.86", "§ 45.29 E", bill["number"])]


def test_monthly_worked_example_to_the_cent(village):
    data = statement("3-0002", "2026-05-10")
    assert [(b["bill_date"], b["gallons"], b["total"]) for b in data["bills"]] == [
        ("2026-03-01", 90000, "480.00"), ("2026-04-01", 60000, "96.25"), ("2026-05-01", 40000, "154.00")]
    # March bill unpaid since its due date 2026-04-01: 5% of 480.00 = 24.00 on 2026-04-02, 1% = 4.80 on
    # 2026-05-02; April bill (due 2026-05-01): 5% of 96.25 = 4.8125 → 4.81 on 2026-05-02.
    assert [(c["date"], c["amount"]) for c in data["charges"]] == [
        ("2026-04-02", "24.00"), ("2026-05-02", "4.80"), ("2026-05-02", "4.81")]
    assert data["balance"] == "763.86"  # 480 + 96.25 + 154 + 24 + 4.80 + 4.81


def test_paid_on_due_date_has_no_penalty(village):
    data = statement("1-0003", "2026-05-10")
    # 540,000 − 500,000 = 40,000 gal: 45.00 + 20,000 × 3.10 = 62.00 → 107.00, paid on the due date.
    assert data["bills"][0]["total"] == "107.00"
    assert data["payments"] == [{"paid_on": "2026-03-01", "amount": "107.00", "reference": "CHK-5001"}]
    assert data["charges"] == [] and data["balance"] == "0.00"


def test_everything_again_creates_nothing(village):
    counts = (Bill.objects.count(), LedgerEntry.objects.count(), Payment.objects.count())
    for day in ("2026-02-01", "2026-03-01", "2026-04-01", "2026-05-01"):
        cmd("run_billing", "--date", day, "--no-progress")
    cmd("import_payments", write(village, "payments.csv", PAYMENTS), "--date", "2026-05-10")
    cmd("assess_penalties", "--date", "2026-05-10", "--no-progress")
    cmd("nightly", "--date", "2026-05-10")
    assert (Bill.objects.count(), LedgerEntry.objects.count(), Payment.objects.count()) == counts


def test_payment_file_with_bad_rows_changes_nothing(village):
    bad = ("account_no,amount,paid_on,reference\n"
           "9-9999,10.00,2026-04-01,X1\n"       # unknown account
           "1-0001,ten,2026-04-01,X2\n"          # not an amount
           "1-0001,10.00,2026-13-01,X3\n"        # impossible date
           "1-0001,99.00,2026-04-01,CHK-5001\n"  # reference posted with another amount
           "1-0001,10.00,2026-04-01,X5\n")       # fine, but the file is all or nothing
    before = (Payment.objects.count(), LedgerEntry.objects.count())
    err = io.StringIO()
    with pytest.raises(CommandError, match="rejected with 4 error"):
        call_command("import_payments", write(village, "bad.csv", bad), "--date", "2026-05-10",
                     stdout=io.StringIO(), stderr=err)
    report = err.getvalue()
    assert "line 2: account_no: unknown account '9-9999'" in report
    assert "line 3: amount:" in report and "line 4: paid_on:" in report
    assert "line 5: reference: 'CHK-5001' is already posted" in report
    assert (Payment.objects.count(), LedgerEntry.objects.count()) == before
