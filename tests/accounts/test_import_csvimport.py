"""The shared CSV import machinery (``waterbilling.csvimport``), without the database."""

from datetime import date
from decimal import Decimal

import pytest

from waterbilling.csvimport import (
    CsvLayout,
    ImportErrors,
    ImportRejected,
    csv_rows,
    dollars,
    import_source_read,
    iso_date_until,
    whole_number,
)

PAYMENTS = CsvLayout(required=("account_no", "amount", "paid_on", "reference"))
READINGS = CsvLayout(required=("meter_serial", "read_date", "reading"), optional=("read_type",))


def test_layout_accepts_the_required_columns_and_optional_ones_in_order():
    assert READINGS.accepts(["meter_serial", "read_date", "reading"])
    assert READINGS.accepts(["meter_serial", "read_date", "reading", "read_type"])
    assert not READINGS.accepts(["meter_serial", "reading", "read_date"])
    assert READINGS.describe() == "meter_serial,read_date,reading[,read_type]"


def test_header_in_the_wrong_order_is_named_as_such():
    with pytest.raises(ImportRejected) as excinfo:
        csv_rows(text="amount,account_no,paid_on,reference\n", layout=PAYMENTS, errors=ImportErrors())
    assert str(excinfo.value.errors[0]) == (
        "line 1: header: expected columns account_no,amount,paid_on,reference; found "
        "amount,account_no,paid_on,reference (same columns in a different order)")


def test_rows_carry_line_numbers_and_blank_rows_are_skipped():
    errors = ImportErrors()
    rows = csv_rows(text="account_no,amount,paid_on,reference\n1-1, 5.00 ,2026-01-02,A\n,,,\n\n1-2,1,x,B\n",
                    layout=PAYMENTS, errors=errors)
    assert [(r.line, r["account_no"], r["amount"]) for r in rows] == [(2, "1-1", "5.00"), (5, "1-2", "1")]
    assert not errors


def test_errors_are_ordered_by_line_then_column():
    errors = ImportErrors(columns=PAYMENTS.columns)
    errors.add(line=3, field="reference", message="c")
    errors.add(line=2, field="paid_on", message="b")
    errors.add(line=2, field="account_no", message="a")
    with pytest.raises(ImportRejected) as excinfo:
        errors.raise_if_any()
    assert [str(e) for e in excinfo.value.errors] == ["line 2: account_no: a", "line 2: paid_on: b",
                                                      "line 3: reference: c"]
    assert str(excinfo.value) == "file rejected: 3 error(s) on 2 line(s); nothing was saved"


@pytest.mark.parametrize(("text", "amount"), [("12", "12.00"), ("12.5", "12.50"), ("$1,234.56", "1234.56")])
def test_dollars(text, amount):
    assert dollars(text) == Decimal(amount)


@pytest.mark.parametrize(("text", "rule"), [("abc", "not an amount"), ("1.234", "at most two decimals"),
                                            ("0", "more than zero"), ("-5", "more than zero"),
                                            ("NaN", "not an amount")])
def test_dollars_refused(text, rule):
    with pytest.raises(ValueError, match=rule):
        dollars(text)


def test_dates_and_numbers():
    assert iso_date_until(date(2026, 1, 31))("2026-01-31") == date(2026, 1, 31)
    with pytest.raises(ValueError, match="after the import date"):
        iso_date_until(date(2026, 1, 31))("2026-02-01")
    assert whole_number(minimum=1, maximum=10)(" 7".strip()) == 7
    with pytest.raises(ValueError, match="not a whole number"):
        whole_number()("١٢")  # Arabic-Indic digits are digits to Python, not to a clerk's file


def test_spreadsheet_workbook_is_refused_by_name():
    with pytest.raises(ImportRejected, match="spreadsheet workbook"):
        import_source_read(b"PK\x03\x04rest-of-a-zip")
