"""Taking a payment back: from the day of the reversal the account's books are as if it had never been made.

Dollars from docs/ordinances.md's Mineola worked example (§ 45.29 D, E): 62,500 gal → bill $186.13 dated
2026-02-01, due 2026-03-01. Unpaid: 5% = $9.31 (9.3065) on 2026-03-02, +1% = $1.86 on 2026-04-02 and on
2026-05-02 → $199.16 on 2026-05-10.
"""

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from billing.ledger.allocation import Entry, allocate
from billing.models import LedgerEntry, Payment, PaymentReversal
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse, transfer_reference
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter, read, run, statement

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.29 E")]

D = Decimal


def billed_186_13(account_no: str):
    account, meter = account_with_meter(book=1, account_no=account_no)
    read(meter, date(2026, 1, 12), 1_062_500)
    return account


@pytest.fixture
def clerk(db):
    return User.objects.create_user("clerk", is_staff=True)


@pytest.fixture
def account(mineola):
    account = billed_186_13("1-0001")
    run("run_billing", "--date", "2026-02-01")
    return account


def check(account, reference="CHK-1001", on=date(2026, 2, 20), amount="186.13") -> Payment:
    payment_post(account_no=account.account_no, amount=D(amount), paid_on=on, reference=reference,
                 tender="check", check_number="1001")
    return Payment.objects.get(reference=reference)


def assess(on: str):
    return run("assess_penalties", "--date", on)


def late_charges(account) -> list[tuple[str, str]]:
    return [(c["date"], c["amount"]) for c in statement(account.account_no, "2026-05-10")["charges"]
            if c["kind"] == "penalty"]


# --- a returned check ----------------------------------------------------------------------------------

def test_a_returned_check_leaves_the_account_as_if_never_paid(account, clerk):
    payment = check(account)
    assert assess("2026-03-05").strip() and statement(account.account_no, "2026-03-05")["balance"] == "0.00"
    reversal = payment_reverse(payment=payment, reversed_on=date(2026, 3, 10), reason="returned",
                               note="Bank notice: NSF", actor=clerk)
    entry = LedgerEntry.objects.get(source=f"reversal:{reversal.pk}")
    assert (entry.kind, entry.amount.amount, entry.posted_on, entry.corrects_id) == (
        "payment_reversal", D("186.13"), date(2026, 3, 10), payment.entry.pk)
    assess("2026-05-10")
    # $186.13 + $9.31 + $1.86 + $1.86 = $199.16, the worked example's balance of a bill never paid.
    assert statement(account.account_no, "2026-05-10")["balance"] == "199.16"
    assert late_charges(account) == [("2026-03-02", "9.31"), ("2026-04-02", "1.86"), ("2026-05-02", "1.86")]


@pytest.mark.parametrize("daily", [True, False], ids=["assessed daily", "assessed once"])
def test_the_same_books_whether_assessed_daily_or_once(account, clerk, daily):
    payment = check(account)
    day = date(2026, 2, 2)
    while day <= date(2026, 5, 10):
        if day == date(2026, 3, 10):  # the bank's notice comes in the morning, before the night's assessment
            payment_reverse(payment=payment, reversed_on=day, reason="returned", note="NSF", actor=clerk)
        if daily:
            assess(day.isoformat())
        day += timedelta(days=1)
    assess("2026-05-10")
    assert late_charges(account) == [("2026-03-02", "9.31"), ("2026-04-02", "1.86"), ("2026-05-02", "1.86")]
    assert statement(account.account_no, "2026-05-10")["balance"] == "199.16"
    assert not LedgerEntry.objects.filter(kind="penalty_correction").exists()


def test_a_check_returned_after_the_assessments_ran_is_penalized_on_its_own_days(account, clerk):
    payment = check(account)
    for on in ("2026-03-02", "2026-04-02", "2026-05-02"):
        assess(on)
    assert late_charges(account) == []
    payment_reverse(payment=payment, reversed_on=date(2026, 5, 5), reason="returned", note="stopped", actor=clerk)
    assess("2026-05-10")
    assert late_charges(account) == [("2026-03-02", "9.31"), ("2026-04-02", "1.86"), ("2026-05-02", "1.86")]
    assert statement(account.account_no, "2026-05-10")["balance"] == "199.16"


