"""Payment references compare without regard to case, in Python and in the database; a clerk's slips in a
payment row (a decimal comma, a year 0026, a date without dashes, a control character) are refused."""

from datetime import date
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction
from djmoney.money import Money

from billing.models import Payment
from tests.billing.steps import account_with_meter, pay

pytestmark = pytest.mark.django_db


@pytest.fixture
def account(mineola):
    account, _ = account_with_meter(book=1)
    pay(account, "100.00", "2026-02-10", "CHK-100")
    return account


def import_payments(tmp_path, *rows: str) -> tuple[str, str]:
    path = tmp_path / "payments.csv"
    path.write_text("account_no,amount,paid_on,reference\n" + "".join(f"{r}\n" for r in rows), encoding="utf-8")
    out, err = StringIO(), StringIO()
    try:
        call_command("import_payments", str(path), "--date", "2026-03-01", stdout=out, stderr=err)
    except CommandError as exc:
        return str(exc), err.getvalue()
    return out.getvalue(), err.getvalue()


def test_a_lowercase_copy_of_a_posted_reference_is_the_same_payment_and_skipped(tmp_path, account):
    out, _ = import_payments(tmp_path, f"{account.account_no},100.00,2026-02-10,chk-100")
    assert "0 created" in out and "1 skipped" in out
    assert Payment.objects.count() == 1


def test_a_lowercase_copy_of_a_posted_reference_for_another_payment_is_refused(tmp_path, account):
    message, listed = import_payments(tmp_path, f"{account.account_no},75.00,2026-02-11,Chk-100")
    assert "nothing was saved" in message
    assert listed.strip() == (f"line 2: reference: 'Chk-100' is already posted (as 'CHK-100') as $100.00 to account "
                              f"{account.account_no}; a different payment needs its own reference")
    assert Payment.objects.count() == 1


def test_two_rows_whose_references_differ_only_in_case_are_refused(tmp_path, account):
    _, listed = import_payments(tmp_path, f"{account.account_no},5.00,2026-02-11,dep-7",
                                f"{account.account_no},5.00,2026-02-11,DEP-7")
    assert listed.strip() == ("line 3: reference: 'DEP-7' is also on line 2 (as 'dep-7'); each payment needs its "
                              "own reference")
    assert Payment.objects.count() == 1


def test_the_database_refuses_a_reference_differing_only_in_case(account):
    with pytest.raises(IntegrityError), transaction.atomic():
        Payment.objects.create(account=account, amount=Money("1.00", "USD"), paid_on=date(2026, 2, 11),
                               reference="chk-100")


@pytest.mark.parametrize(("row", "column", "rule"), [
    ("{a},\"12,50\",2026-02-11,R-1", "amount", "a comma may only separate thousands"),
    ("{a},1_000,2026-02-11,R-1", "amount", "'1_000' is not an amount in dollars and cents"),
    ("{a},١٢,2026-02-11,R-1", "amount", "is not an amount in dollars and cents"),
    ("{a},12.50,0026-02-11,R-1", "paid_on", "the year 0026 is before 1900; check the year"),
    ("{a},12.50,20260211,R-1", "paid_on", "'20260211' is not a date; use YYYY-MM-DD"),
    ("{a},12.50,2026-02-11,\"R\n1\"", "reference", "contains a control character (U+000A, a line break)"),
    ("{a},12.50,2026-02-11,R\u200b1", "reference", "contains an invisible character (U+200B"),
    ("\"{a}\x1b\",12.50,2026-02-11,R-1", "account_no", "contains a control character (U+001B"),
])
def test_a_clerks_slip_is_refused_naming_the_rule(tmp_path, account, row, column, rule):
    message, listed = import_payments(tmp_path, row.format(a=account.account_no))
    assert "nothing was saved" in message
    assert listed.startswith(f"line 2: {column}: ") and rule in listed
    assert Payment.objects.count() == 1


def test_a_comma_in_the_thousands_is_taken(tmp_path, account):
    out, _ = import_payments(tmp_path, f"{account.account_no},\"1,250.00\",2026-02-11,R-2")
    assert "1 created" in out
    assert Payment.objects.get(reference="R-2").amount.amount == 1250
