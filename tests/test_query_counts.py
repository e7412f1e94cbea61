"""How many queries the hot paths take, pinned: a billing run's chunk, the statement, the portal's bill and
account pages and the clerk's account page.

Each count is the same whatever the history (an account with 2 bills or 20; accounts with a year of monthly
bills or two) and, for a run, whatever the chunk's size, so a loop that queries per bill, per entry or per
account shows as a failing count. A failing count lists the queries it saw, one table a line.

Pages are requested once before they are counted: what a process keeps after its first request (content
types, the site's rules) is not what a page costs each time.

The counts differ between the databases where the code does: on PostgreSQL a run reserves its bills' ids
and writes bills, lines and ledger entries with COPY (through the driver, not counted as queries, so the
COPYs are counted on their own); on SQLite it inserts them, and SQLite binds at most 999 values in a
statement, so Django inserts 999 ÷ 29 columns = 34 bills a statement: a chunk of 50 takes one INSERT more
than a chunk of 5 there, and a chunk of 1,000 takes 30 (PostgreSQL, the production database, takes one COPY
whatever the size).
"""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

import billing.ledger.posting
import billing.runs.write
from accounts.models import PortalLink
from billing.figures import bill_figures
from billing.models import Bill, LedgerEntry
from billing.runs.issue import bill_accounts
from billing.runs.lifecycle import billing_run_create
from billing.selectors import account_statement
from tests.billing.steps import run
from tests.query_counts_support import (
    assert_queries,
    bill_history,
    first_of_months,
    monthly_accounts,
    pay_each_bill_late,
    read_for,
)

pytestmark = pytest.mark.django_db

RUN_ON = date(2026, 11, 1)


def on_this_database(counts: dict[str, int]) -> int:
    return counts[connection.vendor]


# --- a billing run's chunk --------------------------------------------------------------------------------

@pytest.fixture
def copies(monkeypatch):
    """The tables a step wrote by COPY (PostgreSQL), in order."""
    tables = []
    for module in (billing.runs.write, billing.ledger.posting):
        real = module.copy_rows

        def counted(model, columns, rows, real=real):
            tables.append(model._meta.db_table)
            return real(model, columns, rows)

        monkeypatch.setattr(module, "copy_rows", counted)
    return tables


# The chunk's facts, one query each whatever the number of accounts or bills: the utility and the rate
# schedule in force (the ordinance), the accounts (locked FOR UPDATE on PostgreSQL), their owners, the
# bills of the day already there (the voids of those bills only when there are some), meter
# installations, pending charges, released high-usage holds, the earlier bills, the readings, and the
# office's closed days (an entry dated a closed day is booked on the next open one). Then the writes, and
# the open exceptions the new bills resolve.
CHUNK_READS = 11
CHUNK_QUERIES = {
    # + no parallel plans (SET LOCAL), the bills' ids (nextval), the exceptions resolved; the bills, lines
    # and entries go by COPY.
    "postgresql": {5: CHUNK_READS + 3, 50: CHUNK_READS + 3},
    # + INSERT bills (34 a statement: two for 50), INSERT lines, INSERT ledger entries, the exceptions resolved.
    "sqlite": {5: CHUNK_READS + 4, 50: CHUNK_READS + 5},
}
CHUNK_COPIES = {"postgresql": ["billing_bill", "billing_billline", "billing_ledgerentry"], "sqlite": []}


