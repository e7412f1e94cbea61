"""A closed day stays closed. After the day's close nothing dated the day changes its books: a payment keyed late, a
run issued for an earlier bill date, a late charge assessed for the day, a reversal dated the day — each is written
with its own date (the balances and late charges read it there) and reaches the general ledger on the day it is
entered, its own date named. The journal and the cash report of the closed day read the same before and after every
kind of late entry. A supervisor may reopen a day at a clerk's request (``core.approval``), recorded; closed again,
its books are fixed again. CI runs this on PostgreSQL."""

from datetime import date
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from billing.balances import balances
from billing.cash import cash_day, cash_day_rows
from billing.models import LedgerEntry, Payment
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from core.clock import today
from core.errors import ApplicationError
from office.journal import journal_entries, journal_rows
from office.models import DayClose, DayReopen
from office.services import day_close, day_reopen_decide, day_reopen_request
from tests.billing.steps import account_with_meter, read, run
from tests.office.conftest import staff
from tests.termination.steps import delinquent_account

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: the day's close")]
D = Decimal
FEB1, MAR1, MAR2 = date(2026, 2, 1), date(2026, 3, 1), date(2026, 3, 2)


def books(day: date) -> tuple:
    """The day's journal as the general ledger takes it, and its cash report, as CSV rows."""
    return (journal_rows(journal_entries(start=day, end=day)), cash_day_rows(cash_day(on=day)))


@pytest.fixture
def closed(mineola):
    """Mineola's worked bill (Feb 1, due Mar 1), $50.00 cash at the counter on Mar 2; Feb 1, Mar 1 and Mar 2 closed by
    the clerk."""
    account, _ = delinquent_account(occupant=False)
    payment_post(account_no=account.account_no, amount=D("50.00"), paid_on=MAR2, reference="CTR-50",
                 tender=Payment.Tender.CASH)
    clerk = staff("clara", "Clerk")
    day_close(on=FEB1, counted_cash=D("0"), counted_checks=D("0"), note="", actor=clerk)
    day_close(on=MAR1, counted_cash=D("0"), counted_checks=D("0"), note="", actor=clerk)
    day_close(on=MAR2, counted_cash=D("50.00"), counted_checks=D("0"), note="", actor=clerk)
    return account, clerk


def test_the_books_of_a_closed_day_never_change(closed, django_capture_on_commit_callbacks):
    account, clerk = closed
    before = {day: books(day) for day in (FEB1, MAR1, MAR2)}
    assert before[MAR2][0][1][6] == "50.00"  # cash debited by the day's payment

    # A check dated Mar 2, keyed today.
    payment_post(account_no=account.account_no, amount=D("20.00"), paid_on=MAR2, reference="CHK-20",
                 tender=Payment.Tender.CHECK, check_number="20")
    # A run issued today for the bill date Feb 1: a new account of the book, read in January.
    other, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_040_000)
    run("run_billing", "--date", "2026-02-01")
    # The late charge of Mar 2 on the unpaid bill (due Mar 1), assessed today.
    run("assess_penalties", "--date", "2026-03-02", "--no-progress")
    # The counter's cash payment reversed as entered in error, dated Mar 2.
    with django_capture_on_commit_callbacks(execute=True):
        payment_reverse(payment=Payment.objects.get(reference="CTR-50"), reason="error", note="keyed twice",
                        reversed_on=MAR2, actor=clerk)

    late = LedgerEntry.objects.filter(posted_on__in=(FEB1, MAR1, MAR2), booked_on__isnull=False)
    assert set(late.values_list("kind", flat=True)) >= {"payment", "water", "penalty", "payment_reversal"}
    assert set(late.values_list("booked_on", flat=True)) == {today()}
    assert {day: books(day) for day in (FEB1, MAR1, MAR2)} == before

    # Today's books hold them, each journal entry naming the late entries' own dates.
    todays = journal_entries(start=today(), end=today())
    assert {entry.journal for entry in todays} >= {"billing", "payments", "penalties"}
    assert {entry.journal: entry.late_words for entry in todays if entry.journal != "payments"} == {
        "billing": "with late entries dated Feb 1, 2026", "penalties": "with late entries dated Mar 2, 2026"}
    assert next(entry for entry in todays if entry.journal == "payments").late_days == (MAR2,)
    assert [line.dated for line in cash_day(on=today()).lines if line.reference == "CHK-20"] == [MAR2]
    # The balances and the late charges read each on its own day: the check paid on Mar 2.
    assert LedgerEntry.objects.get(source__startswith="payment:", payment__reference="CHK-20").posted_on == MAR2
    assert balances([account.pk], through=MAR2)[account.pk].balance == D("186.13") - D("20.00") + \
        LedgerEntry.objects.get(account=account, kind="penalty").amount.amount


