"""One office: what happens elsewhere reaches the payment plan. The payment that completed a plan returned by the
customer's bank (R03, no account) makes the plan active again for what is owed once more; closing the account ends
its plan and tells the customer by letter that what it covered is on the final bill (docs/architecture.md, event
table)."""

from datetime import date
from decimal import Decimal

import pytest

from accounts.services import account_close
from arrears.models import PaymentPlan
from arrears.services import plan_create, plans_review
from billing.models import Payment
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from notices.models import CustomerNotice
from tests.termination.steps import delinquent_account

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: payment plans")]
D = Decimal


def plan_for(account):
    """$186.13: $36.13 down by April 30, then three installments of $50.00 from May 15."""
    return plan_create(account=account, total=D("186.13"), down_payment=D("36.13"), down_due_on=date(2026, 4, 30),
                       installments=3, first_due_on=date(2026, 5, 15), as_of=date(2026, 4, 22))


def test_the_last_installment_returned_reopens_the_completed_plan(mineola, django_capture_on_commit_callbacks):
    account, _ = delinquent_account(occupant=False)
    plan = plan_for(account)
    for amount, on, reference, tender in (("36.13", "2026-04-29", "DOWN", "check"), ("50.00", "2026-05-14", "I-1",
                                          "check"), ("50.00", "2026-06-12", "I-2", "check"),
                                          ("50.00", "2026-07-15", "ACH-3", "ach")):
        payment_post(account_no=account.account_no, amount=D(amount), paid_on=date.fromisoformat(on),
                     reference=reference, tender=tender)
    assert plans_review(as_of=date(2026, 7, 15)) == {"defaulted": 0, "completed": 1}
    plan.refresh_from_db()
    assert plan.status == "completed"
    with django_capture_on_commit_callbacks(execute=True):
        payment_reverse(payment=Payment.objects.get(reference="ACH-3"), reason="debit_returned",
                        note="R03 No account/unable to locate account", reversed_on=date(2026, 7, 17), actor=None)
    plan.refresh_from_db()
    assert (plan.status, plan.status_changed_on) == ("active", date(2026, 7, 17))
    assert plan.status_note.startswith("reopened on Jul 17, 2026: payment ACH-3 taken back (bank debit returned")
    assert plan.status_note.endswith("$50.00 of the plan is owed again")
    # The nightly review holds it to its installments again: the third, due Jul 15, is past its grace on Jul 26.
    assert plans_review(as_of=date(2026, 7, 26)) == {"defaulted": 1, "completed": 0}


def test_closing_the_account_ends_its_plan_with_a_letter(mineola, django_capture_on_commit_callbacks):
    account, _ = delinquent_account(occupant=False)
    account.owner.email = "owner@example.org"
    account.owner.save()
    plan = plan_for(account)
    payment_post(account_no=account.account_no, amount=D("36.13"), paid_on=date(2026, 4, 29), reference="DOWN")
    with django_capture_on_commit_callbacks(execute=True):
        account_close(account=account, on=date(2026, 5, 6), actor=None, reason="owner sold the house")
    plan.refresh_from_db()
    assert (plan.status, plan.status_changed_on) == (PaymentPlan.Status.CANCELLED, date(2026, 5, 6))
    assert plan.status_note == "ended on May 6, 2026: the account closed; what is unpaid is on the final bill"
    notice = CustomerNotice.objects.get(kind="plan_ended")
    assert notice.account_id == account.pk
    assert notice.subject == f"Your payment plan has ended: water account {account.account_no} is closed"
    assert (f"Your water account was closed on May 6, 2026, so your payment plan {plan.number} has ended. What it "
            "covered and is still unpaid is owed on your final bill.") in notice.body
