"""A closed account's balance or credit moved to the owner's other account; a fee invoiced on its own with its own
due date; the day's drawer closed with its over or short."""

from datetime import date
from decimal import Decimal

import pytest

from accounts.models import Account
from billing.models import Adjustment, LedgerEntry, Payment
from billing.services.final_bills import account_move
from billing.services.payments import payment_post
from core.errors import ApplicationError
from office.documents import invoice_pdf
from office.models import DayClose, Invoice, Transfer
from office.services import day_close, drawer_expected, invoice_create, transfer_make
from tests.factories import AccountFactory, CustomerFactory
from tests.office.conftest import balance, fields

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: back office")]
D = Decimal


@pytest.fixture
def moved(overpaid):
    """The overpaid account's owner moves within the village on 2026-03-18: the final bill from the Jan 12 reading
    (1,062,500) to 1,070,500 and a new account for the owner at the new premises."""
    old = overpaid
    move = account_move(account=old, on=date(2026, 3, 18), new_owner=old.owner, new_account_no="1-9001", actor=None,
                        final_reading=1_070_500, as_of=date(2026, 3, 20))
    old.refresh_from_db()
    assert old.status == Account.Status.CLOSED
    return old, move


def test_a_credit_left_after_the_final_bill_moves_to_the_owners_new_account(moved, clerk):
    old, move = moved
    final = move.final_bill.total.amount
    left = balance(old, date(2026, 3, 20))
    assert left == final - D("63.87")
    if left >= 0:  # the final bill used the whole credit: overpay it so a credit is left
        payment_post(account_no=old.account_no, amount=left + D("25.00"), paid_on=date(2026, 3, 20), reference="OVR")
        left = D("-25.00")
    transfer = transfer_make(from_account=old, to_account=move.new_account, as_of=date(2026, 3, 21),
                             reason="owner asked to carry the credit", actor=clerk)
    assert (transfer.amount, transfer.what) == (left, "Credit")
    assert balance(old, date(2026, 3, 21)) == D("0.00")
    assert balance(move.new_account, date(2026, 3, 21)) == left
    memo = Adjustment.objects.get(pk=transfer.to_memo_id)
    assert (memo.kind, memo.description) == ("credit", f"Credit moved from account {old.account_no}")


def test_a_final_balance_moves_and_is_owed_on_the_new_account(mineola, clerk):
    from tests.termination.steps import delinquent_account

    old, _ = delinquent_account(occupant=False)
    move = account_move(account=old, on=date(2026, 3, 18), new_owner=old.owner, new_account_no="1-9002", actor=None,
                        final_reading=1_070_500, as_of=date(2026, 3, 20))
    owed = balance(old, date(2026, 3, 20))
    assert owed > D("186.13")
    transfer = transfer_make(from_account=old, to_account=move.new_account, as_of=date(2026, 3, 20), reason="r",
                             actor=clerk)
    assert (transfer.amount, transfer.what) == (owed, "Unpaid balance")
    assert balance(old, date(2026, 3, 20)) == D("0.00")
    assert balance(move.new_account, date(2026, 3, 20)) == owed


def test_a_transfer_is_only_from_a_closed_account_to_the_same_owners_open_one(overpaid, clerk):
    stranger = AccountFactory(book=1, owner=CustomerFactory(name="Somebody Else"))
    with pytest.raises(ApplicationError) as refused:
        transfer_make(from_account=overpaid, to_account=stranger, as_of=date(2026, 3, 2), reason="", actor=clerk)
    assert fields(refused) == {"from_account_no", "to_account_no", "reason"}
    assert "not closed" not in str(refused.value) and "belongs to Somebody Else" in str(refused.value)
    assert not Transfer.objects.exists() and not Adjustment.objects.exists()


def test_a_fee_is_invoiced_on_its_own_due_date(overpaid, clerk):
    account = overpaid
    invoice = invoice_create(account=account, code="tank_wagon", as_of=date(2026, 3, 2), due_on=date(2026, 3, 16),
                             actor=clerk)
    entry = LedgerEntry.objects.get(source=f"invoice:{invoice.pk}")
    assert (entry.kind, entry.bill_id, entry.amount.amount, entry.posted_on) == (
        "fee", None, invoice.amount.amount, date(2026, 3, 2))
    assert invoice.citation and invoice.citation in entry.citation
    assert "due Mar 16, 2026" in entry.description
    # Owed from its date: the account's credit pays it.
    assert balance(account, date(2026, 3, 2)) == D("-63.87") + invoice.amount.amount
    pdf = invoice_pdf(invoice)
    assert pdf.startswith(b"%PDF")


def test_an_invoice_is_refused_naming_its_fields(overpaid, clerk):
    with pytest.raises(ApplicationError) as refused:
        invoice_create(account=overpaid, code="no_such_fee", as_of=date(2026, 3, 2), due_on=date(2026, 3, 1),
                       actor=clerk)
    assert fields(refused) == {"code", "due_on"}
    with pytest.raises(ApplicationError) as too_late:
        invoice_create(account=overpaid, code="tank_wagon", as_of=date(2026, 3, 2), due_on=date(2026, 9, 1), actor=clerk)
    assert fields(too_late) == {"due_on"}
    assert not Invoice.objects.exists()


def test_the_days_drawer_is_closed_with_its_over_or_short(overpaid, clerk):
    account = overpaid
    payment_post(account_no=account.account_no, amount=D("40.00"), paid_on=date(2026, 3, 2), reference="CASH-40",
                 tender=Payment.Tender.CASH, source="counter")
    payment_post(account_no=account.account_no, amount=D("25.00"), paid_on=date(2026, 3, 2), reference="CHK-25",
                 tender=Payment.Tender.CHECK, source="counter")
    expected = drawer_expected(on=date(2026, 3, 2))
    assert (expected.cash, expected.checks, expected.count) == (D("40.00"), D("25.00"), 2)
    with pytest.raises(ApplicationError) as unexplained:
        day_close(on=date(2026, 3, 2), counted_cash=D("38.00"), counted_checks=D("25.00"), note="", actor=clerk)
    assert fields(unexplained) == {"note"} and "short by $2.00" in str(unexplained.value)
    close = day_close(on=date(2026, 3, 2), counted_cash=D("38.00"), counted_checks=D("25.00"),
                      note="change given twice", actor=clerk)
    assert close.over_short == D("-2.00")
    with pytest.raises(ApplicationError) as twice:
        day_close(on=date(2026, 3, 2), counted_cash=D("40.00"), counted_checks=D("25.00"), note="", actor=clerk)
    assert fields(twice) == {"day"}
    balanced = day_close(on=date(2026, 3, 3), counted_cash=D("0"), counted_checks=D("0"), note="", actor=clerk)
    assert balanced.over_short == 0 and DayClose.objects.count() == 2