def test_a_supervisor_reopens_a_day_at_a_clerks_request_and_it_closes_again(closed):
    account, clerk = closed
    supervisor = staff("sam", "Supervisor")
    close = DayClose.objects.get(day=MAR2)
    with pytest.raises(ApplicationError) as no_reason:
        day_reopen_request(close=close, reason="", actor=clerk)
    assert "needs a reason" in str(no_reason.value)
    reopen = day_reopen_request(close=close, reason="a check found in the drawer after the count", actor=clerk)
    with pytest.raises(ApplicationError) as same:
        day_reopen_decide(reopen=reopen, approve=True, note="", actor=clerk)
    assert "only a supervisor or an approver approves" in str(same.value)
    day_reopen_decide(reopen=reopen, approve=True, note="seen the check", actor=supervisor)
    close.refresh_from_db()
    assert not close.is_closed and DayReopen.objects.get().decided_by == supervisor
    # Open again: an entry dated the day reaches its own books.
    payment_post(account_no=account.account_no, amount=D("15.00"), paid_on=MAR2, reference="CTR-15",
                 tender=Payment.Tender.CASH)
    assert LedgerEntry.objects.get(payment__reference="CTR-15").booked_on is None
    assert books(MAR2)[0][1][6] == "65.00"
    # Closed again with the new count: fixed again.
    close = day_close(on=MAR2, counted_cash=D("65.00"), counted_checks=D("0"), note="", actor=clerk)
    assert close.is_closed and close.expected_cash == D("65.00")
    payment_post(account_no=account.account_no, amount=D("5.00"), paid_on=MAR2, reference="CTR-5",
                 tender=Payment.Tender.CASH)
    assert LedgerEntry.objects.get(payment__reference="CTR-5").booked_on == today()


def test_one_page_closes_the_day_and_shows_its_books_as_the_clerk_sees_it(closed):
    account, clerk = closed
    client = Client()
    client.force_login(clerk)
    page = client.get(reverse("admin:office_dayclose_add"), {"day": "2026-03-03"}).content.decode()
    assert "The drawer should hold" in page and "The day&#x27;s books" in page and "Cash report" in page
    close = DayClose.objects.get(day=MAR2)
    page = client.get(reverse("admin:office_dayclose_change", args=[close.pk])).content.decode()
    assert "Ask to reopen this day" in page and "1 journal entry, $50.00 debited and credited" in page
    response = client.post(reverse("admin:office_dayreopen_add"), {"day": "2026-03-02", "reason": "keyed late"})
    assert response.status_code == 302
    supervisor = Client()
    supervisor.force_login(staff("sam", "Supervisor"))
    reopen = DayReopen.objects.get()
    decide = reverse("admin:office_dayreopen_decide", args=[reopen.pk])
    assert "Approve or refuse reopening" in supervisor.get(
        reverse("admin:office_dayclose_change", args=[close.pk])).content.decode()
    assert supervisor.post(decide, {"decision": "approve", "note": ""}).status_code == 302
    assert not DayClose.objects.get(day=MAR2).is_closed
