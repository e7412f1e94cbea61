"""Payment plans (deferred payment agreements, office policy): made by a clerk for what an account owes; kept by
the payments posted; defaulted once an installment is unpaid past the office's grace days; a plan in good standing
holds the shut-off, and the guard names it.

Mineola's worked example (docs/ordinances.md): $186.13 billed 2026-02-01, due March 1, unpaid; the termination case
of tests/termination may order a shut-off from 2026-05-05.
"""

import io
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.urls import reverse

from arrears.models import PaymentPlan
from arrears.services import installment_amounts, plan_create, plan_standing, plans_review
from billing.services.payments import payment_post
from core.errors import ApplicationError
from termination.models import TerminationCase
from tests.termination.steps import delinquent_account, refused, term, terminated_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: payment plans")]
D = Decimal


def pay(account, amount: str, on: str, reference: str):
    payment_post(account_no=account.account_no, amount=D(amount), paid_on=date.fromisoformat(on),
                 reference=reference)


def plan_for(account, *, on=date(2026, 4, 22)):
    """$186.13: $36.13 down by April 30, then three installments of $50.00 from May 15."""
    return plan_create(account=account, total=D("186.13"), down_payment=D("36.13"), down_due_on=date(2026, 4, 30),
                       installments=3, first_due_on=date(2026, 5, 15), as_of=on)


def test_the_installments_add_up_to_the_cent():
    assert installment_amounts(D("100.00"), 3) == [D("33.33"), D("33.33"), D("33.34")]
    assert installment_amounts(D("150.00"), 3) == [D("50.00")] * 3


def test_a_plan_is_kept_then_defaulted_after_the_grace_of_a_missed_installment(mineola):
    account, _ = delinquent_account(occupant=False)
    plan = plan_for(account)
    assert [(i.number, i.due_on, i.amount.amount) for i in plan.installments.all()] == [
        (0, date(2026, 4, 30), D("36.13")), (1, date(2026, 5, 15), D("50.00")), (2, date(2026, 6, 15), D("50.00")),
        (3, date(2026, 7, 15), D("50.00"))]
    pay(account, "36.13", "2026-04-29", "DOWN")
    pay(account, "50.00", "2026-05-14", "I-1")
    assert plan_standing(plan, as_of=date(2026, 6, 24)).good  # June's is late but within 10 days' grace
    standing = plan_standing(plan, as_of=date(2026, 6, 26))
    assert not standing.good and standing.missed.number == 2 and standing.paid == D("86.13")
    assert plans_review(as_of=date(2026, 6, 24)) == {"defaulted": 0, "completed": 0}
    out = io.StringIO()
    call_command("plans_review", "--date", "2026-06-26", stdout=out)
    assert "1 plan(s) defaulted" in out.getvalue()
    plan.refresh_from_db()
    assert (plan.status, plan.status_changed_on) == ("defaulted", date(2026, 6, 26))
    assert plan.status_note == "installment 2 of $50.00 due Jun 15, 2026 unpaid after 10 days' grace"


def test_a_plan_paid_in_full_is_completed(mineola):
    account, _ = delinquent_account(occupant=False)
    plan = plan_for(account)
    pay(account, "186.13", "2026-04-25", "ALL")
    plans_review(as_of=date(2026, 4, 26))
    plan.refresh_from_db()
    assert plan.status == "completed"


def test_a_plan_is_checked_and_one_at_a_time(mineola):
    account, _ = delinquent_account(occupant=False)
    with pytest.raises(ApplicationError) as refused_plan:
        plan_create(account=account, total=D("500.00"), down_payment=D("600.00"), down_due_on=date(2026, 4, 1),
                    installments=0, first_due_on=date(2026, 4, 1), as_of=date(2026, 4, 22))
    fields = {e.field for e in refused_plan.value.errors}
    assert fields == {"total", "down_payment", "down_due_on", "installments", "first_due_on"}
    plan_for(account)
    with pytest.raises(ApplicationError, match="already has an active payment plan"):
        plan_for(account)


