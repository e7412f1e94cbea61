"""List export to CSV: the list as it stands (filters, search, every page) with its columns, money as plain
amounts, streamed; only for those who may see the list."""

import csv
import io
from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing.services.payments import payment_post
from core.admin import csv_text
from tests.billing.steps import account_with_meter, read, run
from tests.factories import clerk_user

pytestmark = pytest.mark.django_db


def _rows(response) -> list[list[str]]:
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))


@pytest.fixture
def billed(client, mineola):
    for number, gallons in (("1-0001", 62_500), ("1-0002", 20_000)):
        _, meter = account_with_meter(book=1, account_no=number)
        read(meter, date(2026, 1, 12), 1_000_000 + gallons)
    run("run_billing", "--date", "2026-02-01")
    payment_post(account_no="1-0002", amount=Decimal("45.00"), paid_on=date(2026, 2, 20), reference="CHK-2002",
                 tender="check", check_number="2002")
    payment_post(account_no="1-0001", amount=Decimal("1234.50"), paid_on=date(2026, 2, 21), reference="CASH-9",
                 tender="cash")
    client.force_login(clerk_user())
    return client


def test_the_list_has_an_export_button_that_keeps_its_filters(billed):
    html = billed.get(reverse("admin:billing_payment_changelist"), {"tender__exact": "cash"}).content.decode()
    assert f'href="{reverse("admin:billing_payment_export_csv")}?tender__exact=cash"' in html
    assert "Export CSV" in html
    assert f'href="{reverse("admin:billing_payment_add")}' in html  # the list's own buttons stay


def test_payments_export_with_the_list_columns_and_plain_money(billed):
    rows = _rows(billed.get(reverse("admin:billing_payment_export_csv")))
    wanted = ["reference", "account", "amount", "tender", "paid on"]
    assert [rows[0].index(name) for name in wanted] == sorted(rows[0].index(name) for name in wanted)
    picked = [[row[rows[0].index(name)] for name in wanted] for row in rows[1:]]
    assert picked == [["CASH-9", "1-0001", "1234.50", "Cash", "2026-02-21"],
                      ["CHK-2002", "1-0002", "45.00", "Check", "2026-02-20"]]
    # The list's search narrows the export too.
    rows = _rows(billed.get(reverse("admin:billing_payment_export_csv"), {"q": "CHK"}))
    assert [r[0] for r in rows[1:]] == ["CHK-2002"]


def test_bills_and_accounts_export(billed):
    rows = _rows(billed.get(reverse("admin:billing_bill_export_csv")))
    assert rows[0] == ["number", "account", "bill date", "due date", "total", "status", "final", "estimated"]
    totals = {r[1]: r[4] for r in rows[1:]}
    assert totals == {"1-0001": "186.13", "1-0002": "45.00"}
    rows = _rows(billed.get(reverse("admin:accounts_account_export_csv"), {"o": "1"}))
    header = rows[0]
    balance, past_due = header.index("balance"), header.index("past due")
    # Today is long after the 2026-03-01 due date: what is unpaid is past due (1-0001 paid $1,234.50: a credit).
    assert [(r[0], r[balance], r[past_due]) for r in rows[1:]] == [("1-0001", "0.00", "0.00"),
                                                                   ("1-0002", "0.00", "0.00")]


def test_ledger_readings_charges_and_cases_export(billed):
    for name in ("billing_ledgerentry", "meters_reading", "billing_pendingcharge", "termination_terminationcase"):
        rows = _rows(billed.get(reverse(f"admin:{name}_export_csv")))
        assert rows[0], name
    rows = _rows(billed.get(reverse("admin:billing_ledgerentry_export_csv")))
    assert ["2026-02-21", "1-0001", "Payment", "-1234.50"] in [row[:4] for row in rows[1:]]


def test_only_those_who_may_see_the_list_export_it(client, billed):
    client.force_login(get_user_model().objects.create_user("nobody", is_staff=True))
    assert client.get(reverse("admin:billing_payment_export_csv")).status_code == 403


def test_cells():
    from django.utils.safestring import mark_safe

    assert csv_text(Decimal("12.30")) == "12.30"
    assert csv_text("$1,234.56") == "1234.56" and csv_text("−$15.00") == "-15.00"
    assert csv_text(mark_safe('<a href="/x">T-1 &amp; co</a>')) == "T-1 & co"
    assert csv_text("=HYPERLINK(1)") == "'=HYPERLINK(1)" and csv_text("-12.5") == "-12.5"
    assert csv_text(True) == "yes" and csv_text(None) == "" and csv_text("—") == ""
    assert csv_text(date(2026, 2, 1)) == "2026-02-01"
