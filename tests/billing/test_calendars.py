"""The quarterly single-book calendar (the sample calendar of Washingtonville, South Farmingdale, Lansing
and Old Westbury, docs/ordinances.md): pure, dates worked by hand."""

from datetime import date

import pytest

from billing.calendars import QuarterlySingleBook

QUARTERS = {"months": [2, 5, 8, 11], "billable_year_starts": 2}


def calendar(**due):
    return QuarterlySingleBook({**QUARTERS, "due": due, "citation": "§ 169-26"})


@pytest.mark.citation("§ 169-26")
def test_bills_are_dated_the_first_of_february_may_august_and_november():
    quarterly = calendar(days_after_bill_date=30)
    firsts = [date(2026, m, 1) for m in range(1, 13)]
    assert [d for d in firsts if quarterly.is_due(book=1, frequency="quarterly", on=d)] == [
        date(2026, 2, 1), date(2026, 5, 1), date(2026, 8, 1), date(2026, 11, 1)]
    assert not quarterly.is_due(book=1, frequency="quarterly", on=date(2026, 2, 2))
    # One book: any book number is billed on those dates, and no other frequency is.
    assert quarterly.is_due(book=7, frequency="quarterly", on=date(2026, 5, 1))
    assert not quarterly.is_due(book=1, frequency="monthly", on=date(2026, 5, 1))


@pytest.mark.citation("§ 169-26")
def test_every_meter_is_billed_quarterly_by_frequency_not_by_book():
    quarterly = calendar(days_after_bill_date=30)
    assert {quarterly.frequency_for(size) for size in ("5/8", "1", "2", "8")} == {"quarterly"}
    assert quarterly.due_books(date(2026, 8, 1)) == []
    assert quarterly.due_frequencies(date(2026, 8, 1)) == {"quarterly"}
    assert quarterly.due_frequencies(date(2026, 9, 1)) == set()
    assert quarterly.due_frequencies(date(2026, 8, 2)) == set()


@pytest.mark.citation("§ 169-26")
def test_the_read_window_is_the_month_before_the_bill_date():
    quarterly = calendar(days_after_bill_date=30)
    assert quarterly.cycle(book=1, frequency="quarterly", bill_date=date(2026, 2, 1)).read_window == (
        date(2026, 1, 1), date(2026, 1, 31))
    assert quarterly.cycle(book=1, frequency="quarterly", bill_date=date(2026, 5, 1)).read_window == (
        date(2026, 4, 1), date(2026, 4, 30))
    november = quarterly.cycle(book=1, frequency="quarterly", bill_date=date(2026, 11, 1))
    assert november.read_window == (date(2026, 10, 1), date(2026, 10, 31))
    assert (november.frequency, november.bill_date, november.citation) == ("quarterly", date(2026, 11, 1), "§ 169-26")


@pytest.mark.citation("§ 169-26")
def test_due_thirty_days_after_the_bill_date():
    # Feb 1 + 30 days: 27 days to Feb 28, then Mar 1, 2, 3. May 1 + 30 = May 31; Nov 1 + 30 = Dec 1.
    quarterly = calendar(days_after_bill_date=30)
    assert [quarterly.cycle(book=1, frequency="quarterly", bill_date=date(2026, m, 1)).due_date
            for m in (2, 5, 8, 11)] == [date(2026, 3, 3), date(2026, 5, 31), date(2026, 8, 31), date(2026, 12, 1)]
    # A replacement bill issued later is due 30 days from its own issue.
    assert quarterly.due_date(date(2026, 2, 20)) == date(2026, 3, 22)


@pytest.mark.citation("§ 4.2")
def test_due_when_rendered_is_zero_days():
    # South Farmingdale § 4.2: "due and payable when rendered" — the due date is the bill date.
    rendered = calendar(days_after_bill_date=0)
    assert rendered.cycle(book=1, frequency="quarterly", bill_date=date(2026, 8, 1)).due_date == date(2026, 8, 1)


def test_due_months_after_the_bill_date():
    monthly_due = calendar(months_after_bill_date=1)
    assert [monthly_due.cycle(book=1, frequency="quarterly", bill_date=date(2026, m, 1)).due_date
            for m in (2, 5, 8, 11)] == [date(2026, 3, 1), date(2026, 6, 1), date(2026, 9, 1), date(2026, 12, 1)]
    # From a replacement issued on the 31st, a month later is clamped to the month's end.
    assert monthly_due.due_date(date(2026, 5, 31)) == date(2026, 6, 30)


def test_billable_year_starts_in_february():
    quarterly = calendar(days_after_bill_date=30)
    assert quarterly.billable_year_start(book=1, on=date(2026, 1, 15)) == date(2025, 2, 1)
    assert quarterly.billable_year_start(book=1, on=date(2026, 2, 1)) == date(2026, 2, 1)
    assert quarterly.billable_year_start(book=1, on=date(2026, 11, 1)) == date(2026, 2, 1)
    assert quarterly.cycle(book=1, frequency="quarterly", bill_date=date(2027, 2, 1)).billable_year_start == \
        date(2027, 2, 1)
    # Without ``billable_year_starts`` the year starts with the first billing month.
    default = QuarterlySingleBook({"months": [3, 6, 9, 12], "due": {"days_after_bill_date": 30}})
    assert default.billable_year_start(book=1, on=date(2026, 2, 28)) == date(2025, 3, 1)
    assert default.billable_year_start(book=1, on=date(2026, 12, 1)) == date(2026, 3, 1)
