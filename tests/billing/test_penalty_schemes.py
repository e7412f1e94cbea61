"""One-time and no-penalty schemes (docs/ordinances.md: South Farmingdale, Lansing, Old Westbury): pure, the
dollars worked by hand."""

from datetime import date
from decimal import Decimal

import pytest

from billing.ledger.allocation import Entry
from billing.penalties.rules import BillTerms, NoPenalty, OneTime, penalties_owed

D = Decimal
BILLED = D("84.25")

# South Farmingdale § 4.2: due when rendered; accounts delinquent in excess of 30 days pay 10% once, on
# bill date + 31 days.
SOUTH_FARMINGDALE = {"percent": "10", "days_after_due": 31, "citation": "§ 4.2", "charges_on": ["water", "fee"],
                     "description": "Late payment penalty"}
# The preset's form: counted from the bill date, whatever the due date.
SOUTH_FARMINGDALE_BY_BILL_DATE = {"percent": "10", "days_after_bill_date": 31, "citation": "§ 4.2",
                                  "charges_on": ["water", "fee"],
                                  "description": "Penalty on delinquent account"}
# Lansing § 141-17: 15% of the delinquent amount, once; sample due date bill date + 30 days, penalty the
# day after.
LANSING = {"percent": "15", "citation": "§ 141-17", "description": "Delinquent water rent penalty",
           "charges_on": ["water"]}


def bill(bill_date, due_date, amount=BILLED, bill_id=1):
    key = (bill_date, bill_id)
    return BillTerms(key=key, bill_date=bill_date, due_date=due_date), \
        Entry(kind="water", posted_on=bill_date, amount=D(amount), bill_key=key)


def payment(day, amount):
    return Entry(kind="payment", posted_on=day, amount=-D(amount))


def owed(scheme, terms, entries, through):
    return [(p.due.on, p.amount, p.due.citation)
            for p in penalties_owed(entries=entries, bills=[terms], scheme=scheme, through=through)]


@pytest.mark.citation("§ 4.2")
def test_south_farmingdale_ten_percent_once_when_more_than_thirty_days_delinquent():
    scheme = OneTime(SOUTH_FARMINGDALE)
    # Billed and due 2026-02-01; 30 days delinquent on 2026-03-03 (not yet "in excess of 30"), 31 on 03-04.
    terms, charge = bill(date(2026, 2, 1), date(2026, 2, 1))
    assert owed(scheme, terms, [charge], date(2026, 3, 3)) == []
    # 10% of $84.25 = $8.425 → $8.43 (half-up).
    assert owed(scheme, terms, [charge], date(2026, 3, 4)) == [(date(2026, 3, 4), D("8.43"), "§ 4.2")]
    # Once: nothing more however long it stays unpaid.
    assert owed(scheme, terms, [charge], date(2026, 12, 31)) == [(date(2026, 3, 4), D("8.43"), "§ 4.2")]


@pytest.mark.citation("§ 4.2")
def test_south_farmingdale_penalty_is_on_the_unpaid_part_and_nothing_on_a_paid_bill():
    scheme = OneTime(SOUTH_FARMINGDALE)
    terms, charge = bill(date(2026, 2, 1), date(2026, 2, 1))
    # $50.00 paid on 02-20 leaves $34.25: 10% = $3.425 → $3.43.
    assert owed(scheme, terms, [charge, payment(date(2026, 2, 20), "50.00")], date(2026, 6, 30)) == [
        (date(2026, 3, 4), D("3.43"), "§ 4.2")]
    # Paid in full on day 30: no penalty.
    assert owed(scheme, terms, [charge, payment(date(2026, 3, 3), "84.25")], date(2026, 6, 30)) == []
    # Paid on day 31 itself: the penalty was owed at the start of that day.
    assert owed(scheme, terms, [charge, payment(date(2026, 3, 4), "84.25")], date(2026, 6, 30)) == [
        (date(2026, 3, 4), D("8.43"), "§ 4.2")]


@pytest.mark.citation("§ 141-17")
def test_lansing_fifteen_percent_once_the_day_after_the_due_date():
    scheme = OneTime(LANSING)
    # Billed 2026-05-01, due 30 days later on 05-31; the penalty falls on 06-01.
    terms, charge = bill(date(2026, 5, 1), date(2026, 5, 31))
    assert scheme.dates(bill_date=date(2026, 5, 1), due_date=date(2026, 5, 31), through=date(2026, 5, 31)) == []
    assert owed(scheme, terms, [charge], date(2026, 5, 31)) == []
    # 15% of $84.25 = $12.6375 → $12.64.
    assert owed(scheme, terms, [charge], date(2026, 6, 1)) == [(date(2026, 6, 1), D("12.64"), "§ 141-17")]
    assert owed(scheme, terms, [charge], date(2027, 5, 1)) == [(date(2026, 6, 1), D("12.64"), "§ 141-17")]
    [due] = scheme.dates(bill_date=date(2026, 5, 1), due_date=date(2026, 5, 31), through=date(2027, 5, 1))
    assert due.description == "Delinquent water rent penalty: 15%"


@pytest.mark.citation("§ 141-17")
def test_lansing_nothing_on_a_bill_paid_by_its_due_date():
    scheme = OneTime(LANSING)
    terms, charge = bill(date(2026, 5, 1), date(2026, 5, 31))
    assert owed(scheme, terms, [charge, payment(date(2026, 5, 31), "84.25")], date(2027, 5, 1)) == []
    assert scheme.amount(scheme.dates(bill_date=date(2026, 5, 1), due_date=date(2026, 5, 31),
                                      through=date(2026, 6, 1))[0],
                         unpaid_principal=D("0.00"), unpaid_total=D("0.00")) == D("0")


def test_no_penalty_never_charges_anything():
    # Old Westbury's sample: no late penalty.
    scheme = NoPenalty({"words": "No late payment penalty."})
    terms, charge = bill(date(2026, 2, 1), date(2026, 3, 3))
    assert scheme.dates(bill_date=date(2026, 2, 1), due_date=date(2026, 3, 3), through=date(2030, 1, 1)) == []
    assert owed(scheme, terms, [charge], date(2030, 1, 1)) == []
    assert scheme.words == "No late payment penalty." and scheme.citation == ""


@pytest.mark.citation("§ 4.2")
def test_a_one_time_penalty_counted_from_the_bill_date_ignores_the_due_date():
    # South Farmingdale's preset counts "in excess of thirty (30) days" from the bill date: bill date + 31.
    scheme = OneTime(SOUTH_FARMINGDALE_BY_BILL_DATE)
    # Due when rendered: 2026-02-01 + 31 days = 2026-03-04.
    [due] = scheme.dates(bill_date=date(2026, 2, 1), due_date=date(2026, 2, 1), through=date(2026, 12, 31))
    assert due.on == date(2026, 3, 4)
    # Had a clerk given the bills 10 days to pay, the penalty day would not move: still 2026-03-04,
    # not 2026-02-11 + 31 days.
    terms, charge = bill(date(2026, 2, 1), date(2026, 2, 11))
    assert owed(scheme, terms, [charge], date(2026, 3, 3)) == []
    # 10% of $84.25 = $8.425 → $8.43.
    assert owed(scheme, terms, [charge], date(2026, 3, 4)) == [(date(2026, 3, 4), D("8.43"), "§ 4.2")]


def test_a_one_time_penalty_counts_from_one_date_only():
    from core.errors import ApplicationError

    with pytest.raises(ApplicationError, match="not both"):
        OneTime({**SOUTH_FARMINGDALE_BY_BILL_DATE, "days_after_due": 1})
