"""One office, walked at random: a stateful property test (hypothesis ``RuleBasedStateMachine``) over sequences of what
a month brings to a delinquent account whose termination case is determined — payments at the counter and online,
the processor's refunds, disputes and disputes won, autopay enrolled, debit files made and debits returned (R01,
R03, R10), returned checks and payments entered in error, a payment plan made and reviewed, a shut-off ordered,
carried out and restored (by the amount the counter names), the bill voided and billed again, the account closed,
the credit asked back, a check read twice by the lockbox, the day closed, the processor down at the reconciliation,
days passing — and after every step it checks that the parts still act as one office:

* no refund pays out money not yet cleared, and the amount named after a shut-off restores service;
* the books (journal and cash report) of a closed day never change, whatever is entered late;

* no shut-off is carried out while any condition of the guard holds (a plan in good standing, the delinquent
  amount paid, an appeal) — the carry-out either is refused or found nothing to refuse;
* no case stands closed as paid while its delinquent amount is unpaid (a reversed payment reopens it);
* no active case stands on bills that are all void (a voided bill withdraws its case), and a closed account has
  no shut-off order issued;
* a suspended or ended autopay enrolment is never debited afterwards, and a closed account has no active one;
* every record of a decided status that left its first status has a status-change row (``core.workflow``);
* every returned check or debit and every dispute left exactly one notice to the customer, in the account's
  language, and so did every enrolment suspended or ended with the account;
* the account's balance is the sum of its ledger, and the same whichever way the ledger is read (the fast paths
  and a full replay).

Each sequence runs in a savepoint rolled back at its end, over one account billed once for the test. The number of
sequences is ``OFFICE_WALK_EXAMPLES`` (default 300 in CI; set it higher to walk further)."""

import os
from collections import Counter
from datetime import date, datetime, time, timedelta
from decimal import Decimal

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.test import TestCase
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from accounts.services import account_close
from arrears.models import PaymentPlan
from arrears.services import plan_create, plans_review
from billing.cash import cash_day, cash_day_rows
from billing.clearing import refundable_credit
from billing.ledger.selectors import account_balances
from billing.models import Bill, LedgerEntry, Payment, PaymentReversal
from billing.services.adjustments import bill_void
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from core.banking_days import banking_day_on_or_after
from core.errors import ApplicationError
from core.models import StatusChange
from notices.models import CustomerNotice
from office.journal import journal_entries, journal_rows
from office.models import DayClose
from office.services import day_close, drawer_expected, refund_decide, refund_request
from remittance.autopay import ach_export, ach_returns, autopay_enrol, notice_days
from remittance.bank import deposits_reconcile
from remittance.lockbox import lockbox_import
from remittance.models import AutopayDebit, AutopayEnrolment, AutopayNotice, OnlinePayment
from remittance.processors import ProcessorEvent, ProcessorUnavailable
from remittance.services import processor_event_apply
from termination.models import CLOSED, TerminationCase, WorkOrder
from termination.selectors import case_pay, case_unpaid
from termination.services.shutoff import (
    carry_out_refusals,
    restore_refusals,
    service_restore,
    shutoff_carry_out,
    shutoff_order,
)
from tests.billing.steps import run
from tests.office.conftest import staff
from tests.remittance.conftest import BANK_ACCOUNT, ROUTING, bank  # noqa: F401 - the bank fixture
from tests.remittance.test_autopay import returns_file
from tests.termination.steps import delinquent_account, terminated_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: one office")]
EXAMPLES = int(os.environ.get("OFFICE_WALK_EXAMPLES", "300"))
START = date(2026, 5, 5)  # the case is determined and its appeal window closed: an order may issue
LAST = date(2026, 11, 30)
LATE = date(2026, 5, 20)


SEEN: Counter = Counter()  # what the walk reached, checked at its end (a walk that never got there proves nothing)


def seen(what: str) -> None:
    SEEN[what] += 1


def captured():
    """Run what the step commits on commit (the receivers: a case closed or reopened, a notice), as a real
    request would once its transaction commits."""
    return TestCase.captureOnCommitCallbacks(execute=True)


class Unreachable:
    """A processor that cannot be reached: every question is answered with ``ProcessorUnavailable``."""

    name = "stripe"

    def payouts(self, **kwargs):
        raise ProcessorUnavailable("Stripe could not be asked for its payouts: APIConnectionError: connection refused")


