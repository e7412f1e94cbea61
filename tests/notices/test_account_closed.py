"""One office: an account closed with its final bill reaches every part that acts on it. Autopay ends (nothing is
debited for a service that has ended, and the final bill's debit is never noticed), the customer is told in their
language how to pay what is left, a termination case is withdrawn with its shut-off order, flagged for the clerk — and
the account's status changes only through ``accounts.services.account_close``."""

from datetime import date

import pytest
from django.core import mail

from accounts.services import account_close
from billing.services.final_bills import final_bill_issue
from core.errors import ApplicationError
from notices.models import CustomerNotice
from remittance.models import AutopayEnrolment, AutopayNotice
from termination.models import CaseEvent, TerminationCase, WorkOrder
from tests.termination.steps import delinquent_account, term, terminated_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: an account closed ends autopay")]


def test_a_final_bill_ends_autopay_and_tells_the_customer_how_to_pay_it(enrolled, django_capture_on_commit_callbacks):
    account, _client, _url = enrolled
    account.language = "es"
    account.save()
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        final = final_bill_issue(account=account, read_on=date(2026, 3, 10), reading=1_070_000,
                                 as_of=date(2026, 3, 11), actor=None)
    account.refresh_from_db()
    assert account.status == "closed" and account.closed_on == date(2026, 3, 10)
    enrolment = AutopayEnrolment.objects.get(account=account)
    assert enrolment.status == "cancelled" and enrolment.status_note == "account closed on Mar 10, 2026: autopay ended"
    assert not AutopayNotice.objects.filter(bill=final).exists()  # the final bill is never debited
    notice = CustomerNotice.objects.get(kind="autopay_ended")
    assert notice.language == "es" and notice.channel == "email"
    (told,) = [m for m in mail.outbox if "closed" in m.subject or "cerrada" in m.subject]
    assert told.subject == f"Pago automático terminado: la cuenta de agua {account.account_no} está cerrada"
    assert "pague su factura final" in told.body


def test_closing_an_account_cancels_its_shut_off_order_and_flags_the_case(mineola,
                                                                         django_capture_on_commit_callbacks):
    account, _bill = delinquent_account()
    number = terminated_case(account)
    term("shutoff", number, date_="2026-05-05")
    with django_capture_on_commit_callbacks(execute=True):
        account_close(account=account, on=date(2026, 5, 6), actor=None, reason="owner sold the house")
    assert WorkOrder.objects.get().status == "cancelled"
    case = TerminationCase.objects.get(number=number)
    assert case.status == "withdrawn" and case.closed_on == date(2026, 5, 6)
    event = CaseEvent.objects.get(case=case, kind="account_closed")
    assert event.flagged and event.what == ("Account closed on May 6, 2026: no service left to shut off; case "
                                            "withdrawn; 1 shut-off order cancelled; what is owed goes to the relevy")
    with pytest.raises(ApplicationError, match="already closed"):
        account_close(account=account, on=date(2026, 5, 7), actor=None, reason="again")
