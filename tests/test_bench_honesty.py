"""`make bench` cannot flatter: a target stated for 100,000 accounts is marked met only at 100,000 (○ below it,
✗ when missed at any size), and the penalty night it times is always one on which late charges fall due."""

import sys
from datetime import date, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from billing.models import Bill, LedgerEntry
from billing.ordinance import ordinance_on
from tests.billing.test_pdf import run, worked_example_account

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from bench import _mark  # noqa: E402
from bench_penalties import charge_night  # noqa: E402
from bench_setup import SCALE, Bench  # noqa: E402


def bench_of(accounts: int) -> Bench:
    bench = Bench.__new__(Bench)  # the marks need only the size, not the bench's database
    bench.args = SimpleNamespace(accounts=accounts)
    return bench


def marked(bench: Bench, ok: bool) -> str:
    return _mark({"met": bench.met(ok), "target": "< 60 s", "value": 1.0})


def test_a_target_is_met_only_at_the_size_it_is_stated_for():
    assert SCALE == 100_000
    assert marked(bench_of(SCALE), True) == "✓ "
    assert marked(bench_of(SCALE - 1), True) == "○ "
    assert marked(bench_of(2_000), True) == "○ "
    assert marked(bench_of(2_000), False) == marked(bench_of(SCALE), False) == "✗ "


@pytest.mark.django_db
def test_the_timed_penalty_night_is_one_on_which_charges_fall_due(mineola):
    worked_example_account()
    run("run_billing", "--date", "2026-02-01")
    by = date(2026, 7, 31)
    night = charge_night(on_or_before=by)
    bill = Bill.objects.get()
    days = [due.on for due in ordinance_on(by).penalties.dates(bill_date=bill.bill_date, due_date=bill.due_date,
                                                                through=by)]
    assert days and night == max(days) and night <= by

    run("assess_penalties", "--date", (night - timedelta(days=1)).isoformat())
    before = LedgerEntry.objects.filter(kind="penalty").count()
    run("assess_penalties", "--date", night.isoformat())
    assert LedgerEntry.objects.filter(kind="penalty").count() > before, "the timed night posted no late charge"


@pytest.mark.django_db
def test_no_penalty_night_without_a_bill_is_refused(mineola):
    with pytest.raises(RuntimeError, match="no late charge falls due"):
        charge_night(on_or_before=date(2026, 7, 31))


def test_every_piece_of_make_bench_runs():
    """A piece written but left off the list would never run, and its figure never be checked."""
    from bench import PIECE_RUNNERS
    from bench_setup import PIECES

    assert list(PIECE_RUNNERS) == list(PIECES)
