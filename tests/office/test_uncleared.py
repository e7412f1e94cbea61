"""Money that is not yet money: a refund counts only cleared funds. A $500.00 check pays the account of a case and
leaves a $271.84 credit; the clerk asks for the credit back that day and the refund is refused, naming the check and
the day it clears; the supervisor cannot approve it either. Once the check has cleared it is refunded. A check that
comes back after a refund was paid flags the refund for the supervisor, on the dashboard."""

from datetime import date
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from billing.clearing import clears_on, refundable_credit
from billing.models import Payment
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from core.clock import today
from core.errors import ApplicationError
from office.models import Refund
from office.services import refund_decide, refund_request, transfer_make
from tests.office.conftest import fields, staff
from tests.termination.steps import delinquent_account

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: cleared funds")]
D = Decimal
PAID = date(2026, 2, 20)  # a Friday


@pytest.fixture
def checked(mineola):
    """Mineola's worked $186.13 bill, paid with a $500.00 check on Friday Feb 20: a credit of $313.87."""
    account, _ = delinquent_account(occupant=False)
    payment_post(account_no=account.account_no, amount=D("500.00"), paid_on=PAID, reference="CHK-500",
                 tender="check", check_number="500")
    return account


def test_each_tender_clears_by_its_rule(settings):
    settings.CHECK_CLEARING_DAYS, settings.ACH_CLEARING_DAYS, settings.PROCESSOR_PAYOUT_DAYS = 5, 2, 4
    assert clears_on(tender="cash", paid_on=PAID) == PAID
    assert clears_on(tender="bill_pay", paid_on=PAID) == PAID
    # Five banking days after Friday Feb 20: Feb 23-27 (no holiday), so Friday Feb 27.
    assert clears_on(tender="check", paid_on=PAID) == date(2026, 2, 27)
    # A check taken on Saturday counts from Monday; Presidents' Day (Feb 16) is no banking day.
    # (Feb 17, then five banking days: Feb 24.)
    assert clears_on(tender="check", paid_on=date(2026, 2, 14)) == date(2026, 2, 24)
    assert clears_on(tender="ach", paid_on=PAID) == date(2026, 2, 24)
    assert clears_on(tender="online", paid_on=PAID) == date(2026, 2, 24)


def test_the_credit_of_an_uncleared_check_is_not_refunded(checked):
    clerk, supervisor = staff("clara", "Clerk"), staff("sam", "Supervisor")
    credit = refundable_credit(checked.pk, as_of=PAID)
    assert (credit.credit, credit.amount, credit.held) == (D("313.87"), D("0.00"), D("313.87"))
    with pytest.raises(ApplicationError) as refused:
        refund_request(account=checked, amount=D("313.87"), reason="asked", as_of=PAID, actor=clerk)
    assert fields(refused) == {"amount"}
    assert ("$313.87 of the credit is money not yet cleared: payment CHK-500 (check, $500.00, paid Feb 20, 2026) "
            "clears on Feb 27, 2026") in str(refused.value)
    assert not Refund.objects.exists()
    # Cleared a week later: refunded as asked.
    cleared = date(2026, 2, 27)
    assert refundable_credit(checked.pk, as_of=cleared).amount == D("313.87")
    refund = refund_request(account=checked, amount=D("313.87"), reason="asked", as_of=cleared, actor=clerk)
    refund_decide(refund=refund, approve=True, note="", as_of=cleared, actor=supervisor)
    assert Refund.objects.get().status == "approved"


def test_the_supervisor_cannot_approve_what_a_new_check_holds(checked):
    clerk, supervisor = staff("clara", "Clerk"), staff("sam", "Supervisor")
    refund = refund_request(account=checked, amount=D("100.00"), reason="asked", as_of=date(2026, 3, 2), actor=clerk)
    # A second check the same day makes more credit, but holds none of the first: the refund still goes.
    payment_post(account_no=checked.account_no, amount=D("40.00"), paid_on=date(2026, 3, 2), reference="CHK-40",
                 tender="check", check_number="40")
    credit = refundable_credit(checked.pk, as_of=date(2026, 3, 2))
    assert (credit.credit, credit.amount) == (D("353.87"), D("313.87"))
    refund_decide(refund=refund, approve=True, note="", as_of=date(2026, 3, 2), actor=supervisor)
    # Asking for all of it is refused while the $40.00 check is uncleared.
    with pytest.raises(ApplicationError) as refused:
        refund_request(account=checked, amount=D("253.87"), reason="asked", as_of=date(2026, 3, 2), actor=clerk)
    assert "payment CHK-40 (check, $40.00, paid Mar 2, 2026) clears on Mar 9, 2026" in str(refused.value)


def test_the_refund_pages_show_what_is_uncleared(mineola):
    account, _ = delinquent_account(occupant=False)
    payment_post(account_no=account.account_no, amount=D("500.00"), paid_on=today(), reference="CHK-TODAY",
                 tender="check", check_number="77")
    client = Client()
    client.force_login(staff("clara", "Clerk"))
    page = client.get(reverse("admin:office_refund_add"), {"account": account.account_no}).content.decode()
    assert "Of it, cleared and refundable" in page and "payment CHK-TODAY (check, $500.00" in page
    response = client.post(reverse("admin:office_refund_add"), {
        "account_no": account.account_no, "amount": "313.87", "reason": "asked", "payee_name": "",
        "payee_address": ""})
    assert response.status_code == 400
    assert "money not yet cleared: payment CHK-TODAY" in response.content.decode()
    assert not Refund.objects.exists()


def test_a_closed_accounts_uncleared_credit_is_not_transferred(checked):
    from accounts.services import account_close

    other, _ = delinquent_account(occupant=False)
    other.owner = checked.owner
    other.save()
    account_close(account=checked, on=PAID, actor=None, reason="moved")
    with pytest.raises(ApplicationError) as refused:
        transfer_make(from_account=checked, to_account=other, as_of=PAID, reason="moved", actor=None)
    assert "not yet cleared" in str(refused.value)


def test_a_check_returned_after_its_credit_was_refunded_is_flagged_for_the_supervisor(
        checked, settings, django_capture_on_commit_callbacks, monkeypatch):
    settings.CHECK_CLEARING_DAYS = 0  # an office that refunds at once: the case this guards
    clerk, supervisor = staff("clara", "Clerk"), staff("sam", "Supervisor")
    refund = refund_request(account=checked, amount=D("313.87"), reason="asked", as_of=PAID, actor=clerk)
    refund_decide(refund=refund, approve=True, note="", as_of=PAID, actor=supervisor)
    with django_capture_on_commit_callbacks(execute=True):
        payment_reverse(payment=Payment.objects.get(reference="CHK-500"), reason="returned", note="NSF",
                        reversed_on=date(2026, 2, 24), actor=supervisor)
    refund.refresh_from_db()
    assert refund.came_back_on == date(2026, 2, 24)
    assert refund.came_back.startswith("Payment CHK-500 ($500.00, paid Feb 20, 2026) was taken back on Feb 24, 2026")
    import waterbilling.admin

    monkeypatch.setattr(waterbilling.admin, "today", lambda: date(2026, 2, 25))
    client = Client()
    client.force_login(supervisor)
    home = client.get(reverse("admin:index")).content.decode()
    assert "1 refund ($313.87) paid against a payment taken back since" in home
