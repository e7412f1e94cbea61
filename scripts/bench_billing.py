"""Benchmark: a billing run over a demo village, measured (not a test).

    createdb -h 127.0.0.1 -U postgres wb_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wb_bench .venv/bin/python scripts/bench_billing.py \\
        --accounts 100000 --workers 2

Migrates, installs the Mineola preset (or ``--file PRESET.toml``: a town's of two districts,
``tests/districts/town.toml``, spreads the accounts over them street by street) with N demo accounts (once;
reused on later runs), then bills
every billing date of the last twelve months in order — so later runs rate against real history
(allowances, averages for the high-usage hold) — with the chunks of each run shared by ``--workers``
processes, as Celery workers would take them. Prints, per run: bills, seconds, bills per second, and the
peak resident memory of the busiest worker. ``--fresh`` deletes earlier bills first.
"""

import argparse
import os
import resource
import sys
import time
from datetime import date
from multiprocessing import get_context
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from demo import DEMO_PRESET  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")  # development settings: a bench runs on a scratch database


def _worker_init():
    import django

    django.setup()


def _execute(chunk_id: int) -> int:
    from billing.runs.lifecycle import billing_run_chunk_execute

    billing_run_chunk_execute(chunk_id=chunk_id)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--accounts", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--as-of", default=None, help="the last day billed (default: today)")
    parser.add_argument("--fresh", action="store_true", help="delete earlier bills, runs and penalties first")
    parser.add_argument("--file", default=None, metavar="PRESET.toml",
                        help="install this preset file instead of the demo preset (a town: its districts)")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from accounts.models import Account
    from billing.models import Bill, BillingException, BillingRun, BillLine, LedgerEntry
    from core.commands import today

    as_of = date.fromisoformat(args.as_of) if args.as_of else today()
    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
    call_command("migrate", verbosity=0)
    have = Account.objects.count()
    if have < args.accounts:
        started = time.perf_counter()
        preset = ("--file", args.file) if args.file else (DEMO_PRESET,)
        call_command("setup_utility", *preset, "--demo", str(args.accounts - have), "--date", as_of.isoformat())
        print(f"demo: {args.accounts - have} accounts in {time.perf_counter() - started:.0f} s")
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # as autovacuum would soon after: the planner sees the village's real sizes
    if args.fresh:
        # TRUNCATE: the ledger and issued bills refuse DELETE by design.
        tables = [m._meta.db_table for m in (LedgerEntry, BillLine, Bill, BillingException, BillingRun)]
        with connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {', '.join(tables)} CASCADE")

    from ordinance.selectors import districts

    if districts():
        print(f"districts: {', '.join(districts())}")
    print(f"{'bill date':<12}{'bills':>8}{'seconds':>9}{'bills/s':>9}{'peak MB':>9}")
    billing_pool_measure(dates=twelve_months(as_of), workers=args.workers, on_month=_print_month)


def twelve_months(as_of: date) -> list[date]:
    """The first of each of the twelve months ending with ``as_of``'s, oldest first."""
    from core.dates import add_months

    first = add_months(as_of.replace(day=1), -11)
    return [add_months(first, k) for k in range(12)]


def _print_month(month: dict) -> None:
    print(f"{month['date']:<12}{month['bills']:>8}{month['seconds']:>9.2f}{month['bills_per_s']:>9.0f}"
          f"{month['peak_mb']:>9.0f}", flush=True)


def billing_pool_measure(*, dates: list[date], workers: int, chunk_size: int = 1000, on_month=None) -> dict:
    """Bill each date in order, the chunks of each run shared by ``workers`` spawned processes.

    Returns ``{"months": [{"date", "bills", "seconds", "bills_per_s", "peak_mb"}, ...]}``; ``on_month`` is
    called with each month's figures as soon as its run is done."""
    from django.db import connections

    from billing.runs.lifecycle import billing_run_create

    connections.close_all()
    context = get_context("spawn")
    months = []
    with context.Pool(workers, initializer=_worker_init) as pool:
        pool.map(abs, range(workers))  # wait until the workers are up: a worker is long-lived
        for run_on in dates:
            started = time.perf_counter()
            run = billing_run_create(run_on=run_on, chunk_size=chunk_size)
            chunk_ids = list(run.chunks.order_by("index").values_list("id", flat=True))
            peaks = list(pool.imap_unordered(_execute, chunk_ids)) or [0]
            elapsed = time.perf_counter() - started
            run.refresh_from_db()
            month = {"date": run_on.isoformat(), "bills": run.bills_created, "seconds": elapsed,
                     "bills_per_s": run.bills_created / elapsed if elapsed else 0, "peak_mb": max(peaks) / 1024}
            months.append(month)
            if on_month:
                on_month(month)
    return {"months": months}


if __name__ == "__main__":
    main()