def test_before_the_reversal_the_payment_counts(account, clerk):
    payment = check(account)
    payment_reverse(payment=payment, reversed_on=date(2026, 3, 10), reason="error", note="typed twice", actor=clerk)
    assert statement(account.account_no, "2026-02-25")["balance"] == "0.00"
    assert statement(account.account_no, "2026-03-10")["balance"] == "186.13"  # nothing assessed yet


def test_the_statement_shows_the_payment_as_made_and_its_reversal_as_a_charge(account, clerk):
    payment = check(account)
    payment_reverse(payment=payment, reversed_on=date(2026, 3, 10), reason="returned", note="NSF", actor=clerk)
    assess("2026-05-10")
    s = statement(account.account_no, "2026-05-10")
    assert set(s) == {"account_no", "as_of", "balance", "bills", "charges", "payments"}
    assert s["payments"] == [{"paid_on": "2026-02-20", "amount": "186.13", "reference": "CHK-1001"}]
    [reversal] = [c for c in s["charges"] if c["kind"] == "payment_reversal"]
    assert reversal == {"kind": "payment_reversal", "date": "2026-03-10", "amount": "186.13", "citation": "",
                        "description": "Payment CHK-1001 reversed: returned check", "bill": None}


# --- a misposted payment -------------------------------------------------------------------------------

def test_a_misposted_payment_is_transferred_with_the_day_it_was_paid(mineola, clerk):
    wrong, right = billed_186_13("1-0001"), billed_186_13("1-0002")
    run("run_billing", "--date", "2026-02-01")
    payment = check(wrong, reference="CHK-77")
    assess("2026-03-05")  # the right account draws the 5% penalty while its payment sits on the wrong one
    assert late_charges(right) == [("2026-03-02", "9.31")]
    reversal = payment_reverse(payment=payment, reversed_on=date(2026, 3, 10), reason="misposted",
                               note="belongs to the neighbour", actor=clerk, transfer_to_account_no="1-0002")
    moved = reversal.transferred_to
    assert (moved.account, moved.reference, moved.paid_on, moved.amount.amount, moved.tender, moved.check_number) == (
        right, "CHK-77-T", date(2026, 2, 20), D("186.13"), "check", "1001")
    assess("2026-05-10")
    assert statement(right.account_no, "2026-05-10")["balance"] == "0.00"
    assert late_charges(right) == []  # paid on time: the penalty posted meanwhile is taken back
    assert statement(wrong.account_no, "2026-05-10")["balance"] == "199.16"
    assert late_charges(wrong) == [("2026-03-02", "9.31"), ("2026-04-02", "1.86"), ("2026-05-02", "1.86")]


def test_a_transfer_reference_takes_the_next_free_suffix(account):
    check(account, reference="CHK-5")
    check(account, reference="chk-5-t", amount="1.00")
    assert transfer_reference("CHK-5") == "CHK-5-T2"


# --- refusals ------------------------------------------------------------------------------------------

def refused(payment, clerk, **changes) -> dict[str, str]:
    kwargs = {"payment": payment, "reversed_on": date(2026, 3, 10), "reason": "returned", "note": "NSF",
              "actor": clerk, **changes}
    with pytest.raises(ApplicationError) as info:
        payment_reverse(**kwargs)
    return {e.field: e.message for e in info.value.errors}


def test_every_refusal_names_its_field_and_writes_nothing(mineola, clerk):
    account = billed_186_13("1-0001")
    billed_186_13("1-0002")
    run("run_billing", "--date", "2026-02-01")
    payment = check(account)
    assert "before the payment was made (2026-02-20)" in refused(
        payment, clerk, reversed_on=date(2026, 2, 19))["reversed_on"]
    assert "is after today" in refused(payment, clerk, reversed_on=date.today() + timedelta(days=2))["reversed_on"]
    assert refused(payment, clerk, note="  ")["note"].startswith("is required")
    assert refused(payment, clerk, reason="misposted")["transfer_to_account_no"].startswith("is required")
    assert refused(payment, clerk, reason="misposted", transfer_to_account_no="9-9999")["transfer_to_account_no"] \
        == "unknown account '9-9999'"
    assert "is the account the payment is on" in refused(
        payment, clerk, reason="misposted", transfer_to_account_no="1-0001")["transfer_to_account_no"]
    assert "only a misposted payment" in refused(payment, clerk, transfer_to_account_no="1-0002")[
        "transfer_to_account_no"]
    assert "not a reason" in refused(payment, clerk, reason="bounced")["reason"]
    assert not PaymentReversal.objects.exists() and Payment.objects.count() == 1
    assert not LedgerEntry.objects.filter(kind="payment_reversal").exists()
    payment_reverse(payment=payment, reversed_on=date(2026, 3, 10), reason="returned", note="NSF", actor=clerk)
    assert refused(payment, clerk)["payment"] == "payment CHK-1001 is already reversed"
    assert PaymentReversal.objects.count() == 1


