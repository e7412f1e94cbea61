"""Every amount a clerk, a file or a program gives is held to a bound the database can hold.

An amount column is numeric(12, 2): below $10,000,000,000. A payment or a memo is also held to a
business bound of $999,999.99 (a million dollars on one water account is extra digits, not a payment). After
every refused input the nightly job runs for the whole village, which proves nothing unreadable was saved:
on SQLite an amount the column cannot hold is stored anyway and every later read of it fails.
"""

from datetime import date
from decimal import Decimal
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from djmoney.models.fields import MoneyField
from rest_framework.test import APIClient

from billing.models import Adjustment, Bill, LedgerEntry, Payment
from billing.services.adjustments import adjustment_create
from core.errors import ApplicationError
from core.limits import MONEY_MAX
from core.money import ADJUSTMENT_MAX, PAYMENT_MAX
from tests.billing.steps import account_with_meter, pay, read, run, statement
from tests.factories import clerk_user

pytestmark = pytest.mark.django_db

TOO_MUCH = ["10000000000", "10,000,000,000.00", "$99999999999.99", "1e30", "1E+30", "9" * 40]


@pytest.fixture
def village(mineola):
    """Two billed accounts, one part paid: what the nightly job must still read after every refusal."""
    accounts = []
    for _ in range(2):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_062_500)
        accounts.append(account)
    run("run_billing", "--date", "2026-02-01")
    pay(accounts[0], "100.00", "2026-02-10", "CHK-1")
    return accounts


def nothing_saved_and_nightly_runs(accounts, *, payments=1, adjustments=0):
    assert Payment.objects.count() == payments and Adjustment.objects.count() == adjustments
    assert not LedgerEntry.objects.filter(amount__gte=PAYMENT_MAX).exists()
    out = StringIO()
    call_command("nightly", "--date", "2026-05-10", stdout=out)
    assert "Nightly 2026-05-10" in out.getvalue()
    for account in accounts:
        statement(account.account_no, "2026-05-10")


def test_the_money_bound_is_what_every_money_column_holds():
    money_fields = [f for model in apps.get_models() for f in model._meta.concrete_fields if isinstance(f, MoneyField)]
    assert money_fields
    for f in money_fields:
        assert (f.max_digits, f.decimal_places) == (12, 2), f
    assert MONEY_MAX == Decimal("9999999999.99")
    assert PAYMENT_MAX == ADJUSTMENT_MAX == Decimal("999999.99")


@pytest.mark.parametrize("amount", [*TOO_MUCH, "1000000", "1,000,000.00"])
def test_import_payments_refuses_an_amount_over_the_bound(village, tmp_path, amount):
    path = tmp_path / "payments.csv"
    path.write_text(f'account_no,amount,paid_on,reference\n{village[1].account_no},"{amount}",2026-02-11,BIG-1\n')
    err = StringIO()
    with pytest.raises(CommandError, match="rejected with 1 error"):
        call_command("import_payments", str(path), "--date", "2026-02-20", stdout=StringIO(), stderr=err)
    listed = err.getvalue()
    assert listed.startswith("line 2: amount: ")
    if "e" not in amount.lower() and len(amount) < 40:
        assert "more than a single payment may be (at most $999,999.99)" in listed
    nothing_saved_and_nightly_runs(village)


def test_the_largest_payment_is_accepted(village):
    pay(village[1], "999,999.99", "2026-02-11", "BIG-OK")
    assert Payment.objects.get(reference="BIG-OK").amount.amount == Decimal("999999.99")
    nothing_saved_and_nightly_runs(village, payments=2)


@pytest.mark.parametrize("amount", ["10000000000", "1e30", "1000000"])
def test_the_api_refuses_an_amount_over_the_bound(village, amount):
    api = APIClient()
    api.force_authenticate(clerk_user("staff"))
    response = api.post("/api/v1/payments/", {"account_no": village[1].account_no, "amount": amount,
                                              "paid_on": "2026-02-11", "reference": "API-BIG"}, format="json")
    assert response.status_code == 400
    error, = response.json()["errors"]
    assert error["field"] == "amount"
    nothing_saved_and_nightly_runs(village)


@pytest.fixture
def clerk(client, village):
    client.force_login(User.objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-only-9"))
    return client


@pytest.mark.parametrize("amount", ["10000000000", "1e30", "1000000.00"])
def test_the_payment_batch_page_refuses_an_amount_over_the_bound(clerk, village, amount):
    form = {"form-TOTAL_FORMS": "1", "form-INITIAL_FORMS": "0", "form-0-account_no": village[1].account_no,
            "form-0-amount": amount, "form-0-paid_on": "2026-02-11", "form-0-reference": "BATCH-BIG"}
    page = clerk.post(reverse("admin:billing_payment_batch"), form).content.decode()
    assert "Nothing was posted" in page and "row 1: amount" in page
    nothing_saved_and_nightly_runs(village)


@pytest.mark.parametrize("kind", ["credit", "debit"])
@pytest.mark.parametrize("amount", ["10000000000", "1e30", "1000000.00"])
def test_memos_refuse_an_amount_over_the_bound(clerk, village, kind, amount):
    bill = Bill.objects.get(account=village[1])
    page = clerk.post(reverse("admin:billing_adjustment_add"),
                      {"bill": bill.number, "kind": kind, "amount": amount, "reason": "typo test"})
    [refusal] = page.context["adminform"].form.errors["amount"]
    assert refusal == (f"'{amount}' is not an amount in dollars and cents (digits 0-9, like 1250.00 or $1,250.00)"
                       if "e" in amount else f"'{amount}' is more than a memo may be (at most $999,999.99)")
    with pytest.raises(ApplicationError, match=r"at most \$999,999.99"):
        adjustment_create(bill=bill, kind=kind, amount=Decimal("1000000.00"), reason="typo", as_of=date(2026, 3, 1),
                          actor=None)
    nothing_saved_and_nightly_runs(village)


@pytest.mark.parametrize("basis", ["1e30", "10000000000", "NaN", "Infinity"])
def test_a_fee_quote_refuses_a_basis_over_the_bound(village, basis):
    api = APIClient()
    api.force_authenticate(clerk_user("staff"))
    response = api.get(f"/api/v1/fees/?code=construction&basis={basis}")
    assert response.status_code == 400
    error, = response.json()["errors"]
    assert error["field"] == "basis"
    # The largest basis the column holds still quotes: $9,999,999,999.99 × $1.50 per $1,000.
    assert api.get("/api/v1/fees/?code=construction&basis=9999999999.99").json()["amount"] == "15000000.00"
    nothing_saved_and_nightly_runs(village)
