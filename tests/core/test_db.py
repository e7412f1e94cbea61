"""``core.db.values_rows``, the ledger's bulk read, reaches into Django's query compiler (not a public API). It
must give exactly what ``values_list`` gives, converted column by column, on SQLite and on PostgreSQL: a Django
upgrade that changes the compiler fails here, before it reaches a balance."""

import inspect
from datetime import date, datetime
from decimal import Decimal

import pytest
from django.db.models.sql.compiler import SQLCompiler
from django.db.models.sql.constants import MULTI

from billing.models import Bill, LedgerEntry
from billing.services.payments import payment_post
from core.db import values_rows
from tests.portal.conftest import billed_account

pytestmark = pytest.mark.django_db


def test_the_compiler_still_has_what_values_rows_uses():
    assert "result_type" in inspect.signature(SQLCompiler.execute_sql).parameters
    assert list(inspect.signature(SQLCompiler.get_converters).parameters) == ["self", "expressions"]
    queryset = Bill.objects.values_list("id", "bill_date")
    compiler = queryset.query.get_compiler(using=queryset.db)
    compiler.execute_sql(MULTI)
    assert compiler.col_count == 2 and len(compiler.select) == 2


def test_values_rows_gives_what_values_list_gives_for_every_kind_of_column(mineola):
    account = billed_account()
    payment_post(account_no=account.account_no, amount=Decimal("50.00"), paid_on=date(2026, 2, 20),
                 reference="CHK-1", tender="check", check_number="1")
    bills = Bill.objects.filter(account=account).order_by("id").values_list(
        "id", "number", "bill_date", "total", "created_at", "estimated", "run_id", "rate_schedule_id", "gallons")
    entries = LedgerEntry.objects.filter(account=account).order_by("id").values_list(
        "account_id", "id", "kind", "posted_on", "amount", "bill_id", "corrects_id", "created_at")
    for queryset in (bills, entries):
        expected = list(queryset)
        assert expected and values_rows(queryset) == expected
        for got, want in zip(values_rows(queryset), expected, strict=True):
            assert [type(v) for v in got] == [type(v) for v in want]
    row = values_rows(bills)[0]
    assert isinstance(row[2], date) and isinstance(row[3], Decimal) and isinstance(row[4], datetime)
    assert row[4].tzinfo is not None and isinstance(row[5], bool)
    assert values_rows(Bill.objects.none().values_list("id")) == []
    assert values_rows(Bill.objects.filter(number="no such bill").values_list("id", "total")) == []