@pytest.mark.parametrize(("accounts", "years"), [(5, 1), (50, 1), (5, 2), (50, 2)])
def test_a_billing_chunk_takes_the_same_queries_whatever_its_size_and_history(mineola, copies, accounts, years):
    chunk_accounts = monthly_accounts(accounts, first_bill=date(RUN_ON.year - years, RUN_ON.month, 1))
    bill_history(chunk_accounts, months=12 * years, before=RUN_ON)
    assert Bill.objects.count() == accounts * 12 * years
    read_for([meter for _, meter in chunk_accounts], bill_date=RUN_ON, months_billed=12 * years)
    billing_run = billing_run_create(run_on=RUN_ON, chunk_size=100)
    chunk = billing_run.chunks.get()
    assert len(chunk.account_ids) == accounts
    copies.clear()  # the history's runs

    with CaptureQueriesContext(connection) as captured:
        result = bill_accounts(account_ids=chunk.account_ids, run_on=RUN_ON, run=billing_run)

    assert_queries(captured, CHUNK_QUERIES[connection.vendor][accounts])
    assert copies == CHUNK_COPIES[connection.vendor]
    # Not the first bill of the billable year (that was March 1): 130,000 gal × $3.85/1,000 = $500.50 each.
    assert (result.bills, result.exceptions, result.already_billed) == (accounts, 0, 0)
    assert result.total == accounts * Decimal("500.50")
    issued = Bill.objects.filter(bill_date=RUN_ON, run=billing_run)
    assert sorted(issued.values_list("account_id", flat=True)) == sorted(chunk.account_ids)
    assert {bill.total.amount for bill in issued} == {Decimal("500.50")}
    assert LedgerEntry.objects.filter(bill__in=issued, kind="water").count() == accounts


# --- one account's books: statement, portal, admin --------------------------------------------------------

END = date(2026, 11, 1)
PENALTIES_THROUGH = "2026-11-30"


@pytest.fixture(params=[2, 20], ids=["2 bills", "20 bills"])
def books(request, mineola):
    """An account with 2 or 20 monthly bills dated through 2026-10-01, each paid in full 10 days after its
    due date, and the penalties assessed through 2026-11-30.

    Each bill was unpaid on the day after its due date: 5% of it (§ 45.29 E), $24.96 on a $499.25 bill
    (24.9625) and $25.03 on a $500.50 bill (25.025); the payment paid the bill's water first, so no 1%
    followed and the penalties are what is owed. With 20 bills (2025-03-01 to 2026-10-01), the bills of
    2025-03-01 and 2026-03-01 open a billable year ($499.25) and 18 do not ($500.50): 2 × 24.96 + 18 × 25.03
    = $500.46. With 2 bills (2026-09-01 opens the account's billable year, 2026-10-01 does not):
    24.96 + 25.03 = $49.99.
    """
    count = request.param
    [(account, meter)] = monthly_accounts(1, first_bill=first_of_months(before=END, count=count)[0])
    dates = bill_history([(account, meter)], months=count, before=END)
    pay_each_bill_late(account, days=10)
    run("assess_penalties", "--date", PENALTIES_THROUGH)
    balance = {2: "49.99", 20: "500.46"}[count]
    totals = {2: ["499.25", "500.50"],
              20: ["499.25", *["500.50"] * 11, "499.25", *["500.50"] * 7]}[count]  # March 2025, March 2026
    return {"account": account, "bills": count, "dates": dates, "balance": balance, "totals": totals}


def api_client() -> APIClient:
    """A clerk calling the API with a token, as a script would."""
    clerk = get_user_model().objects.create_user("clerk", is_staff=True)
    clerk.groups.add(Group.objects.get(name="Clerk"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=clerk).key}")
    return client


@pytest.fixture(autouse=True)
def sessions_in_the_database(settings):
    """Pages read their session from the database, as without Redis: where Redis is set the session comes
    from the shared cache (one query fewer), and the counts below must not depend on the machine."""
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"


def counted_get(client, url: str, expected: int):
    assert client.get(url).status_code == 200  # the process's first request, not counted
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    assert_queries(captured, expected)
    return response


# The token with its user, the user's own and group permissions, the account (``account_get``); then the
# statement's 7.
API_STATEMENT = {"postgresql": 4 + 7, "sqlite": 4 + 7}
# The payment order (the utility's row), the account's ledger entries and bills for its balances; its bills
# and their lines (prefetched); the payments; the charges other than bills, with their corrections and
# their bills' numbers.
STATEMENT = {"postgresql": 7, "sqlite": 7}