def test_a_plan_in_good_standing_holds_the_shut_off_and_the_guard_names_it(mineola):
    account, _ = delinquent_account()
    number = terminated_case(account)
    plan_for(account, on=date(2026, 4, 22))
    pay(account, "36.13", "2026-04-29", "DOWN")
    message = refused("shutoff", number, date_="2026-05-05")
    assert "(6) payment plan P-" in message and "is in good standing" in message
    assert TerminationCase.objects.get(number=number).status != "ordered"
    # Missed past its grace, defaulted by the nightly job: the order may issue.
    plans_review(as_of=date(2026, 5, 26))
    assert PaymentPlan.objects.get().status == "defaulted"
    assert "Shut-off order" in term("shutoff", number, date_="2026-05-26")


def test_a_clerk_enters_a_plan_and_prints_its_letter(mineola, admin_client):
    account, _ = delinquent_account(occupant=False)
    add = reverse("admin:arrears_paymentplan_add")
    bad = admin_client.post(add, {"account_no": account.account_no, "total": "999.00", "down_payment": "0.00",
                                  "down_due_on": "2026-12-03", "installments": "6", "first_due_on": "2027-01-03"})
    assert bad.status_code == 400 and "is more than account" in bad.content.decode()
    response = admin_client.post(add, {"account_no": account.account_no, "total": "186.13", "down_payment": "36.13",
                                       "down_due_on": "2026-12-10", "installments": "3",
                                       "first_due_on": "2027-01-10"})
    plan = PaymentPlan.objects.get()
    assert response.status_code == 302 and response.url == reverse("admin:arrears_paymentplan_change",
                                                                   args=[plan.pk])
    page = admin_client.get(response.url).content.decode()
    assert "In good standing" in page and "Plan letter (PDF)" in page
    pdf = admin_client.get(reverse("admin:arrears_paymentplan_letter", args=[plan.pk]))
    assert pdf["Content-Type"] == "application/pdf" and pdf.content.startswith(b"%PDF")


def test_the_portal_shows_the_plan_and_its_standing(mineola):
    from django.test import Client

    from accounts.models import PortalLink
    from tests.portal.conftest import customer

    account, _ = delinquent_account(occupant=False)
    plan_for(account, on=date(2026, 4, 22))
    user = customer("pat@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert "Payment plan P-" in page and "Installment 3" in page and "$50.00" in page
    assert "Behind: the payment due Apr 30, 2026 is not made" in page  # today is long after the down payment


def test_only_what_is_paid_beyond_the_current_bills_keeps_the_plan(mineola):
    """A plan is kept on top of the new bills: a customer who pays the installments, then only the new bill of
    August 1, misses the installment of August 15; paying it as well keeps the plan. (One office: a plan's standing
    counts only what pays the plan.)"""
    from billing.models import Bill
    from meters.models import Installation
    from tests.billing.steps import read, run

    account, _ = delinquent_account(occupant=False)
    plan = plan_create(account=account, total=D("186.13"), down_payment=D("36.13"), down_due_on=date(2026, 4, 30),
                       installments=6, first_due_on=date(2026, 5, 15), as_of=date(2026, 4, 22))
    pay(account, "36.13", "2026-04-29", "DOWN")
    for month in (5, 6, 7):
        pay(account, "25.00", f"2026-{month:02d}-14", f"I-{month}")
    read(Installation.objects.get(account=account).meter, date(2026, 7, 12), 1_082_500)
    run("run_billing", "--date", "2026-08-01")
    new_bill = Bill.objects.get(account=account, bill_date=date(2026, 8, 1))
    assert new_bill.due_date < date(2026, 9, 12)
    pay(account, f"{new_bill.total.amount}", "2026-08-20", "NEW-BILL")  # the new bill, nothing for the plan
    standing = plan_standing(plan, as_of=date(2026, 9, 12))
    assert standing.paid == D("111.13") and not standing.good and standing.missed.number == 4
    pay(account, "25.00", "2026-09-05", "I-8")
    standing = plan_standing(plan, as_of=date(2026, 9, 12))
    assert standing.good and standing.paid == D("136.13")
