"""The account list shows what each account owes and how much of it is past due, in a fixed number of queries."""

from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from billing.services.payments import payment_post
from tests.billing.steps import account_with_meter, read, run
from tests.factories import clerk_user

pytestmark = pytest.mark.django_db


def _page_rows(html: str) -> dict[str, tuple[str, str]]:
    import re

    rows = re.findall(r'<th class="field-account_no"><a[^>]*>([^<]+)</a></th>.*?'
                      r'<td class="field-balance">([^<]*)</td><td class="field-past_due">([^<]*)</td>', html, re.S)
    return {number: (balance, past_due) for number, balance, past_due in rows}


def test_balance_and_past_due_columns(client, mineola, django_assert_max_num_queries):
    numbers = []
    for i, gallons in enumerate((62_500, 20_000, 30_000)):
        _, meter = account_with_meter(book=1, account_no=f"1-000{i + 1}")
        read(meter, date(2026, 1, 12), 1_000_000 + gallons)
        numbers.append(f"1-000{i + 1}")
    run("run_billing", "--date", "2026-02-01")
    payment_post(account_no="1-0003", amount=Decimal("50.00"), paid_on=date(2026, 2, 25), reference="BANK-3")
    payment_post(account_no="1-0002", amount=Decimal("60.00"), paid_on=date(2026, 2, 10), reference="API-2")
    client.force_login(clerk_user())
    client.get(reverse("admin:accounts_account_changelist"))  # warm the session and the content types
    with django_assert_max_num_queries(15):
        html = client.get(reverse("admin:accounts_account_changelist")).content.decode()
    # Due 2026-03-01, long past: $186.13 unpaid; $76.00 less $50.00 paid; a $15.00 credit owes nothing.
    # (No penalties were assessed in this test.)
    assert _page_rows(html) == {"1-0001": ("$186.13", "$186.13"), "1-0002": ("$0.00", "$0.00"),
                                "1-0003": ("$26.00", "$26.00")}
    assert 'class="sortable column-book' in html or "column-book" in html
    assert "column-balance" in html and "column-past_due" in html
    # Many more accounts, the same queries.
    for i in range(10):
        account_with_meter(book=2, account_no=f"2-00{i:02d}")
    with django_assert_max_num_queries(15):
        client.get(reverse("admin:accounts_account_changelist"))
