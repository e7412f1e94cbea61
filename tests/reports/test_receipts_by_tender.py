"""The receipts report by day and tender, and the reports after a payment is reversed (a returned check): the
aging total is still the sum of every account's balance, and the balance is the statement's."""

from datetime import date
from decimal import Decimal

import pytest

from accounts.models import Account
from billing.ledger.selectors import account_balances
from billing.models import Payment
from billing.selectors import account_statement
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from reports import selectors
from reports.render import report_view
from tests.billing.steps import run

from .steps import billed_village

pytestmark = pytest.mark.django_db

D = Decimal
AS_OF = date(2026, 5, 10)


@pytest.fixture
def village(mineola):
    return billed_village()


def test_receipts_show_the_tender_of_each_day(village):
    payment_post(account_no="1-0001", amount=D("10.00"), paid_on=date(2026, 2, 20), reference="CASH-1", tender="cash")
    payment_post(account_no="1-0003", amount=D("5.25"), paid_on=date(2026, 2, 20), reference="CARD-1", tender="card")
    r = selectors.receipts(start=date(2026, 2, 1), end=date(2026, 2, 28))
    assert [(t.day, t.tender, t.count, t.total) for t in r.day_tenders] == [
        (date(2026, 2, 10), "check", 1, D("60.00")),
        (date(2026, 2, 20), "cash", 1, D("10.00")), (date(2026, 2, 20), "check", 1, D("45.00")),
        (date(2026, 2, 20), "card", 1, D("5.25")),
        (date(2026, 2, 25), "check", 1, D("50.00"))]
    assert [(t.tender, t.count, t.total) for t in r.tenders] == [
        ("cash", 1, D("10.00")), ("check", 3, D("155.00")), ("card", 1, D("5.25"))]
    assert (r.count, r.total) == (5, D("170.25"))
    view = report_view(r)
    tables = {t.key: t for t in view.more}
    assert [row["tender"] for row in tables["by_tender"].rows] == ["cash", "check", "card"]
    assert tables["by_day_and_tender"].total == {"count": 5, "total": D("170.25")}


def test_after_a_returned_check_the_aging_is_still_the_sum_of_the_balances(village):
    # 1-0002's $45.00 check of 2026-02-20 comes back on 2026-03-10; 1-0002 then owes its bill and penalties.
    payment_reverse(payment=Payment.objects.get(reference="CHK-2002"), reversed_on=date(2026, 3, 10),
                    reason="returned", note="NSF", actor=None)
    run("assess_penalties", "--date", "2026-05-10")
    a = selectors.aging(as_of=AS_OF)
    ids = list(Account.objects.values_list("id", flat=True))
    balances = account_balances(ids, through=AS_OF)
    assert a.total == sum((state.balance for state in balances.values()), D(0))
    statements = {account.account_no: D(account_statement(account=account, as_of=AS_OF)["balance"])
                  for account in Account.objects.all()}
    assert {row.account_no: row.balance for row in a.rows} == {no: b for no, b in statements.items() if b}
    # 1-0002: 20,000 gal → the $45.00 minimum (§ 45.28 A), unpaid from 2026-03-02: 5% $2.25, then 1% $0.45
    # on 2026-04-02 and on 2026-05-02 → $48.15.
    assert statements["1-0002"] == D("48.15")
    # The receipts keep the check on its day: it was received, then returned.
    assert selectors.receipts(start=date(2026, 2, 20), end=date(2026, 2, 20)).total == D("45.00")