def test_the_statement_takes_the_same_queries_with_2_bills_as_with_20(books):
    account = books["account"]
    url = f"/api/v1/accounts/{account.account_no}/statement/?as_of={PENALTIES_THROUGH}"
    data = counted_get(api_client(), url, on_this_database(API_STATEMENT)).json()
    assert data["balance"] == books["balance"]
    assert [b["bill_date"] for b in data["bills"]] == [d.isoformat() for d in books["dates"]]
    assert [b["total"] for b in data["bills"]] == books["totals"]
    assert {b["balance"] for b in data["bills"]} == {"0.00"}
    assert len(data["payments"]) == books["bills"]
    assert [c["kind"] for c in data["charges"]] == ["penalty"] * books["bills"]

    with CaptureQueriesContext(connection) as captured:
        statement = account_statement(account=account, as_of=date.fromisoformat(PENALTIES_THROUGH))
    assert_queries(captured, on_this_database(STATEMENT))
    assert statement == data


def portal_client(account) -> Client:
    customer = get_user_model().objects.create_user(username="pat@example.org", email="pat@example.org",
                                                    password="correct horse battery staple")
    PortalLink.objects.create(user=customer, account=account)
    client = Client()
    client.force_login(customer, backend="django.contrib.auth.backends.ModelBackend")
    return client


# Session and user; the bill through the customer's links (with its account, premises, readings and
# meters); the consumption history; the ordinance (the utility: its penalty scheme, its payment order and its
# name for the page); the bill's figures, kept when its PDF was rendered (one row, not a replay of the
# ledger); the bill's balance (entries, bills); the lines; whether the user is a backflow tester (the menu).
PORTAL_BILL = {"postgresql": 10, "sqlite": 10}
# Session and user; the account through the customer's links; the ordinance (the utility: its payment order
# and its name for the page); the ledger replayed once (entries, bills) for the balance, the bills' balances
# and the amount due; the account's live bills (the list, the chart, the due dates); deposits; the payments;
# the payments made to a previous billing system and what it relevied to the tax roll (history brought over by a
# conversion); the charges other than bills; termination cases; the account's payment plan; whether its meters
# send daily reads (the last 60 days' use); the tester menu; the autopay enrolment in force.
PORTAL_ACCOUNT = {"postgresql": 17, "sqlite": 17}


def test_the_portal_bill_page_takes_the_same_queries_with_2_bills_as_with_20(books):
    bill = Bill.objects.filter(account=books["account"]).latest("bill_date")
    bill_figures(bills=[bill])  # as the worker rendering its PDF keeps them when the bill is issued
    page = counted_get(portal_client(books["account"]), reverse("portal:bill", kwargs={"public_id": bill.public_id}),
                       on_this_database(PORTAL_BILL)).content.decode()
    # 130,000 gal × $3.85/1,000 = $500.50; paid in full, with its 5% penalty of $25.03 still owed.
    assert bill.number in page and "130,000" in page and "$500.50" in page and "$25.03" in page


def test_the_portal_account_page_takes_the_same_queries_with_2_bills_as_with_20(books):
    account = books["account"]
    page = counted_get(portal_client(account), reverse("portal:account", kwargs={"public_id": account.public_id}),
                       on_this_database(PORTAL_ACCOUNT)).content.decode()
    assert f"${books['balance']}" in page
    assert all(bill.number in page for bill in Bill.objects.filter(account=account))


# Session and user; the account and its notes; the ledger replayed once (utility, entries, bills) for the
# running-balance ledger, the bills' balances and the amount due, with the ledger's rows; the bills (their due
# dates with them); meters, installations and readings (once, for the top and the readings' tab); the termination
# cases and the payment plans (once each, for the flags at the top and the cases' tab); the account's alerts in
# force; the work orders and the notices (their tabs); owners, portal links, premises and customers for the
# account's fields; the utility's name; the autopay enrolment in force. (The session is written only when the account
# is not already the first of the recently opened: not on the page opened again.)
ADMIN_ACCOUNT = {"postgresql": 25, "sqlite": 25}


def test_the_admin_account_page_takes_the_same_queries_with_2_bills_as_with_20(client, books):
    client.force_login(get_user_model().objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-9"))
    account = books["account"]
    page = counted_get(client, reverse("admin:accounts_account_change", args=[account.pk]),
                       on_this_database(ADMIN_ACCOUNT)).content.decode()
    assert f"${books['balance']}" in page
    assert all(bill.number in page for bill in Bill.objects.filter(account=account))
