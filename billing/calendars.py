"""Billing calendars: which accounts are due on a date, their read window, bill and due dates.

A preset names its calendar scheme and parameters (``[calendar]`` in the preset file); the scheme is a
class registered in ``billing.ordinance.CALENDARS`` (the ``BillingCalendar`` protocol says what it answers).
Pure code: no database, no "today".
"""

from dataclasses import dataclass
from datetime import date, timedelta
from fractions import Fraction

from core.dates import add_months, month_before
from meters.units import size_inches
from ordinance.keys import Key, ListOf, Shape, Tables, Text, Whole

from .registries import CALENDARS

MONTH = Whole(1, 12, unit="a month")


@dataclass(frozen=True)
class Cycle:
    """What the calendar says about one bill: its dates and where it sits in the billable year."""

    frequency: str
    bill_date: date
    due_date: date
    read_window: tuple[date, date]
    billable_year_start: date
    citation: str


@CALENDARS.register
class BookSemiannualMonthlyLarge:
    """Mineola § 45.29: books billed twice a year on fixed months; meters over 1" billed every month.

    The bill is dated the first of the month following the reading, so the read window is the calendar
    month before the bill date; the bill is due the first of the month after the bill date.
    """

    name = "book_semiannual_monthly_large"
    KEYS = {
        "books": Key("the books and their months", Tables(Shape({
            "books": Key("the book numbers", ListOf(Whole(1, 10, unit="a book")), required=True),
            "months": Key("the months the books are billed (the 1st)", ListOf(MONTH, empty=False), required=True),
            "billable_year_starts": Key("the month their billable year starts", MONTH, required=True),
            "citation": Key("the section", Text())})), required=True),
        "monthly_above_inches": Key('meters larger than this many inches are billed every month ("1")', Text(),
                                    required=True),
        "monthly_citation": Key("the section billing those meters monthly", Text()),
        "semiannual_citation": Key("the section billing the others twice a year", Text())}

    def __init__(self, params: dict):
        self.months: dict[int, tuple[int, ...]] = {}
        self.year_start: dict[int, int] = {}
        for group in params["books"]:
            for book in group["books"]:
                self.months[book] = tuple(group["months"])
                self.year_start[book] = group["billable_year_starts"]
        self.monthly_above = Fraction(params["monthly_above_inches"])
        self.due_months = params["due"]["months_after_bill_date"]
        self.monthly_citation = params.get("monthly_citation", "")
        self.semiannual_citation = params.get("semiannual_citation", "")

    def frequency_for(self, meter_size: str) -> str:
        return "monthly" if size_inches(meter_size) > self.monthly_above else "semiannual"

    def is_due(self, *, book: int, frequency: str, on: date) -> bool:
        if on.day != 1:
            return False
        return frequency == "monthly" or on.month in self.months[book]

    def due_books(self, on: date) -> list[int]:
        """Books whose semiannual billing date is ``on``."""
        return sorted(b for b, months in self.months.items() if on.day == 1 and on.month in months)

    def due_frequencies(self, on: date) -> set[str]:
        """Meters over the monthly size are billed on the first of every month, whatever their book."""
        return {"monthly"} if on.day == 1 else set()

    def due_date(self, issued_on: date) -> date:
        return add_months(issued_on, self.due_months)

    def billable_year_start(self, *, book: int, on: date) -> date:
        start_month = self.year_start[book]
        year = on.year if on.month >= start_month else on.year - 1
        return date(year, start_month, 1)

    def cycle(self, *, book: int, frequency: str, bill_date: date) -> Cycle:
        return Cycle(
            frequency=frequency,
            bill_date=bill_date,
            due_date=self.due_date(bill_date),
            read_window=month_before(bill_date),
            billable_year_start=self.billable_year_start(book=book, on=bill_date),
            citation=self.monthly_citation if frequency == "monthly" else self.semiannual_citation,
        )


@CALENDARS.register
class QuarterlySingleBook:
    """One book billed on fixed months (e.g. Feb, May, Aug, Nov) from the reading of the month before.

    Parameters: ``months``, ``billable_year_starts``, and ``due`` as either ``days_after_bill_date`` or
    ``months_after_bill_date`` (0 days = due when rendered).
    """

    name = "quarterly_single_book"
    KEYS = {"months": Key("the months a bill is dated (the 1st)", ListOf(MONTH, empty=False), required=True)}

    def __init__(self, params: dict):
        self.months = tuple(params["months"])
        self.year_start_month = params.get("billable_year_starts", self.months[0])
        self.due = params["due"]
        self.citation = params.get("citation", "")

    def frequency_for(self, meter_size: str) -> str:
        return "quarterly"

    def is_due(self, *, book: int, frequency: str, on: date) -> bool:
        return frequency == "quarterly" and on.day == 1 and on.month in self.months

    def due_books(self, on: date) -> list[int]:
        """One book: no account is billed by its book number."""
        return []

    def due_frequencies(self, on: date) -> set[str]:
        return {"quarterly"} if on.day == 1 and on.month in self.months else set()

    def billable_year_start(self, *, book: int, on: date) -> date:
        year = on.year if on.month >= self.year_start_month else on.year - 1
        return date(year, self.year_start_month, 1)

    def due_date(self, issued_on: date) -> date:
        if "days_after_bill_date" in self.due:
            return issued_on + timedelta(days=self.due["days_after_bill_date"])
        return add_months(issued_on, self.due["months_after_bill_date"])

    def cycle(self, *, book: int, frequency: str, bill_date: date) -> Cycle:
        return Cycle(frequency, bill_date, self.due_date(bill_date), month_before(bill_date),
                     self.billable_year_start(book=book, on=bill_date), self.citation)

