"""History for the query-count tests: monthly accounts read, billed and paid month after month, as a clerk
would, and a way to see which queries a step made.

A 2" meter (book 3, category "other") is billed on the first of every month (§ 45.29 C) from a reading on
the 25th of the month before. Each month's reading is 130,000 gal past the last, more than the whole
125,000 gal annual allowance, so every bill has lines: the first bill of a billable year (from March 1 for
book 3) is the $480.00 annual minimum plus 5,000 gal × $3.85/1,000 = $19.25, $499.25 in all; every other
bill is 130,000 gal × $3.85/1,000 = $500.50. Constant use keeps every bill clear of the high-usage hold.
"""

import re
from datetime import date, timedelta

from billing.models import Bill
from tests.billing.steps import account_with_meter, pay, read, run

MONTHLY_GALLONS = 130_000


def _month_before(day: date) -> date:
    return date(day.year, day.month - 1, 1) if day.month > 1 else date(day.year - 1, 12, 1)


def first_of_months(*, before: date, count: int) -> list[date]:
    """The ``count`` firsts of the month before ``before`` (a first of the month), oldest first."""
    months = [_month_before(before)]
    while len(months) < count:
        months.append(_month_before(months[-1]))
    return months[::-1]


def monthly_accounts(count: int, *, first_bill: date) -> list[tuple]:
    """``count`` (account, meter) pairs with a 2" meter installed on the first of the month before
    ``first_bill``, at 0 gal."""
    start = _month_before(first_bill)
    return [account_with_meter(book=3, category="other", size="2", start=start, value=0) for _ in range(count)]


def read_for(meters: list, *, bill_date: date, months_billed: int) -> None:
    """Each meter's reading for the bill dated ``bill_date``, on the 25th of the month before: one more
    month of 130,000 gal after the ``months_billed`` months already billed."""
    read_on = _month_before(bill_date).replace(day=25)
    for meter in meters:
        read(meter, read_on, MONTHLY_GALLONS * (months_billed + 1))


def bill_history(accounts: list[tuple], *, months: int, before: date) -> list[date]:
    """Read and bill the accounts monthly (``run_billing --date``) for ``months`` bills dated before
    ``before``. Returns the bill dates."""
    dates = first_of_months(before=before, count=months)
    meters = [meter for _, meter in accounts]
    for billed, bill_date in enumerate(dates):
        read_for(meters, bill_date=bill_date, months_billed=billed)
        run("run_billing", "--date", bill_date.isoformat())
    return dates


def pay_each_bill_late(account, *, days: int) -> None:
    """Pay each of the account's bills in full, ``days`` after its due date."""
    for bill in Bill.objects.filter(account=account).order_by("bill_date"):
        pay(account, f"{bill.total.amount}", (bill.due_date + timedelta(days=days)).isoformat(),
            f"CHK-{bill.number}")


def _label(sql: str) -> str:
    if sql.startswith("SELECT"):
        table = re.search(r'\bFROM\s+"?(\w+)', sql)
        return f"SELECT {table.group(1) if table else sql[:60]}"
    statement = re.match(r'(INSERT INTO|UPDATE|DELETE FROM|(?:RELEASE |ROLLBACK TO )?SAVEPOINT)\s+"?(\w+)', sql)
    return f"{statement.group(1)} {statement.group(2)}" if statement else sql[:60]


def query_labels(captured) -> list[str]:
    """The captured queries in a line each (``SELECT billing_bill``), for a failing count's message."""
    return [_label(query["sql"]) for query in captured.captured_queries]


def assert_queries(captured, expected: int) -> None:
    labels = query_labels(captured)
    assert len(labels) == expected, f"{len(labels)} queries, {expected} expected:\n  " + "\n  ".join(labels)
