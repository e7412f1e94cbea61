"""Conversion at scale: a village's old-system export of N accounts — open items with two years of past bills and
payments — checked, posted, reconciled and rolled back, each step timed, on the database DATABASE_URL names
(emptied first: use a scratch PostgreSQL database).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wb_bench_conversion \\
        .venv/bin/python scripts/bench_conversion.py --accounts 100000

Prints one line per step and a JSON line (``RESULT {...}``) that ``scripts/bench.py`` reads. The accounts are
made untimed (owners, premises and accounts only: a conversion reads nothing else of them); the export is
``conversion.legacy`` 's, the one ``convert demo-export`` writes (accounts without meters are billed twice a
year under Mineola's calendar: four past bills each).
"""

import argparse
import io
import json
import random
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from demo import DEMO_PRESET  # noqa: E402

CUTOVER = date(2026, 6, 15)
TODAY = date(2026, 7, 1)


def accounts_make(count: int) -> None:
    """``count`` accounts with their owners and premises, written with COPY (untimed)."""
    import uuid

    from accounts.models import Account, Customer, Premises
    from core.db import copy_rows, reserve_ids

    rng = random.Random(45)
    owners, places = reserve_ids(Customer, count), reserve_ids(Premises, count)
    copy_rows(Customer, ("id", "name", "mailing_address", "email", "phone"),
              [(pk, f"Owner {n}", f"{n} Main Street\nMineola, NY 11501", "", "") for n, pk in enumerate(owners)])
    copy_rows(Premises, ("id", "service_address", "sbl", "use_category"),
              [(pk, f"{n} Main Street", "", "residential") for n, pk in enumerate(places)])
    copy_rows(Account, ("account_no", "public_id", "access_code", "book", "category", "premises_id", "owner_id",
                        "status", "paperless", "sprinkler_supply_inches", "rate_fields"),
              [(f"{1 + n % 4}-{n:06d}", uuid.uuid4(), f"{rng.randrange(10**8):08d}", 1 + n % 4, "one_two_family",
                places[n], owners[n], "active", False, "", "{}") for n in range(count)])


def measure(count: int) -> dict:
    from django.core.management import call_command
    from django.db import connection

    from conversion.legacy import legacy_export
    from conversion.posting import conversion_post, conversion_read, conversion_rollback
    from conversion.reconcile import reconciliation

    call_command("migrate", verbosity=0)
    call_command("setup_utility", DEMO_PRESET, "--date", "2026-01-01", stdout=io.StringIO())
    accounts_make(count)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    legacy = legacy_export(cutover=CUTOVER, seed=45)
    export, files = legacy.opening.encode(), {"bills": legacy.history.encode(), "payments": legacy.payments.encode(),
                                              "devices": legacy.devices.encode(),
                                              "contacts": legacy.contacts.encode()}
    figures = {"accounts": count, "rows": export.count(b"\n") - 1, "history_rows": files["bills"].count(b"\n") - 1,
               "payment_rows": files["payments"].count(b"\n") - 1, "devices": files["devices"].count(b"\n") - 1,
               "contacts": files["contacts"].count(b"\n") - 1}
    started = time.perf_counter()
    checked, history = conversion_read(export, as_of=CUTOVER.replace(day=14), **files)
    figures["check_s"] = time.perf_counter() - started
    figures["converted_accounts"], figures["open_bills"] = checked.accounts, checked.bills
    figures["past_bills"] = len(history.bills)
    started = time.perf_counter()
    posted = conversion_post(export, cutover=CUTOVER, today=TODAY, **files)
    figures["post_s"] = time.perf_counter() - started
    started = time.perf_counter()
    result = reconciliation(cutover=CUTOVER)
    figures["reconcile_s"] = time.perf_counter() - started
    figures["differences"] = len(result.differences)
    started = time.perf_counter()
    conversion_rollback(posted.batch.pk)
    figures["rollback_s"] = time.perf_counter() - started
    figures["convert_s"] = figures["post_s"] + figures["reconcile_s"]
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=100_000)
    args = parser.parse_args()
    from bench_setup import scratch_django

    if not scratch_django("bench_conversion"):
        return 2
    figures = measure(args.accounts)
    print(f"{figures['accounts']:,} accounts: {figures['rows']:,} open items ({figures['converted_accounts']:,} accounts "
          f"owing, {figures['open_bills']:,} open bills), {figures['past_bills']:,} past bills in "
          f"{figures['history_rows']:,} rows, {figures['payment_rows']:,} past payments, {figures['devices']:,} backflow "
          f"devices, {figures['contacts']:,} e-mail addresses and paperless choices")
    print(f"  check {figures['check_s']:.1f} s, post {figures['post_s']:.1f} s, reconcile {figures['reconcile_s']:.1f} s "
          f"({figures['differences']} differences), rollback {figures['rollback_s']:.1f} s")
    print("RESULT " + json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
