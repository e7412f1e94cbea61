"""The day's books as general ledger journal entries: each balances (debits = credits), a day's payments journal
debits cash by the cash report's total, and a bill day's billing journal credits revenue by the billing register's
total. CI runs this on PostgreSQL (``.ci/run``), where decimal sums are exact in the database too."""

from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from billing.cash import cash_day
from billing.models import Bill, Payment
from billing.services.adjustments import adjustment_create
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from office.journal import journal_entries, journal_rows
from office.services import invoice_create, refund_decide, refund_request
from reports.selectors import register
from tests.billing.steps import account_with_meter, read, run

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: general ledger")]
D = Decimal


def lines(entry) -> dict[str, tuple[Decimal, Decimal]]:
    return {x.account.number: (x.debit, x.credit) for x in entry.lines}


@pytest.fixture
def books(overpaid, clerk, supervisor):
    """Mineola's worked bill and four more of the same run, a day of counter payments with a check handed back, a
    credit memo, an invoice, penalties, and a refund."""
    for book, reading in ((1, 1_030_000), (1, 1_045_500), (2, 1_080_000), (2, 1_200_000)):
        account, meter = account_with_meter(book=book)
        read(meter, date(2026, 1, 12), reading)
    run("run_billing", "--date", "2026-02-01")  # the new accounts' bills; the overpaid one is billed already
    bills = list(Bill.objects.order_by("id"))
    day = date(2026, 2, 20)
    payment_post(account_no=bills[1].account.account_no, amount=D("30.00"), paid_on=day, reference="CASH-30",
                 tender=Payment.Tender.CASH)
    bounced = payment_post(account_no=bills[2].account.account_no, amount=D("45.00"), paid_on=day, reference="CHK-45")
    payment_reverse(payment=Payment.objects.get(reference="CHK-45"), reversed_on=day, reason="error",
                    note="wrong amount, handed back", actor=supervisor)
    adjustment_create(bill=bills[3], kind="credit", amount=D("12.50"), reason="leak", as_of=day, actor=clerk)
    invoice_create(account=bills[4].account, code="tank_wagon", as_of=day, due_on=date(2026, 3, 6), actor=clerk)
    run("assess_penalties", "--date", "2026-03-16", "--no-progress")
    refund = refund_request(account=overpaid, amount=D("63.87"), reason="asked", as_of=date(2026, 3, 16), actor=clerk)
    refund_decide(refund=refund, approve=True, note="", as_of=date(2026, 3, 16), actor=supervisor)
    assert bounced
    return bills


def test_every_journal_entry_balances_and_ties_to_the_cash_report_and_the_register(books):
    entries = journal_entries(start=date(2026, 2, 1), end=date(2026, 3, 31))
    assert entries and all(e.debits == e.credits and e.debits > 0 for e in entries)
    by_key = {(e.day, e.journal): e for e in entries}

    billing = by_key[(date(2026, 2, 1), "billing")]
    billed = register(bill_date=date(2026, 2, 1)).total
    assert lines(billing)["F350"] == (billed, D("0"))
    assert lines(billing)["F2140"][1] == billed  # Mineola's bills are all metered water

    day = date(2026, 2, 20)
    cash = cash_day(on=day)
    payments = by_key[(day, "payments")]
    assert cash.total == D("250.00") + D("30.00")  # the check handed back the same day is a negative line
    assert lines(payments)["F200"] == (cash.total, D("0"))
    assert lines(payments)["F350"] == (D("0"), cash.total)

    correction = lines(by_key[(day, "adjustments")])
    assert correction["F350"] == (D("0"), D("12.50"))
    invoice = lines(by_key[(day, "invoices")])
    assert invoice["F350"] == (D("25.00"), D("0")) and invoice["F2144"] == (D("0"), D("25.00"))
    refund = lines(by_key[(date(2026, 3, 16), "refunds")])
    assert refund == {"F350": (D("63.87"), D("0")), "F600": (D("0"), D("63.87"))}
    penalties = [e for e in entries if e.journal == "penalties"]
    assert penalties and all(set(lines(e)) == {"F350", "F2148"} for e in penalties)


def test_the_journal_csv_and_its_page(books, client, supervisor):
    rows = journal_rows(journal_entries(start=date(2026, 2, 1), end=date(2026, 2, 28)))
    assert rows[0] == ["entry", "date", "journal", "fund", "account", "account_name", "debit", "credit", "memo"]
    assert rows[1][:6] == ["WB-20260201-billing", "2026-02-01", "billing", "F", "F350", "Water rents receivable"]
    debits = sum(D(r[6]) for r in rows[1:] if r[6])
    credits = sum(D(r[7]) for r in rows[1:] if r[7])
    assert debits == credits
    client.force_login(supervisor)
    url = reverse("admin:office_dayclose_journal")
    page = client.get(url, {"start": "2026-02-01", "end": "2026-02-28"})
    assert page.status_code == 200 and b"(balanced)" in page.content and b"NOT BALANCED" not in page.content
    download = client.get(url, {"start": "2026-02-01", "end": "2026-02-28", "format": "csv"})
    assert download["Content-Type"] == "text/csv" and download.content.decode().splitlines()[0].startswith("entry,")
    refused = client.get(url, {"start": "2026-02-28", "end": "2026-02-01"})
    assert refused.status_code == 400 and b"is before" in refused.content


def test_a_voided_bill_takes_back_its_revenue_account_by_account(books, supervisor):
    from billing.services.adjustments import bill_void

    bill = books[1]
    bill_void(bill=bill, reason="misread", as_of=date(2026, 2, 21), actor=supervisor)
    [entry] = [e for e in journal_entries(start=date(2026, 2, 21), end=date(2026, 2, 21)) if e.journal == "adjustments"]
    assert lines(entry) == {"F2140": (bill.total.amount, D("0")), "F350": (D("0"), bill.total.amount)}


def test_the_journal_command_writes_the_csv_and_refuses_bad_dates(books, tmp_path):
    import io

    from django.core.management import call_command
    from django.core.management.base import CommandError

    out = io.StringIO()
    call_command("journal", "--from", "2026-02-01", "--to", "2026-02-28", "--out", str(tmp_path / "j.csv"), stdout=out)
    assert "journal entries" in out.getvalue() and (tmp_path / "j.csv").read_text().startswith("entry,date,")
    printed = io.StringIO()
    call_command("journal", "--to", "2026-03-16", "--check-register", stdout=printed)
    assert "R-" in printed.getvalue() and "63.87" in printed.getvalue()
    with pytest.raises(CommandError, match="is before"):
        call_command("journal", "--from", "2026-03-01", "--to", "2026-02-01", stdout=io.StringIO())
    with pytest.raises(CommandError, match="--to"):
        call_command("journal", "--to", "2026-02-30", stdout=io.StringIO())
