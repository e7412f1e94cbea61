"""One office, walked at random: a stateful property test (hypothesis ``RuleBasedStateMachine``) over sequences of what
a month brings to a delinquent account whose termination case is determined — payments at the counter, returned
checks and payments entered in error, a payment plan made and reviewed, a shut-off ordered, carried out and
restored, days passing — and after every step it checks that the parts still act as one office:

* no shut-off is carried out while any condition of the guard holds (a plan in good standing, the delinquent
  amount paid, an appeal) — the carry-out either is refused or found nothing to refuse;
* no case stands closed as paid while its delinquent amount is unpaid (a reversed payment reopens it);
* every record of a decided status that left its first status has a status-change row (``core.workflow``);
* every returned check left exactly one notice to the customer;
* the account's balance is the sum of its ledger, and the same whichever way the ledger is read (the fast paths
  and a full replay).

Each sequence runs in a savepoint rolled back at its end, over one account billed once for the test. The number of
sequences is ``OFFICE_WALK_EXAMPLES`` (default 300 in CI; set it higher to walk further)."""

import os
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.test import TestCase
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from arrears.models import PaymentPlan
from arrears.services import plan_create, plans_review
from billing.ledger.selectors import account_balances
from billing.models import LedgerEntry, Payment, PaymentReversal
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from core.errors import ApplicationError
from core.models import StatusChange
from notices.models import CustomerNotice
from termination.models import TerminationCase, WorkOrder
from termination.selectors import case_unpaid
from termination.services.shutoff import carry_out_refusals, service_restore, shutoff_carry_out, shutoff_order
from tests.termination.steps import delinquent_account, terminated_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: one office")]
EXAMPLES = int(os.environ.get("OFFICE_WALK_EXAMPLES", "300"))
START = date(2026, 5, 5)  # the case is determined and its appeal window closed: an order may issue
LAST = date(2026, 11, 30)


def captured():
    """Run what the step commits on commit (the receivers: a case closed or reopened, a notice), as a real
    request would once its transaction commits."""
    return TestCase.captureOnCommitCallbacks(execute=True)


class OfficeWalk(RuleBasedStateMachine):
    account = None
    number = ""

    def __init__(self):
        super().__init__()
        self._savepoint = transaction.atomic()
        self._savepoint.__enter__()
        self.day = START
        self.references = 0
        self.carried_out_with_refusals = []

    def teardown(self):
        transaction.set_rollback(True)
        self._savepoint.__exit__(None, None, None)

    # --- what happens -----------------------------------------------------------------------------------

    @property
    def case(self) -> TerminationCase:
        return TerminationCase.objects.get(number=self.number)

    @rule(days=st.integers(min_value=1, max_value=20))
    def a_day_passes(self, days):
        self.day = min(self.day + timedelta(days=days), LAST)

    @rule(amount=st.sampled_from(["10.00", "36.13", "50.00", "186.13", "250.00"]))
    def a_payment_at_the_counter(self, amount):
        self.references += 1
        with captured():
            payment_post(account_no=self.account.account_no, amount=Decimal(amount), paid_on=self.day,
                         reference=f"WALK-{self.references}", source="counter", tender="check", check_number="1")

    @precondition(lambda self: Payment.objects.filter(account=self.account, reversal__isnull=True).exists())
    @rule(reason=st.sampled_from(["returned", "error"]))
    def the_last_payment_comes_back(self, reason):
        payment = Payment.objects.filter(account=self.account, reversal__isnull=True).latest("paid_on", "id")
        with captured():
            payment_reverse(payment=payment, reversed_on=max(self.day, payment.paid_on), reason=reason,
                            note="walk", actor=None)

    @rule()
    def a_plan_is_made(self):
        if PaymentPlan.objects.filter(account=self.account, status="active").exists():
            return
        try:
            plan_create(account=self.account, total=Decimal("100.00"), down_payment=Decimal("20.00"),
                        down_due_on=self.day + timedelta(days=5), installments=2,
                        first_due_on=self.day + timedelta(days=30), as_of=self.day)
        except ApplicationError:
            pass  # owes less than the plan would cover, say: refused, nothing made

    @rule()
    def the_nightly_review(self):
        with captured():
            plans_review(as_of=self.day)

    @rule()
    def a_shutoff_is_ordered(self):
        try:
            with transaction.atomic():
                shutoff_order(case=self.case, as_of=self.day, actor=None)
        except ApplicationError:
            pass  # the guard refused: what the invariants check is that nothing slipped through

    @rule()
    def the_crew_carries_it_out(self):
        case = self.case
        refusals = carry_out_refusals(case, done_on=self.day) if case.status == "ordered" else ["not ordered"]
        try:
            with transaction.atomic():
                shutoff_carry_out(case=case, done_on=self.day, actor=None)
        except ApplicationError:
            return
        if refusals:
            self.carried_out_with_refusals.append((self.day, refusals))

    @rule()
    def service_is_restored(self):
        if self.case.status != "shut_off":
            return
        try:
            with transaction.atomic():
                service_restore(case=self.case, as_of=self.day, actor=None)
        except ApplicationError:
            pass

    # --- what must hold after every step ------------------------------------------------------------------

    @invariant()
    def no_shutoff_while_the_guard_holds(self):
        assert self.carried_out_with_refusals == []

    @invariant()
    def no_case_stands_paid_while_unpaid(self):
        case = self.case
        if case.status == "paid":
            assert case_unpaid(case, as_of=self.day) <= 0, f"case paid but owes {case_unpaid(case, as_of=self.day)}"

    @invariant()
    def every_decided_status_has_its_change_row(self):
        for model, first in ((TerminationCase, "open"), (WorkOrder, "issued"), (PaymentPlan, "active")):
            kind = ContentType.objects.get_for_model(model)
            changed = set(StatusChange.objects.filter(content_type=kind).values_list("object_id", flat=True))
            for pk in model.objects.exclude(status=first).values_list("pk", flat=True):
                assert pk in changed, f"{model.__name__} {pk} changed status with no status-change row"

    @invariant()
    def every_returned_check_told_the_customer_once(self):
        for reversal in PaymentReversal.objects.filter(payment__account=self.account, reason="returned"):
            assert CustomerNotice.objects.filter(fact=f"reversal:{reversal.pk}").count() == 1

    @invariant()
    def the_ledger_balances(self):
        total = sum((e.amount.amount for e in LedgerEntry.objects.filter(account=self.account)), Decimal("0.00"))
        balance = account_balances([self.account.pk], through=LAST)[self.account.pk].balance
        assert balance == total


def test_the_office_acts_as_one_whatever_happens(mineola):
    account, _ = delinquent_account(occupant=False)
    account.owner.email = "owner@example.org"
    account.owner.save()
    OfficeWalk.account = account
    OfficeWalk.number = terminated_case(account, occupant=False)
    run_state_machine_as_test(OfficeWalk, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=12, deadline=None, derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]))
