"""The fast paths give the same books as the slow ones, on a few hundred accounts with random histories.

Two hundred Mineola accounts of Book 1, billed 2026-02-01 (due 2026-03-01) for random consumption; each paid
nothing, in part, in full or more than in full, on a random day before or after the due date, some in two
payments; a few checks returned. The nightly job of 2026-04-01 assesses the late charges and keeps each
account's standing. Then the kept standings must give what replaying every ledger gives (on the night and
after it), the reports must be the same with them as without, and the penalties preview, which carries
unchanged accounts forward from their standings, must be the full plan's, row for row, and what
``assess_penalties`` then posts.
"""

import random
from datetime import date, timedelta
from decimal import Decimal
from unittest import mock

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import override_settings

from billing.ledger.selectors import account_balances
from billing.ledger.standing import encode, only_open, open_balances, refresh_standings
from billing.models import AccountStanding, LedgerEntry, Payment
from billing.penalties import selectors as penalty_selectors
from billing.penalties import shortcuts as penalty_shortcuts
from billing.penalties.selectors import penalties_preview, penalty_candidates
from billing.services import penalties as services_penalties
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from reports.selectors import aging, delinquency, relevy
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db
D = Decimal
NIGHT = date(2026, 4, 1)
ACCOUNTS = 200


@pytest.fixture(autouse=True)
def no_margin(monkeypatch):
    """Everything here happens within seconds: what is done before the nightly job counts as before it."""
    monkeypatch.setattr(penalty_shortcuts, "RECORDED_MARGIN", timedelta(0))


def village(seed: int, *, night: bool = True) -> list:
    rng = random.Random(seed)
    accounts = []
    for n in range(ACCOUNTS):
        account, meter = account_with_meter(book=1, account_no=f"1-{n + 1:04d}")
        read(meter, date(2026, 1, 12), 1_000_000 + rng.choice((0, 5_000, 20_000, rng.randint(20_001, 150_000))))
        accounts.append(account)
    run("run_billing", "--date", "2026-02-01")
    clerk = User.objects.create_user("clerk", is_staff=True)
    for n, account in enumerate(accounts):
        total = account.bills.get().total.amount
        share = rng.choice((D(0), D("0.3"), D("0.5"), D(1), D(1), D("1.2")))
        if not share:
            continue
        parts = [share] if rng.random() < 0.7 else [share / 2, share / 2]
        for k, part in enumerate(parts):
            paid_on = date(2026, 2, 1) + timedelta(days=rng.randint(5, 58))  # up to 2026-03-31
            payment_post(account_no=account.account_no, amount=(total * part).quantize(D("0.01")), paid_on=paid_on,
                         reference=f"P-{n}-{k}", tender="check", check_number=f"{n}{k}")
    for payment in rng.sample(list(Payment.objects.all()), 5):
        payment_reverse(payment=payment, reversed_on=min(payment.paid_on + timedelta(days=10), NIGHT),
                        reason="returned", note="NSF", actor=clerk)
    if night:
        call_command("nightly", "--date", NIGHT.isoformat(), stdout=open("/dev/null", "w"))
        assert AccountStanding.objects.count() == ACCOUNTS
    return accounts


def replayed(ids, through):
    return {a: encode(only_open(state)) for a, state in account_balances(ids, through=through).items()}


def kept(ids, through):
    return {a: encode(state) for a, state in open_balances(ids, through=through).items()}


def full_preview(on: date):
    with mock.patch.object(penalty_selectors, "penalty_candidates_split", return_value=None):
        return penalties_preview(as_of=on)


