"""``manage.py report NAME`` as docs/clerks-guide.md's Reports has it: each report as CSV (a header row, one row per line,
a totals row), JSON (money as strings with two decimals) and PDF (``--out``), the defaults, and refusals that
name the option and exit 1."""

import csv
import json
import shutil
import subprocess
from datetime import date

import pytest

from .steps import ON, billed_village, refused, report, report_csv, report_json

pytestmark = pytest.mark.django_db

needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None,
                                   reason="pdftotext (poppler-utils) is not installed")


@pytest.fixture
def village(mineola):
    return billed_village()


def test_the_register_as_csv_has_a_header_its_bills_and_a_totals_row(village):
    rows = report_csv("register", "--date", ON, "--bill-date", "2026-02-01")
    assert rows[0] == ["Book", "Account", "Owner", "Bill number", "Gallons", "Total"]
    assert [(r[1], r[4], r[5]) for r in rows[1:-1]] == [
        ("1-0001", "62500", "186.13"), ("1-0002", "20000", "45.00"), ("1-0003", "30000", "76.00"),
        ("1-0004", "10000", "45.00")]
    assert rows[-1] == ["Total", "", "", "", "122500", "352.13"]


def test_the_aging_as_json_has_rows_and_totals_with_money_as_strings(village):
    data = report_json("aging", "--date", ON)
    assert (data["report"], data["as_of"]) == ("aging", ON)
    first = data["rows"][0]
    assert (first["owner"], first["service_address"]) == (village["1-0001"].owner.name,
                                                          village["1-0001"].premises.service_address)
    assert {k: v for k, v in first.items() if k not in ("owner", "service_address")} == {
        "account_no": "1-0001", "book": 1, "current": "0.00", "days_1_30": "0.00", "days_31_60": "0.00",
        "days_61_90": "199.16", "days_91_120": "0.00", "over_120": "0.00", "balance": "199.16"}
    assert data["totals"] == {"current": "-15.00", "days_1_30": "0.00", "days_31_60": "113.42",
                              "days_61_90": "226.98", "days_91_120": "0.00", "over_120": "0.00", "balance": "325.40",
                              "accounts": 4}


def test_the_register_as_json_totals_it_by_book_and_by_kind_and_citation(village):
    data = report_json("register", "--date", "2026-02-20")  # the latest bill date on or before: 2026-02-01
    assert data["parameters"] == {"bill_date": "2026-02-01"}
    assert data["totals"]["by_book"] == [{"book": 1, "bills": 4, "gallons": 122500, "total": "352.13"}]
    assert data["totals"]["by_line"] == [
        {"kind": "minimum", "citation": "§ 45.28 A(1), A(2)(a)", "count": 4, "amount": "180.00"},
        {"kind": "consumption", "citation": "§ 45.28 A(1)", "count": 3, "amount": "172.13"}]
    assert (data["totals"]["bills"], data["totals"]["total"]) == (4, "352.13")


@pytest.mark.citation("§ 45.29 F")
def test_the_relevy_list_cites_the_lien_section_and_defaults_to_the_date_as_levy_date(village):
    data = report_json("relevy", "--date", ON)
    assert data["citation"] == "§ 45.29 F; Village Law § 11-1118"
    assert data["parameters"] == {"levy_date": ON}
    assert [(r["account_no"], r["charges"], r["late_charges"], r["total"]) for r in data["rows"]] == [
        ("1-0001", "186.13", "13.03", "199.16"), ("1-0003", "26.00", "1.82", "27.82"),
        ("3-0001", "107.00", "6.42", "113.42")]
    assert data["totals"] == {"charges": "319.13", "late_charges": "21.27", "total": "340.40", "accounts": 3}
    earlier = report_json("relevy", "--date", ON, "--levy-date", "2026-04-01")
    assert [r["account_no"] for r in earlier["rows"]] == ["1-0001", "1-0003"]