def test_a_reversal_reaching_the_allocation_alone_is_ignored():
    bill = Entry(kind="water", posted_on=date(2026, 2, 1), amount=D("186.13"), bill_key=(date(2026, 2, 1), 1))
    stray = Entry(kind="payment_reversal", posted_on=date(2026, 3, 10), amount=D("186.13"), entry_id=9)
    assert allocate([bill, stray]).balance == D("186.13")


# --- two clerks at once (PostgreSQL) --------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
def test_two_clerks_reversing_the_same_check_at_once_reverse_it_once(mineola):
    from django.db import connection

    from tests.billing.test_concurrency import in_threads

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL): SQLite serializes writers, so there is no race to test")
    account = billed_186_13("1-0001")
    run("run_billing", "--date", "2026-02-01")
    payment = check(account)
    refusals = []

    def reverse_it():
        try:
            payment_reverse(payment=payment, reversed_on=date(2026, 3, 10), reason="returned", note="NSF", actor=None)
        except ApplicationError as exc:
            refusals.append(exc.errors[0].field)

    in_threads(reverse_it, reverse_it)
    assert refusals == ["payment"]
    assert PaymentReversal.objects.count() == 1 and LedgerEntry.objects.filter(kind="payment_reversal").count() == 1


# --- each tender its ways back, and the returned-payment fee -----------------------------------------------

@pytest.mark.citation("policy: returned payment")
def test_cash_is_never_returned_and_a_returned_check_charges_the_office_policy_fee(account, clerk):
    """Chapter 45 sets no returned-check charge: the office's policy amount is charged, labelled so; cash can be
    reversed as an error or a misposting, never as returned."""
    from billing.models import PendingCharge
    from ordinance.models import Utility

    payment_post(account_no=account.account_no, amount=D("20.00"), paid_on=date(2026, 2, 20), reference="CASH-1",
                 tender="cash")
    with pytest.raises(ApplicationError) as refused:
        payment_reverse(payment=Payment.objects.get(reference="CASH-1"), reversed_on=date(2026, 3, 10),
                        reason="returned", note="?", actor=clerk)
    assert [str(e) for e in refused.value.errors] == [
        "reason: a cash payment cannot be returned check; one of posted to the wrong account, entered in error"]
    Utility.objects.update(returned_payment_fee=D("25.00"))
    reversal = payment_reverse(payment=check(account), reversed_on=date(2026, 3, 10), reason="returned",
                               note="NSF", actor=clerk)
    fee = PendingCharge.objects.get()
    assert reversal.fee == fee and (fee.amount.amount, fee.citation, fee.description) == (
        D("25.00"), "policy", "Returned payment fee (office policy)")
    read(account.installations.get().meter, date(2026, 7, 14), 1_082_500)
    run("run_billing", "--date", "2026-08-01")  # the fee goes on the next bill as a line with its label
    fee.refresh_from_db()
    assert fee.bill is not None and fee.bill.lines.filter(description="Returned payment fee (office policy)").exists()


def test_the_reverse_page_offers_only_what_can_happen_to_the_payments_tender(account, clerk):
    from django.contrib.auth.models import Permission
    from django.test import Client
    from django.urls import reverse

    clerk.user_permissions.add(*Permission.objects.filter(codename__in=["change_payment", "view_payment"]))
    client = Client()
    client.force_login(clerk)
    payment_post(account_no=account.account_no, amount=D("20.00"), paid_on=date(2026, 2, 20), reference="CASH-2",
                 tender="cash")
    page = client.get(reverse("admin:billing_payment_reverse",
                              args=[Payment.objects.get(reference="CASH-2").pk])).content.decode()
    assert 'value="error"' in page and 'value="returned"' not in page
