"""The shared CSV import machinery (``core.csvimport``), without the database."""

import re
from datetime import date
from decimal import Decimal

import pytest

from core.csvimport import (
    CsvLayout,
    ImportErrors,
    ImportRejected,
    csv_rows,
    dollars,
    identifier,
    import_source_read,
    iso_date,
    iso_date_until,
    text,
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


# --- clerks' slips: each is refused with the rule, never read as something else ---------------------

@pytest.mark.parametrize(("text", "amount"), [("1,250.00", "1250.00"), ("1,250", "1250.00"),
                                              ("12,345,678.90", "12345678.90"), ("0.50", "0.50"), (".5", "0.50"),
                                              ("$999", "999.00")])
def test_a_comma_separates_thousands(text, amount):
    assert dollars(text) == Decimal(amount)


@pytest.mark.parametrize("text", ["12,50", "1,25", "1,2500.00", ",250", "1,,250", "1250,", "12,50.00", "1.250,00"])
def test_a_comma_anywhere_else_is_refused(text):
    with pytest.raises(ValueError, match="a comma may only separate thousands"):
        dollars(text)


@pytest.mark.parametrize("text", ["1_000", "1_000.00", "١٢", "１２.００", "12\u00a0000", "1e3", "0x10", "+ 5", "1 000"])
def test_amounts_are_ascii_digits_only(text):
    with pytest.raises(ValueError, match="not an amount in dollars and cents"):
        dollars(text)


@pytest.mark.parametrize("text", ["1_000", "١٢", "１２", "1e3", "12 000", "1,000"])
def test_whole_numbers_are_ascii_digits_only(text):
    with pytest.raises(ValueError, match="not a whole number"):
        whole_number()(text)


@pytest.mark.parametrize(("text", "rule"), [
    ("20261102", "not a date; use YYYY-MM-DD"),
    ("2026-W45-1", "not a date; use YYYY-MM-DD"),
    ("2026-11-02T00:00", "not a date; use YYYY-MM-DD"),
    ("２０２６-11-02", "not a date; use YYYY-MM-DD"),
    ("26-11-02", "not a date; use YYYY-MM-DD"),
    ("0026-11-02", "the year 0026 is before 1900; check the year"),
    ("0001-01-01", "the year 0001 is before 1900; check the year"),
    ("1899-12-31", "the year 1899 is before 1900; check the year"),
])
def test_dates_are_yyyy_mm_dd_from_1900_on(text, rule):
    with pytest.raises(ValueError, match=rule):
        iso_date(text)


def test_the_first_day_of_1900_is_a_date():
    assert iso_date("1900-01-01") == date(1900, 1, 1)


@pytest.mark.parametrize(("value", "shown"), [
    ("1-00\n01", "U+000A, a line break"), ("1-0001\r", "U+000D, a line break"), ("1-\t0001", "U+0009, a tab"),
    ("1-0001\x00", "U+0000"), ("1-\x1b[31m0001", "U+001B"), ("1-0001\x85", "U+0085"),
    ("1-0001\u2028", "U+2028"), ("\u202e1000-1", "U+202E"),
])
def test_text_refuses_control_characters(value, shown):
    with pytest.raises(ValueError, match=f"contains a control character \\({re.escape(shown)}"):
        text(max_length=40)(value)
    with pytest.raises(ValueError, match="control character"):
        identifier(max_length=40)(value)


@pytest.mark.parametrize("value", ["1-\u200b0001", "1-0001\ufeff", "M\u00ad1", "M\u200d1"])
def test_identifiers_also_refuse_invisible_characters(value):
    assert text(max_length=40)(value) == value  # a name may need a joiner; an account number never does
    with pytest.raises(ValueError, match="invisible character"):
        identifier(max_length=40)(value)


def test_identifiers_and_text_keep_what_a_clerk_types():
    assert identifier(max_length=40)("1-0001 A/B") == "1-0001 A/B"
    assert text(max_length=80)("Café Ñandú, 2º piso") == "Café Ñandú, 2º piso"
