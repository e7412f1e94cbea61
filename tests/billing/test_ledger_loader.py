"""The ledger loader (``entries_for_accounts``) and the accounts whose ledger nets to zero.

1-0001 billed $186.13 on 2026-02-01 (docs/ordinances.md's worked example), paid by a check of $186.13 on
2026-02-20 that is returned on 2026-03-10; 1-0002 billed the $45.00 minimum and paid $45.00 on 2026-02-20.
"""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from billing.ledger.selectors import account_balances, accounts_that_may_owe, entries_for_accounts
from billing.models import LedgerEntry, Payment
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db
D = Decimal


@pytest.fixture
def village(mineola):
    accounts = {}
    for number, gallons in (("1-0001", 62_500), ("1-0002", 20_000)):
        account, meter = account_with_meter(book=1, account_no=number)
        read(meter, date(2026, 1, 12), 1_000_000 + gallons)
        accounts[number] = account
    run("run_billing", "--date", "2026-02-01")
    for number, amount in (("1-0001", "186.13"), ("1-0002", "45.00")):
        payment_post(account_no=number, amount=D(amount), paid_on=date(2026, 2, 20), reference=f"CHK-{number}",
                     tender="check", check_number="1")
    payment_reverse(payment=Payment.objects.get(reference="CHK-1-0001"), reversed_on=date(2026, 3, 10),
                    reason="returned", note="NSF", actor=User.objects.create_user("clerk", is_staff=True))
    return accounts


def _facts(entries):
    return [(e.kind, e.posted_on, e.amount, e.bill_key, e.entry_id) for e in entries]


def test_the_moment_an_entry_was_written_is_read_only_when_asked_for(village):
    ids = [a.pk for a in village.values()]
    plain = entries_for_accounts(ids, through=date(2026, 3, 1))
    timed = entries_for_accounts(ids, through=date(2026, 3, 1), recorded_at=True)
    assert {k: _facts(v) for k, v in plain.items()} == {k: _facts(v) for k, v in timed.items()}
    assert all(e.recorded_at is None for entries in plain.values() for e in entries)
    written = dict(LedgerEntry.objects.values_list("id", "created_at"))
    assert all(e.recorded_at == written[e.entry_id] for entries in timed.values() for e in entries)
    first = village["1-0001"]
    bill = first.bills.get()
    assert _facts(plain[first.pk]) == [
        ("water", date(2026, 2, 1), D("186.13"), (date(2026, 2, 1), bill.pk), bill.ledger.get().pk),
        ("payment", date(2026, 2, 20), D("-186.13"), None, Payment.objects.get(reference="CHK-1-0001").entry.pk)]


def test_a_payment_reversed_in_the_range_is_left_out_with_its_reversal(village):
    first = village["1-0001"]
    assert [e.kind for e in entries_for_accounts([first.pk], through=date(2026, 3, 10))[first.pk]] == ["water"]
    assert account_balances([first.pk], through=date(2026, 3, 10))[first.pk].balance == D("186.13")


def test_only_accounts_whose_ledger_does_not_net_to_zero_are_listed(village):
    first, second = village["1-0001"].pk, village["1-0002"].pk
    # Through 2026-03-01 both are paid; the returned check (2026-03-10) and its payment then net to zero
    # together, so 1-0001 owes its bill again.
    assert accounts_that_may_owe(through=date(2026, 3, 1)) == []
    assert accounts_that_may_owe(through=date(2026, 3, 10)) == [first]
    assert accounts_that_may_owe(through=date(2026, 2, 10)) == sorted([first, second])
    assert accounts_that_may_owe(through=date(2026, 2, 10), account_ids=[second]) == [second]
