"""Billing announces committed facts: a payment posted (by any path, the import included) and a bill voided, so
apps above billing (termination closes a case paid in full) act on them without billing knowing them."""

import io
from datetime import date
from decimal import Decimal as D

import pytest
from django.core.management import call_command

from billing.models import Bill, Payment
from billing.services.adjustments import bill_void
from billing.services.payments import payment_post
from billing.signals import bill_voided, payment_posted
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard():
    calls = []

    def listen(signal):
        def receiver(sender, **kwargs):
            calls.append((signal, kwargs))
        signal.connect(receiver, weak=False, dispatch_uid=f"test-{id(signal)}")
        return receiver

    receivers = {signal: listen(signal) for signal in (payment_posted, bill_voided)}
    yield calls
    for signal in receivers:
        signal.disconnect(dispatch_uid=f"test-{id(signal)}")


def test_a_payment_is_announced_once_committed(mineola, heard, django_capture_on_commit_callbacks):
    account, meter = account_with_meter(book=1)
    with django_capture_on_commit_callbacks(execute=False) as pending:
        payment_post(account_no=account.account_no, amount=D("10.00"), paid_on=date(2026, 2, 1), reference="P-1")
    assert heard == []  # nothing is said before the transaction commits
    for callback in pending:
        callback()
    payment = Payment.objects.get()
    assert heard == [(payment_posted, {"signal": payment_posted, "payment_ids": [payment.pk],
                                       "account_ids": [account.pk]})]


def test_an_imported_payment_file_is_announced(mineola, heard, tmp_path, django_capture_on_commit_callbacks):
    account, _ = account_with_meter(book=1)
    path = tmp_path / "payments.csv"
    path.write_text(f"account_no,amount,paid_on,reference\n{account.account_no},12.50,2026-02-01,BANK-1\n")
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_payments", str(path), "--no-progress", stdout=io.StringIO())
    assert [kwargs["account_ids"] for signal, kwargs in heard if signal is payment_posted] == [[account.pk]]


def test_a_void_is_announced(mineola, heard, django_capture_on_commit_callbacks):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        bill_void(bill=bill, reason="misread", as_of=date(2026, 2, 5), actor=None)
    assert [(s, k["bill_id"]) for s, k in heard] == [(bill_voided, bill.pk)]
