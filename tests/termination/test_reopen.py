"""One office: a payment that paid a termination case in full and is then reversed (a returned check, a dispute,
a refund, a payment moved to another account) reopens the case where it left off, says why in its history, and
shows on the clerk's dashboard. A case whose shut-off order the payment cancelled goes back to before the order:
a new order must pass the guard again."""

from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from billing.models import Payment
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from termination.models import CaseEvent, TerminationCase, WorkOrder
from tests.factories import clerk_user
from tests.termination.steps import delinquent_account, served_case, term, terminated_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: reversal reopens a case")]


def case(number: str) -> TerminationCase:
    return TerminationCase.objects.get(number=number)


def paid_in_full(account, on: date, reference: str, capture) -> Payment:
    with capture(execute=True):
        payment_post(account_no=account.account_no, amount=Decimal("186.13"), paid_on=on, reference=reference)
    return Payment.objects.get(reference=reference)


def test_a_returned_check_reopens_the_case_it_paid_where_it_left_off(mineola, django_capture_on_commit_callbacks,
                                                                     client, monkeypatch):
    account, _ = delinquent_account()
    number = served_case(account)
    before = case(number).status
    payment = paid_in_full(account, date(2026, 4, 5), "CHK-1", django_capture_on_commit_callbacks)
    assert case(number).status == "paid"
    with django_capture_on_commit_callbacks(execute=True):
        payment_reverse(payment=payment, reversed_on=date(2026, 4, 9), reason="returned", note="NSF", actor=None)
    reopened = case(number)
    assert reopened.status == before and reopened.closed_on is None
    event = CaseEvent.objects.get(case=reopened, kind="reopened")
    assert event.flagged and event.on == date(2026, 4, 9)
    assert event.what == ("Reopened on Apr 9, 2026: payment CHK-1 reversed (returned check); $186.13 of the "
                          "delinquent amount is owed again")
    import waterbilling.admin

    monkeypatch.setattr(waterbilling.admin, "today", lambda: date(2026, 4, 10))
    client.force_login(clerk_user())
    home = client.get(reverse("admin:index")).content.decode()
    assert f"Reopened: {number}" in home


def test_a_case_whose_order_the_payment_cancelled_reopens_before_the_order(mineola,
                                                                          django_capture_on_commit_callbacks):
    account, _ = delinquent_account()
    number = terminated_case(account)
    term("shutoff", number, date_="2026-05-05")
    payment = paid_in_full(account, date(2026, 5, 6), "ONL-1", django_capture_on_commit_callbacks)
    assert case(number).status == "paid" and WorkOrder.objects.get().status == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        payment_reverse(payment=payment, reversed_on=date(2026, 5, 20), reason="returned", note="stopped",
                        actor=None)
    reopened = case(number)
    assert reopened.status == "determined"  # as before the order: a new order passes the guard again
    assert "Shut-off order" in term("shutoff", number, date_="2026-05-20")
    assert WorkOrder.objects.filter(case=reopened, status="issued").count() == 1  # a new order, through the guard


def test_a_reversal_that_leaves_the_case_paid_reopens_nothing(mineola, django_capture_on_commit_callbacks):
    account, _ = delinquent_account()
    number = served_case(account)
    payment = paid_in_full(account, date(2026, 4, 5), "CHK-1", django_capture_on_commit_callbacks)
    paid_in_full(account, date(2026, 4, 6), "CHK-2", django_capture_on_commit_callbacks)  # paid twice
    with django_capture_on_commit_callbacks(execute=True):
        payment_reverse(payment=payment, reversed_on=date(2026, 4, 9), reason="error", note="double entry",
                        actor=None)
    assert case(number).status == "paid" and not CaseEvent.objects.filter(kind="reopened").exists()