@pytest.mark.long(65)
@pytest.mark.parametrize("seed", [1, 2])
def test_kept_standings_reports_and_the_carried_preview_are_the_slow_paths_books(mineola, seed):
    accounts = village(seed)
    ids = [a.pk for a in accounts]
    for through in (NIGHT, date(2026, 4, 20), date(2026, 6, 1)):
        assert kept(ids, through) == replayed(ids, through)
    # The reports read the standings; without them (every ledger replayed) they are the same.
    with_standings = (aging(as_of=NIGHT), delinquency(as_of=NIGHT), relevy(levy_on=NIGHT))
    AccountStanding.objects.all().delete()
    without = (aging(as_of=NIGHT), delinquency(as_of=NIGHT), relevy(levy_on=NIGHT))
    assert with_standings == without
    assert refresh_standings() == ACCOUNTS
    # Some accounts owe, some are paid up, some have a credit: the comparison is not of empty books.
    balances = [state.balance for state in account_balances(ids, through=NIGHT).values()]
    assert any(b > 0 for b in balances) and any(b == 0 for b in balances) and any(b < 0 for b in balances)

    # A payment after the night: its account is replayed, the others carried forward.
    debtor = next(a for a in accounts if account_balances([a.pk], through=NIGHT)[a.pk].balance > 10)
    payment_post(account_no=debtor.account_no, amount=D("10.00"), paid_on=NIGHT, reference="AFTER", tender="cash")
    for on in (date(2026, 4, 2), date(2026, 4, 15), date(2026, 5, 1)):
        rows = penalties_preview(as_of=on)
        assert rows == full_preview(on), on
    assert any(row.account_no == debtor.account_no for row in rows)
    # With every fast path off (the schemes asked only their dates and amounts, no standing read, every account
    # planned in full), the same rows.
    with override_settings(BILLING_FAST_PATHS=False):
        assert penalties_preview(as_of=date(2026, 5, 1)) == rows
        assert kept(ids, date(2026, 5, 1)) == replayed(ids, date(2026, 5, 1))
    # And what the preview of the last day shows is what the assessment posts.
    before = set(LedgerEntry.objects.filter(kind__in=("penalty", "penalty_correction")).values_list("id", flat=True))
    run("assess_penalties", "--date", "2026-05-01")
    posted = sorted((e.account.account_no, e.posted_on, e.amount.amount) for e in LedgerEntry.objects.filter(
        kind__in=("penalty", "penalty_correction")).exclude(id__in=before).select_related("account"))
    assert posted == sorted((r.account_no, r.day, r.amount) for r in rows)
    assert kept(ids, date(2026, 5, 1)) == replayed(ids, date(2026, 5, 1))


def test_nightly_runs_day_by_day_leave_nothing_for_a_full_reconciliation(mineola, monkeypatch):
    """The nightly job looks only at the accounts the last night left something to do on and carries the others
    forward: night after night, with payments recorded between the nights (some dated days back), it posts
    exactly what reconciling every account would; at the end a full reconciliation finds nothing to post."""
    accounts = village(3, night=False)
    rng = random.Random(3)
    carried = []
    real_carry = services_penalties.penalties_carry

    def carry(account_ids, **kwargs):
        carried.extend(account_ids)
        return real_carry(account_ids, **kwargs)

    monkeypatch.setattr(services_penalties, "penalties_carry", carry)
    monkeypatch.setattr(settings, "BILL_PDFS_ON_ISSUE", False)
    day, last = date(2026, 3, 1), date(2026, 5, 3)
    while day <= last:
        for account in rng.sample(accounts, 3):
            owed = account_balances([account.pk], through=day)[account.pk].balance
            if owed > 0:
                payment_post(account_no=account.account_no, amount=min(owed, D("40.00")),
                             paid_on=day - timedelta(days=rng.choice((0, 0, 3, 12))), reference=f"N-{day}-{account.pk}",
                             tender="cash")
        with mock.patch("billing.services.nightly.bill_pdfs_render_pending", return_value=0):
            call_command("nightly", "--date", day.isoformat(), stdout=open("/dev/null", "w"))
        day += timedelta(days=1)
    assert carried  # the shortcut was taken
    assert penalty_selectors.penalties_plan(through=dict.fromkeys(penalty_candidates(as_of=last), last)) == []
    assert LedgerEntry.objects.filter(kind="penalty").count() > ACCOUNTS  # 5% and 1% charges were posted
