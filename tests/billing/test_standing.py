"""Account standings (``billing.ledger.standing``): the open bills and credit kept between reads are those the
ledger's replay gives, whatever happened since they were worked out.

Ten Book 1 accounts of Mineola billed on 2026-02-01 (due 2026-03-01) for different consumption, paid in
part, in full, more than in full or not at all, some late; a returned check; the late charges assessed
through 2026-05-10.
"""

import random
from datetime import date
from decimal import Decimal
from unittest import mock

import pytest
from django.contrib.auth.models import User

from billing.ledger import standing
from billing.ledger.selectors import account_balances
from billing.ledger.standing import encode, only_open, open_balances, refresh_standings, standings_sample_check
from billing.models import AccountStanding, Payment
from billing.services.nightly import nightly_standings
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from reports.selectors import aging, relevy
from termination.selectors import delinquencies
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db
D = Decimal
THROUGH = date(2026, 5, 10)


@pytest.fixture
def village(mineola):
    accounts = []
    for n, gallons in enumerate((62_500, 20_000, 35_000, 80_000, 20_000, 51_000, 20_500, 64_000, 30_000, 99_999)):
        account, meter = account_with_meter(book=1, account_no=f"1-{n + 1:04d}")
        read(meter, date(2026, 1, 12), 1_000_000 + gallons)
        accounts.append(account)
    run("run_billing", "--date", "2026-02-01")
    rng = random.Random(7)
    for n, account in enumerate(accounts):
        total = account.bills.get().total
        share = (D(0), D("0.5"), D(1), D("1.2"))[n % 4]
        if share:
            payment_post(account_no=account.account_no, amount=(total.amount * share).quantize(D("0.01")),
                         paid_on=date(2026, 2 if share == 1 else rng.choice((2, 3, 4)), rng.randint(1, 28)), reference=f"CHK-{n}",
                         tender="check", check_number=str(n))
    payment_reverse(payment=Payment.objects.get(reference="CHK-2"), reversed_on=date(2026, 4, 15),
                    reason="returned", note="NSF", actor=User.objects.create_user("clerk", is_staff=True))
    run("assess_penalties", "--date", THROUGH.isoformat())
    return accounts


def _open(states):
    return {account_id: encode(state) for account_id, state in states.items()}


def _replayed(ids, through):
    return _open({account_id: only_open(state) for account_id, state in account_balances(ids, through=through).items()})


def test_standings_give_what_the_replay_gives_on_every_day(village):
    ids = [a.pk for a in village]
    assert refresh_standings() == len(ids)
    for through in (date(2026, 2, 1), date(2026, 3, 2), date(2026, 4, 14), date(2026, 4, 15), THROUGH,
                    date(2027, 1, 1)):
        assert _open(open_balances(ids, through=through)) == _replayed(ids, through), through
    # Each account's standing says what its replay leaves open: some owe, one has a credit, some are paid.
    kept = {s.account_id: s.state for s in AccountStanding.objects.all()}
    assert kept == _replayed(ids, date(2027, 1, 1))
    assert any(state["bills"] for state in kept.values()) and any(D(s["credit"]) > 0 for s in kept.values())
    assert any(not state["bills"] and D(state["credit"]) == 0 for state in kept.values())


def test_standings_that_hold_are_read_and_the_ledger_is_not(village):
    ids = [a.pk for a in village]
    refresh_standings()
    with mock.patch.object(standing, "entries_for_accounts", side_effect=AssertionError("replayed")):
        open_balances(ids, through=THROUGH)
    # A day before an account's latest entry: its standing is not the books of that day, so it is replayed.
    with mock.patch.object(standing, "entries_for_accounts", wraps=standing.entries_for_accounts) as loaded:
        open_balances(ids, through=date(2026, 4, 1))
    assert loaded.called