def test_the_delinquency_list_and_the_receipts_as_csv(village):
    rows = report_csv("delinquency", "--date", ON)
    assert [(r[0], r[4], r[5]) for r in rows[1:-1]] == [("1-0001", "2026-03-02", "199.16"),
                                                         ("1-0003", "2026-03-02", "27.82"),
                                                         ("3-0001", "2026-04-02", "113.42")]
    assert rows[-1][0] == "Total" and rows[-1][5] == "340.40"
    rows = report_csv("receipts", "--date", ON, "--from", "2026-02-01", "--to", "2026-02-28")
    assert rows == [["Day", "Source", "Payments", "Total"], ["2026-02-10", "api", "1", "60.00"],
                    ["2026-02-20", "counter", "1", "45.00"], ["2026-02-25", "import", "1", "50.00"],
                    ["Total", "", "3", "155.00"]]
    assert report_csv("receipts", "--date", "2026-02-20")[1:] == [["2026-02-20", "counter", "1", "45.00"],
                                                                  ["Total", "", "1", "45.00"]]


def test_out_writes_the_file_and_says_so(village, tmp_path):
    out = tmp_path / "aging.csv"
    said = report("aging", "--date", ON, "--out", str(out))
    assert said.strip() == f"Wrote Aging (4 rows) to {out}"
    assert list(csv.reader(out.open(newline="")))[-1][-1] == "325.40"
    out = tmp_path / "aging.json"
    report("aging", "--date", ON, "--format", "json", "--out", str(out))
    assert json.loads(out.read_text())["totals"]["balance"] == "325.40"


@pytest.mark.parametrize("name", ["register", "aging", "delinquency", "relevy", "receipts"])
def test_every_report_prints_as_a_pdf(village, tmp_path, name):
    out = tmp_path / f"{name}.pdf"
    report(name, "--date", ON, "--format", "pdf", "--out", str(out))
    assert out.read_bytes().startswith(b"%PDF")


@needs_poppler
def test_the_pdf_has_the_letterhead_the_title_and_the_totals(village, tmp_path):
    out = tmp_path / "relevy.pdf"
    report("relevy", "--date", ON, "--format", "pdf", "--out", str(out))
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, check=True).stdout.decode()
    assert "Village of Mineola Water Department" in text
    assert "Relevy list for the tax roll (§ 45.29 F; Village Law § 11-1118)" in text
    assert "Total: 3 accounts" in text and "$340.40" in text and "Page 1 of 1" in text


@pytest.mark.parametrize(("args", "message"), [
    (["ledger"], "NAME: unknown report 'ledger'; the reports are register, aging, delinquency, relevy, receipts"),
    (["aging", "--date", "2026-02-30"], "--date: '2026-02-30' is not a date; use YYYY-MM-DD"),
    (["aging", "--date", "2027-01-01"], "--date: 2027-01-01 is after today"),
    (["register", "--date", ON, "--bill-date", "2026-03-15"],
     "--bill-date: no bills are dated 2026-03-15; the latest bill date before it is 2026-03-01"),
    (["register", "--date", ON, "--bill-date", "20260201"], "--bill-date: '20260201' is not a date"),
    (["register", "--date", "2026-01-15"], "--date: no bill is dated on or before 2026-01-15"),
    (["aging", "--date", ON, "--bill-date", "2026-02-01"],
     "--bill-date: the bill date is for the register report, not the aging report"),
    (["receipts", "--date", ON, "--from", "2026-03-01", "--to", "2026-02-01"],
     "--from: 2026-03-01 is after the last day, 2026-02-01"),
    (["relevy", "--date", ON, "--levy-date", "2027-01-01"], "--levy-date: 2027-01-01 is after today"),
    (["aging", "--date", ON, "--format", "xls"], "--format: 'xls' is not a format; use csv, json, pdf"),
    (["aging", "--date", ON, "--format", "pdf"], "--out: a PDF report needs --out FILE"),
])
def test_a_refusal_names_the_option_and_exits_1(village, args, message):
    with pytest.raises(Exception) as info:
        report(*args)
    assert message in str(info.value)
    assert getattr(info.value, "returncode", None) == 1


def test_the_delinquency_list_is_refused_without_a_preset(db):
    assert "preset: no ordinance preset is installed" in refused("delinquency", "--date", ON)


def test_an_empty_report_still_has_its_header_and_totals_row(mineola):
    assert report_csv("aging", "--date", ON) == [
        ["Account", "Owner", "Service address", "Book", "Current", "1-30 days", "31-60 days", "61-90 days",
         "91-120 days", "Over 120 days", "Balance"],
        ["Total", "", "", "", "0.00", "0.00", "0.00", "0.00", "0.00", "0.00", "0.00"]]
    assert report_json("receipts", "--date", ON)["totals"]["total"] == "0.00"
    assert date.fromisoformat(report_json("aging", "--date", ON)["as_of"]) == date(2026, 5, 10)