class OfficeWalk(RuleBasedStateMachine):
    account = None
    number = ""
    clerk = supervisor = None

    def __init__(self):
        super().__init__()
        self._savepoint = transaction.atomic()
        # As a test case's own block: a service that must be outermost (``durable``) runs inside it, as in a test.
        self._savepoint._from_testcase = True
        self._savepoint.__enter__()
        self.day = START
        self.references = 0
        self.carried_out_with_refusals = []
        self.refunded_uncleared, self.restore_refused = [], []
        self.closed_books: dict[date, tuple] = {}

    def teardown(self):
        transaction.set_rollback(True)
        self._savepoint.__exit__(None, None, None)

    # --- what happens -----------------------------------------------------------------------------------

    @property
    def case(self) -> TerminationCase:
        return TerminationCase.objects.get(number=self.number)

    @rule(days=st.integers(min_value=1, max_value=20), close=st.booleans())
    def a_day_passes(self, days, close):
        """Days pass; the clerk may close the day first (the drawer counted as the cash report says)."""
        if close and not DayClose.objects.filter(day=self.day).exists():
            expected = drawer_expected(on=self.day)
            day_close(on=self.day, counted_cash=expected.cash, counted_checks=expected.checks, note="",
                      actor=self.clerk)
            self.closed_books[self.day] = self.books(self.day)
            seen("day closed")
        self.day = min(self.day + timedelta(days=days), LAST)

    @rule(amount=st.sampled_from(["10.00", "36.13", "50.00", "186.13", "250.00"]))
    def a_payment_at_the_counter(self, amount):
        self.references += 1
        with captured():
            payment_post(account_no=self.account.account_no, amount=Decimal(amount), paid_on=self.day,
                         reference=f"WALK-{self.references}", source="counter", tender="check", check_number="1")

    @precondition(lambda self: Payment.objects.filter(account=self.account, reversal__isnull=True,
                                                      source="counter").exists())
    @rule(reason=st.sampled_from(["returned", "error"]))
    def the_last_payment_comes_back(self, reason):
        payment = Payment.objects.filter(account=self.account, reversal__isnull=True, source="counter").latest(
            "paid_on", "id")
        with captured():
            payment_reverse(payment=payment, reversed_on=max(self.day, payment.paid_on), reason=reason,
                            note="walk", actor=None)

    @precondition(lambda self: self.account_open())
    @rule(amount=st.sampled_from(["36.13", "186.13"]))
    def a_payment_online(self, amount):
        self.references += 1
        online = OnlinePayment.objects.create(account=self.account, amount=Decimal(amount), processor="stripe",
                                              checkout_id=f"cs_walk_{self.references}",
                                              receipt_email="owner@example.org")
        self.processor_says("paid", online)

    @precondition(lambda self: OnlinePayment.objects.filter(account=self.account, payment__isnull=False).exists())
    @rule(kind=st.sampled_from(["refunded", "disputed", "reinstated", "down"]))
    def the_processor_reports(self, kind):
        if kind == "down":  # the clerk reconciles the day's deposits and the processor cannot be reached
            result = deposits_reconcile(on=self.day, processor=Unreachable())
            assert result.unreached and not result.matches
            seen("processor down")
            return
        self.processor_says(kind, OnlinePayment.objects.filter(account=self.account, payment__isnull=False)
                            .latest("pk"))

    def processor_says(self, kind: str, online: OnlinePayment) -> None:
        self.references += 1
        event = ProcessorEvent(event_id=f"evt_walk_{self.references}", kind=kind, type=f"walk.{kind}",
                               happened_on=self.day, checkout_id=online.checkout_id, payment_ref=f"pi_{online.pk}",
                               amount=online.amount.amount, method="card")
        with captured():
            seen(f"processor {kind}: {processor_event_apply('stripe', event).outcome.split(':')[0][:40]}")

    @precondition(lambda self: self.account_open() and not AutopayEnrolment.objects.filter(
        account=self.account, status="active").exists())
    @rule()
    def autopay_is_enrolled(self):
        with captured():
            enrolment = autopay_enrol(account=self.account, holder_name="Pat Payer", routing=ROUTING,
                                      account_number=BANK_ACCOUNT, account_type="checking", email="pat@example.org",
                                      agreed=True)
        # Enrolled the notice period before the walk's day (not the machine's): its notice of what is past due was
        # sent then, for a debit from today, so the next debit file may take it.
        sent = timezone.make_aware(datetime.combine(self.day - timedelta(days=notice_days()), time(9)))
        AutopayNotice.objects.filter(enrolment=enrolment).update(sent_at=sent,
                                                                 debit_on=banking_day_on_or_after(self.day))
        AutopayEnrolment.objects.filter(pk=enrolment.pk).update(authorized_at=sent)

    @precondition(lambda self: AutopayEnrolment.objects.filter(account=self.account).exists())
    @rule()
    def a_debit_file_is_made(self):
        with captured():
            seen(f"debit file: {ach_export(on=self.day).file is not None}")

    @precondition(lambda self: AutopayDebit.objects.filter(account=self.account, returned_code="").exists())
    @rule(code=st.sampled_from(["R01", "R03", "R10"]))
    def the_bank_returns_the_last_debit(self, code):
        debit = AutopayDebit.objects.filter(account=self.account, returned_code="").latest("pk")
        with captured():
            ach_returns(returns_file(debit, code), as_of=max(self.day, debit.file.effective_on))
        seen(f"debit returned {code}")

    # Voiding and closing end most of what can follow (the case is withdrawn): they come late in a walk.
    @precondition(lambda self: self.day >= LATE and Bill.objects.filter(account=self.account, status="issued",
                                                                        final=False).exists())
    @rule()
    def the_bill_is_voided_and_billed_again(self):
        bill = Bill.objects.filter(account=self.account, status="issued", final=False).latest("bill_date", "pk")
        with captured():
            bill_void(bill=bill, reason="misread meter", as_of=self.day, actor=None)
        with captured():
            run("run_billing", "--date", bill.bill_date.isoformat())
        seen(f"voided and billed again: case {self.case.status}")

    @precondition(lambda self: self.day >= LATE and self.account_open())
    @rule()
    def the_account_is_closed(self):
        with captured():
            account_close(account=self.account, on=self.day, actor=None, reason="owner sold the house")
        seen(f"account closed: case {self.case.status}")

    def account_open(self) -> bool:
        return type(self.account).objects.filter(pk=self.account.pk).exclude(status="closed").exists()

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
            return  # the guard refused: what the invariants check is that nothing slipped through  # the guard refused
        seen("shut-off ordered")

    @rule()
    def the_crew_carries_it_out(self):
        case = self.case
        refusals = carry_out_refusals(case, done_on=self.day) if case.status == "ordered" else ["not ordered"]
        try:
            with transaction.atomic():
                shutoff_carry_out(case=case, done_on=self.day, actor=None)
        except ApplicationError:
            return
        seen("shut off")
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

    @rule()
    def the_credit_is_asked_back(self):
        """A clerk asks for the account's whole credit back and a supervisor approves: refused while any of it is
        money not yet cleared (a check the bank may still return)."""
        credit = refundable_credit(self.account.pk, as_of=self.day)
        if credit.credit <= 0 or not self.account_open():
            return
        try:
            refund = refund_request(account=self.account, amount=credit.credit, reason="walk", as_of=self.day,
                                    actor=self.clerk)
        except ApplicationError as exc:
            seen("refund: refused" + (" uncleared" if "not yet cleared" in str(exc) else ""))
            return
        try:
            refund_decide(refund=refund, approve=True, note="", as_of=self.day, actor=self.supervisor)
        except ApplicationError:
            refund_decide(refund=refund, approve=False, note="not there any more", as_of=self.day,
                          actor=self.supervisor)
            seen("refund: refused at approval")
            return
        if credit.held > 0:
            self.refunded_uncleared.append((self.day, credit.words))
        seen("refund: made")

    @precondition(lambda self: TerminationCase.objects.filter(number=self.number).exclude(status__in=CLOSED).exists())
    @rule()
    def the_water_is_shut_off_and_the_amount_named_restores_it(self):
        """The shut-off ordered and carried out where the guard lets it; then the counter names one amount, and
        paid, it restores service."""
        for step in (shutoff_order, shutoff_carry_out):
            if self.case.status == "shut_off":
                break
            try:
                with transaction.atomic():
                    if step is shutoff_order:
                        step(case=self.case, as_of=self.day, actor=None)
                    else:
                        step(case=self.case, done_on=self.day, actor=None)
            except ApplicationError:
                return  # the guard holds: nothing to restore
        seen("shut off")
        pay = case_pay(self.case, as_of=self.day)
        assert pay is not None and pay.restores
        if pay.amount > 0:
            self.references += 1
            with captured():
                payment_post(account_no=self.account.account_no, amount=pay.amount, paid_on=self.day,
                             reference=f"WALK-{self.references}", source="counter", tender="check",
                             check_number="2")
        refusals = restore_refusals(self.case, as_of=self.day)
        if refusals:
            self.restore_refused.append((self.day, pay.amount, [r.message for r in refusals]))
            return
        with captured():
            service_restore(case=self.case, as_of=self.day, actor=None)
        seen("restored by the amount named")

    @precondition(lambda self: self.account_open())
    @rule()
    def the_lockbox_reads_one_check_twice(self):
        bill = Bill.objects.filter(account=self.account, status="issued").latest("bill_date", "pk")
        self.references += 1
        stub = f"{self.account.account_no}  {bill.number}  0000018613  0000019544"
        text = ("deposit_date,batch,item,amount,check_number,scan_line\n"
                f"{self.day},{self.references},1,6.10,{7000 + self.references},{stub}\n"
                f"{self.day},{self.references},2,6.10,{7000 + self.references},{stub}\n")
        with captured():
            result = lockbox_import(file=text.encode(), as_of=self.day)
        assert (result.posted, result.exceptions) == (1, 1), str(result)
        seen("same check twice held")


    @staticmethod
    def books(day: date) -> tuple:
        return (journal_rows(journal_entries(start=day, end=day)), cash_day_rows(cash_day(on=day)))

    # --- what must hold after every step ------------------------------------------------------------------

    @invariant()
    def no_uncleared_money_refunded_and_the_amount_named_restores(self):
        assert self.refunded_uncleared == []
        assert self.restore_refused == []

    @invariant()
    def a_closed_days_books_never_change(self):
        for day, books in self.closed_books.items():
            assert self.books(day) == books, f"the books of {day}, closed, changed"

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
    def no_active_case_on_void_bills_and_no_order_on_a_closed_account(self):
        case = self.case
        if case.status not in CLOSED and case.status != "shut_off":
            assert case.bills.exclude(bill__status="void").exists(), "an active case on bills that are all void"
        if not self.account_open():
            assert not WorkOrder.objects.filter(case__account=self.account, status="issued").exists()

    @invariant()
    def a_stopped_enrolment_is_never_debited(self):
        for enrolment in AutopayEnrolment.objects.filter(account=self.account).exclude(status="active"):
            assert not AutopayDebit.objects.filter(enrolment=enrolment, file__created_at__gt=enrolment
                                                   .status_changed_at).exists(), "debited after it stopped"
        if not self.account_open():
            assert not AutopayEnrolment.objects.filter(account=self.account, status="active").exists()

    @invariant()
    def every_surprise_told_the_customer_once_in_their_language(self):
        told = PaymentReversal.objects.filter(payment__account=self.account,
                                              reason__in=["returned", "debit_returned", "disputed"])
        for reversal in told:
            (notice,) = CustomerNotice.objects.filter(fact=f"reversal:{reversal.pk}")
            assert notice.language == self.account.language
        for enrolment in AutopayEnrolment.objects.filter(account=self.account, status="suspended"):
            assert CustomerNotice.objects.filter(kind="autopay_suspended",
                                                 fact__startswith=f"enrolment:{enrolment.pk}:").count() == 1
        for enrolment in AutopayEnrolment.objects.filter(account=self.account, status="cancelled"):
            assert CustomerNotice.objects.filter(kind="autopay_ended", fact=f"enrolment:{enrolment.pk}:ended"
                                                 ).count() == 1

    @invariant()
    def the_ledger_balances(self):
        total = sum((e.amount.amount for e in LedgerEntry.objects.filter(account=self.account)), Decimal("0.00"))
        balance = account_balances([self.account.pk], through=LAST)[self.account.pk].balance
        assert balance == total


@pytest.mark.long(400)
def test_the_office_acts_as_one_whatever_happens(mineola, media, bank):  # noqa: F811 - the fixture
    account, _ = delinquent_account(occupant=False)
    account.language = "es"
    account.save()
    account.owner.email = "owner@example.org"
    account.owner.save()
    OfficeWalk.account = account
    OfficeWalk.number = terminated_case(account, occupant=False)
    OfficeWalk.clerk, OfficeWalk.supervisor = staff("clara", "Clerk"), staff("sam", "Supervisor")
    run_state_machine_as_test(OfficeWalk, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=16, deadline=None, derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]))
    reached = {what.split(":")[0].split(" R")[0] for what in SEEN}
    print(sorted(SEEN.items()))
    if EXAMPLES >= 300:
        assert {"debit file", "debit returned", "processor paid", "processor disputed", "processor reinstated",
                "processor refunded", "voided and billed again", "account closed", "refund", "same check twice held",
                "day closed", "processor down"} <= reached, sorted(SEEN)
        assert SEEN["refund: refused uncleared"] and SEEN["restored by the amount named"], sorted(SEEN)
        assert SEEN["debit file: True"] and SEEN["processor reinstated: dispute won"], sorted(SEEN)
