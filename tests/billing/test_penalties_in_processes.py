"""A catch-up shared among processes (``assess_penalties --workers``) posts what one process would: every
penalty the facts make owed, each once, and nothing on a second run."""

from datetime import date

import pytest
from django.db import connection

from billing.models import LedgerEntry
from billing.penalties.plan import penalties_plan, penalty_candidates
from billing.services import penalties as services_penalties
from billing.services.payments import payment_post
from tests.billing.steps import account_with_meter, read, run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]
DAY = date(2026, 9, 10)


@pytest.fixture(autouse=True)
def needs_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL): the processes read what the test has committed")


def books():
    return sorted(LedgerEntry.objects.filter(kind__in=("penalty", "penalty_correction")).values_list(
        "account_id", "bill_id", "kind", "posted_on", "amount", "source", "description", "citation"))


def test_a_catch_up_in_two_processes_posts_the_plan_once(mineola, monkeypatch):
    monkeypatch.setattr(services_penalties, "CHUNK", 4)  # several chunks for each process
    accounts = []
    for n in range(18):
        account, meter = account_with_meter(book=1, account_no=f"1-{n + 1:04d}")
        read(meter, date(2026, 1, 12), 1_000_000 + 7_000 * (n + 1))
        accounts.append(account)
    run("run_billing", "--date", "2026-02-01")
    for n, account in enumerate(accounts[::3]):  # some paid late, in part
        payment_post(account_no=account.account_no, amount=account.bills.get().total.amount / 2,
                     paid_on=date(2026, 3, 20 + n), reference=f"P-{n}", tender="cash")
    planned = penalties_plan(through=dict.fromkeys(penalty_candidates(as_of=DAY), DAY))
    result = services_penalties.penalties_assess_due(as_of=DAY, workers=2)
    posted = books()
    assert sorted((p.account_id, p.bill_id, p.kind, p.posted_on, p.amount) for p in planned) == [
        row[:5] for row in posted]
    assert result.posted == len(planned) > len(accounts)
    again = services_penalties.penalties_assess_due(as_of=DAY, workers=2)
    assert again.posted == again.corrected == 0 and books() == posted
