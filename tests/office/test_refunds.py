"""Refunds of a credit balance: a clerk asks, a supervisor (another person) approves, the refund is posted through
billing's one writer and goes on the check register for accounts payable. Every refusal names its field."""

from datetime import date
from decimal import Decimal

import pytest

from billing.models import LedgerEntry
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from core.errors import ApplicationError
from office.models import Refund
from office.services import account_credit, check_register_rows, refund_decide, refund_request
from tests.office.conftest import balance, fields

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: refunds of credits")]
D = Decimal


def test_a_credit_is_refunded_once_a_supervisor_approves(overpaid, clerk, supervisor):
    account = overpaid
    assert account_credit(account, as_of=date(2026, 3, 2)).credit == D("63.87")
    refund = refund_request(account=account, amount=D("63.87"), reason="moved away, asked for the overpayment",
                            as_of=date(2026, 3, 2), actor=clerk)
    assert (refund.status, refund.payee_name) == ("pending", account.owner.name)
    assert not LedgerEntry.objects.filter(kind="refund").exists()  # nothing posted while it waits
    with pytest.raises(ApplicationError) as same_person:
        refund_decide(refund=refund, approve=True, note="", as_of=date(2026, 3, 3), actor=clerk)
    assert fields(same_person) == {"actor"}  # a clerk has no approval at all
    refund = refund_decide(refund=refund, approve=True, note="", as_of=date(2026, 3, 3), actor=supervisor)
    assert (refund.status, refund.refunded_on) == ("approved", date(2026, 3, 3))
    entry = LedgerEntry.objects.get(kind="refund")
    assert (entry.amount.amount, entry.posted_on, entry.source) == (D("63.87"), date(2026, 3, 3), f"refund:{refund.pk}")
    assert balance(account, date(2026, 3, 3)) == D("0.00")
    with pytest.raises(ApplicationError) as again:
        refund_decide(refund=refund, approve=True, note="", as_of=date(2026, 3, 3), actor=supervisor)
    assert "already decided" in str(again.value)


def test_the_check_register_lists_the_approved_refunds_for_accounts_payable(overpaid, clerk, supervisor):
    account = overpaid
    account.owner.mailing_address = "14 Main St\nMineola NY 11501"
    account.owner.save()
    refund = refund_request(account=account, amount=D("50.00"), reason="asked", as_of=date(2026, 3, 2), actor=clerk)
    refund_decide(refund=refund, approve=True, note="ok", as_of=date(2026, 3, 4), actor=supervisor)
    rows = check_register_rows(start=date(2026, 3, 1), end=date(2026, 3, 31))
    assert rows[0] == ["voucher", "approved_on", "payee", "address", "account_no", "amount", "memo", "requested_by",
                       "approved_by"]
    assert rows[1] == [refund.number, "2026-03-04", account.owner.name, "14 Main St, Mineola NY 11501",
                       account.account_no, "50.00", f"Refund of water account credit {account.account_no}", "Clara",
                       "Sam"]
    assert rows[2][0] == "Total" and rows[2][5] == "50.00" and rows[2][2] == "1 check"
    assert check_register_rows(start=date(2026, 4, 1), end=date(2026, 4, 30))[1][5] == "0.00"
    # The account keeps its remaining $13.87 of credit.
    assert balance(account, date(2026, 3, 4)) == D("-13.87")


def test_a_refund_is_never_more_than_the_credit(overpaid, clerk):
    with pytest.raises(ApplicationError) as too_much:
        refund_request(account=overpaid, amount=D("63.88"), reason="", as_of=date(2026, 3, 2), actor=clerk)
    assert fields(too_much) == {"amount", "reason"}
    assert "more than account" in str(too_much.value) and "$63.87" in str(too_much.value)
    with pytest.raises(ApplicationError) as before_the_payment:  # on Feb 10 the bill was still owed
        refund_request(account=overpaid, amount=D("10.00"), reason="r", as_of=date(2026, 2, 10), actor=clerk)
    assert fields(before_the_payment) == {"amount"}
    with pytest.raises(ApplicationError) as future:
        refund_request(account=overpaid, amount=D("10.00"), reason="r", as_of=date(2099, 1, 1), actor=clerk)
    assert "requested_on" in fields(future)
    assert not Refund.objects.exists()


def test_one_refund_waits_at_a_time_and_a_refusal_says_why(overpaid, clerk, supervisor):
    refund = refund_request(account=overpaid, amount=D("20.00"), reason="r", as_of=date(2026, 3, 2), actor=clerk)
    with pytest.raises(ApplicationError) as second:
        refund_request(account=overpaid, amount=D("20.00"), reason="r", as_of=date(2026, 3, 2), actor=clerk)
    assert fields(second) == {"account_no"}
    with pytest.raises(ApplicationError) as no_note:
        refund_decide(refund=refund, approve=False, note=" ", as_of=date(2026, 3, 3), actor=supervisor)
    assert fields(no_note) == {"note"}
    refund = refund_decide(refund=refund, approve=False, note="keep it for the next bill", as_of=date(2026, 3, 3),
                           actor=supervisor)
    assert refund.status == "refused" and not LedgerEntry.objects.filter(kind="refund").exists()


def test_approval_is_refused_when_the_credit_is_gone(overpaid, clerk, supervisor):
    account = overpaid
    refund = refund_request(account=account, amount=D("63.87"), reason="r", as_of=date(2026, 3, 2), actor=clerk)
    payment = account.payments.get(reference="CHK-250")
    payment_reverse(payment=payment, reason="returned", note="NSF", reversed_on=date(2026, 3, 3), actor=supervisor)
    with pytest.raises(ApplicationError) as gone:
        refund_decide(refund=refund, approve=True, note="", as_of=date(2026, 3, 4), actor=supervisor)
    assert fields(gone) == {"amount"} and "credit on Mar 4, 2026 ($0.00)" in str(gone.value)
    assert Refund.objects.get().status == "pending"


def test_a_refund_later_undone_by_a_returned_check_is_owed_again(overpaid, clerk, supervisor):
    # Refunded on the strength of a check that then bounces: the village paid out money it never had, and the
    # account owes it (with the bill the check had paid).
    account = overpaid
    refund = refund_request(account=account, amount=D("63.87"), reason="r", as_of=date(2026, 3, 2), actor=clerk)
    refund_decide(refund=refund, approve=True, note="", as_of=date(2026, 3, 2), actor=supervisor)
    payment_reverse(payment=account.payments.get(reference="CHK-250"), reason="returned", note="NSF",
                    reversed_on=date(2026, 3, 5), actor=supervisor)
    owed = balance(account, date(2026, 3, 5))
    assert owed >= D("186.13") + D("63.87")
    payment_post(account_no=account.account_no, amount=owed, paid_on=date(2026, 3, 6), reference="CASH-1")
    assert balance(account, date(2026, 3, 6)) == D("0.00")
