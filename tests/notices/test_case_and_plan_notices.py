"""The customer hears of a termination notice served and its hearing (besides the papers), of service restored, and of
a payment plan's installment due soon and missed; each once, in their language."""

import io
import json
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command

from arrears.services import plan_create
from notices.models import CustomerNotice
from tests.termination.steps import delinquent_account, served_case

pytestmark = pytest.mark.django_db
K = CustomerNotice.Kind


def with_email(account, language="en"):
    account.owner.email = "owner@example.com"
    account.owner.save()
    account.language = language
    account.save()
    return account


def test_a_termination_notice_served_tells_the_customer_the_hearing_date_once(mineola,
                                                                              django_capture_on_commit_callbacks):
    account, _ = delinquent_account()
    with_email(account)
    with django_capture_on_commit_callbacks(execute=True):
        number = served_case(account)  # served on the owner and the occupant, hearing April 16
    notice = CustomerNotice.objects.get(kind=K.TERMINATION_SERVED)  # one, though two recipients were served
    assert notice.account == account and f"case {number}" in notice.body
    assert "Hearing: April 16, 2026" in notice.body and "within 10 days" in notice.body
    assert "This message does not replace that notice" in notice.body


def test_an_installment_due_soon_and_one_missed(mineola):
    account, _ = delinquent_account()
    with_email(account, language="es")
    plan_create(account=account, total=Decimal("186.13"), down_payment=Decimal("36.13"),
                down_due_on=date(2026, 4, 30), installments=3, first_due_on=date(2026, 5, 15),
                as_of=date(2026, 4, 22))
    out = io.StringIO()
    call_command("notices", "--date", "2026-04-23", "--json", stdout=out)  # 7 days before the down payment
    found = json.loads(out.getvalue())
    assert [(n["kind"], n["amount"], n["due_date"]) for n in found["notices"]] == [
        ("installment_due", "36.13", "2026-04-30")]
    call_command("notices", "--date", "2026-05-01", "--json", stdout=io.StringIO())  # the day after, unpaid
    missed = CustomerNotice.objects.get(kind=K.INSTALLMENT_MISSED)
    assert missed.language == "es" and missed.subject.startswith("Una cuota de su plan de pagos está vencida")
    assert "Páguela a más tardar el 10 de mayo de 2026" in missed.body
    assert CustomerNotice.objects.filter(kind__in=[K.INSTALLMENT_DUE, K.INSTALLMENT_MISSED]).count() == 2


def test_service_restored_is_told_once(mineola, django_capture_on_commit_callbacks):
    from billing.services.payments import payment_post
    from tests.termination.steps import term, terminated_case

    account, _ = delinquent_account()
    with_email(account)
    number = terminated_case(account)
    term("shutoff", number, date_="2026-05-05")
    term("carried-out", number, date_="2026-05-06")
    payment_post(account_no=account.account_no, amount=Decimal("236.13"), paid_on=date(2026, 5, 8), reference="P-9")
    with django_capture_on_commit_callbacks(execute=True):
        term("restore", number, date_="2026-05-08")
    notice = CustomerNotice.objects.get(kind=K.SERVICE_RESTORED)
    assert "Water service was restored on May 8, 2026" in notice.body and number in notice.body