def test_an_entry_after_the_standing_makes_the_account_replayed_until_the_next_refresh(village):
    ids = [a.pk for a in village]
    refresh_standings()
    debtor = next(a for a in village if account_balances([a.pk], through=THROUGH)[a.pk].balance > 0)
    payment_post(account_no=debtor.account_no, amount=D("10.00"), paid_on=THROUGH, reference="LATE-1",
                 tender="cash")
    with mock.patch.object(standing, "entries_for_accounts", wraps=standing.entries_for_accounts) as loaded:
        assert _open(open_balances(ids, through=THROUGH)) == _replayed(ids, THROUGH)
    assert loaded.call_args.args[0] == [debtor.pk]
    assert refresh_standings() == 1 and refresh_standings() == 0
    assert _open(open_balances(ids, through=THROUGH)) == _replayed(ids, THROUGH)


def test_a_reversal_after_the_standing_is_seen(village):
    ids = [a.pk for a in village]
    refresh_standings()
    payment = Payment.objects.get(reference="CHK-3")  # paid in full
    payment_reverse(payment=payment, reversed_on=THROUGH, reason="returned", note="NSF",
                    actor=User.objects.get(username="clerk"))
    assert _open(open_balances(ids, through=THROUGH)) == _replayed(ids, THROUGH)
    assert open_balances([payment.account_id], through=THROUGH)[payment.account_id].balance > 0


def test_the_reports_are_the_same_with_standings_as_without(village):
    before = (aging(as_of=THROUGH), delinquencies(as_of=THROUGH), relevy(levy_on=THROUGH))
    refresh_standings()
    after = (aging(as_of=THROUGH), delinquencies(as_of=THROUGH), relevy(levy_on=THROUGH))
    assert after == before
    assert before[0].total == sum((s.balance for s in account_balances([a.pk for a in village],
                                                                        through=THROUGH).values()), D(0))


def test_a_standing_worked_out_under_another_payment_order_is_not_used(village):
    ids = [a.pk for a in village]
    refresh_standings()
    AccountStanding.objects.update(payment_order="penalties_first")
    with mock.patch.object(standing, "entries_for_accounts", wraps=standing.entries_for_accounts) as loaded:
        assert _open(open_balances(ids, through=THROUGH)) == _replayed(ids, THROUGH)
    assert sorted(loaded.call_args.args[0]) == sorted(ids)
    assert refresh_standings() == len(ids)


def test_the_nightly_sample_check_finds_a_standing_that_differs_from_the_replay_and_drops_it(village, caplog):
    ids = [a.pk for a in village]
    refresh_standings()
    assert standings_sample_check(sample=50) == {"standings_checked": 10, "standings_differing": 0,
                                                 "standings_differing_accounts": []}
    owing = next(s for s in AccountStanding.objects.order_by("account_id") if s.state["bills"])
    wrong = {**owing.state, "credit": "5.00"}
    AccountStanding.objects.filter(pk=owing.pk).update(state=wrong)
    assert _open(open_balances(ids, through=THROUGH)) != _replayed(ids, THROUGH)  # the kept figure is read
    with caplog.at_level("ERROR"):
        counts = nightly_standings(as_of=THROUGH)
    assert counts["standings_differing"] == 1 and counts["standings_differing_accounts"] == [owing.account_id]
    assert f"[{owing.account_id}]" in caplog.text
    # Dropped, then written anew by the next refresh: the books read right again.
    assert _open(open_balances(ids, through=THROUGH)) == _replayed(ids, THROUGH)
    assert refresh_standings() == 1 and standings_sample_check(sample=50)["standings_differing"] == 0


def test_with_the_fast_paths_off_no_standing_is_read(village, settings):
    ids = [a.pk for a in village]
    refresh_standings()
    AccountStanding.objects.update(state={"credit": "999.00", "bills": []})  # wrong, to see it is not read
    settings.BILLING_FAST_PATHS = False
    assert _open(open_balances(ids, through=THROUGH)) == _replayed(ids, THROUGH)
