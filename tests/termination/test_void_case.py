"""One office: a bill voided reaches the termination case it grounded. A case that nothing else grounds is
withdrawn and its shut-off order cancelled; a case whose water is already off stays off but is flagged for the
clerk to restore; either way the clerk's dashboard lists it (docs/architecture.md, event table)."""

from datetime import date

import pytest
from django.urls import reverse

from billing.services.adjustments import bill_void
from termination.models import CaseEvent, TerminationCase, WorkOrder
from termination.services.shutoff import shutoff_carry_out
from tests.factories import clerk_user
from tests.termination.steps import delinquent_account, refused, term, terminated_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: a voided bill withdraws its case")]


def void(bill, on: date, capture) -> None:
    with capture(execute=True):
        bill_void(bill=bill, reason="misread meter", as_of=on, actor=None)


def test_voiding_the_bill_of_an_ordered_case_withdraws_it_and_cancels_the_order(
        mineola, django_capture_on_commit_callbacks, client, monkeypatch):
    account, bill = delinquent_account()
    number = terminated_case(account)
    term("shutoff", number, date_="2026-05-05")
    assert WorkOrder.objects.get().status == "issued"
    void(bill, date(2026, 5, 6), django_capture_on_commit_callbacks)
    case = TerminationCase.objects.get(number=number)
    assert case.status == "withdrawn" and case.closed_on == date(2026, 5, 6) and case.is_closed
    assert WorkOrder.objects.get().status == "cancelled"
    event = CaseEvent.objects.get(case=case, kind="withdrawn")
    assert event.flagged
    assert event.what == (f"Bill {bill.number} voided on May 6, 2026: nothing the case was for is owed; case "
                          "withdrawn; 1 shut-off order cancelled")
    assert "no shut-off order issued" in refused("carried-out", number, date_="2026-05-07")
    import waterbilling.admin

    monkeypatch.setattr(waterbilling.admin, "today", lambda: date(2026, 5, 7))
    client.force_login(clerk_user())
    assert f"Withdrawn, bill voided: {number}" in client.get(reverse("admin:index")).content.decode()


def test_voiding_the_bill_after_the_shut_off_flags_the_case_for_restoration(mineola,
                                                                          django_capture_on_commit_callbacks):
    account, bill = delinquent_account()
    number = terminated_case(account)
    term("shutoff", number, date_="2026-05-05")
    shutoff_carry_out(case=TerminationCase.objects.get(number=number), done_on=date(2026, 5, 6), actor=None)
    void(bill, date(2026, 5, 8), django_capture_on_commit_callbacks)
    case = TerminationCase.objects.get(number=number)
    assert case.status == "shut_off"  # only the clerk restores service
    event = CaseEvent.objects.get(case=case, kind="bill_voided")
    assert event.flagged and "restore service" in event.what


def test_a_voided_bill_of_a_closed_case_changes_nothing(mineola, django_capture_on_commit_callbacks):
    account, bill = delinquent_account()
    number = term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20")
    term("dismiss", number, "--reason", "opened in error", date_="2026-03-21")
    void(bill, date(2026, 3, 25), django_capture_on_commit_callbacks)
    case = TerminationCase.objects.get(number=number)
    assert case.status == "dismissed"
    assert not CaseEvent.objects.filter(case=case, kind__in=("withdrawn", "bill_voided")).exists()
