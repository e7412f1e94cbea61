"""Benchmark: penalty assessment over a demo village, measured (not a test).

    createdb -h 127.0.0.1 -U postgres wb_pen
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wb_pen .venv/bin/python scripts/bench_penalties.py \\
        --accounts 20000

Migrates, installs the Mineola preset with N demo accounts and bills the last two years (once; reused on
later runs), posts the demo payments, then times the assessments (``penalties_measure``): the catch-up of
every penalty due through the day before a night on which late charges fall due (the latest such night by
today, ``charge_night``), the same night again (nothing new), and that night as the nightly job assesses it.
``--fresh`` deletes the penalties first. Prints seconds, penalties posted and accounts looked at for each.
"""

import argparse
import os
import sys
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from demo import DEMO_PRESET  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")  # development settings: a bench runs on a scratch database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=20000)
    parser.add_argument("--night", default=None,
                        help="the night on which late charges fall due (default: the latest by today)")
    parser.add_argument("--fresh", action="store_true", help="delete earlier penalties first")
    parser.add_argument("--workers", type=int, default=2,
                        help="processes sharing the reconciliations of every account (assess_penalties --workers)")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from accounts.models import Account
    from core.clock import today

    call_command("migrate", verbosity=0)
    if not Account.objects.exists():
        from demo.payments import demo_payments_create

        started = time.perf_counter()
        quiet = open(os.devnull, "w")  # noqa: SIM115
        call_command("setup_utility", DEMO_PRESET, "--demo", str(args.accounts), stdout=quiet)
        last = date.fromisoformat(args.night) if args.night else today()
        for months_back in range(24, -1, -1):
            index = last.year * 12 + last.month - 1 - months_back
            call_command("run_billing", "--date", date(index // 12, index % 12 + 1, 1).isoformat(),
                         "--no-progress", stdout=quiet)
        demo_payments_create(as_of=charge_night(on_or_before=last) - timedelta(days=1))
        print(f"demo village of {args.accounts:,} accounts billed and paid in {time.perf_counter() - started:.1f} s")
    if args.fresh:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("ALTER TABLE billing_ledgerentry DISABLE TRIGGER USER")
            cursor.execute("DELETE FROM billing_ledgerentry WHERE kind IN ('penalty', 'penalty_correction')")
            if connection.vendor == "postgresql":
                cursor.execute("ALTER TABLE billing_ledgerentry ENABLE TRIGGER USER")

    night = charge_night(on_or_before=date.fromisoformat(args.night) if args.night else today())
    penalties_measure(night=night, on_night=_print_night, workers=args.workers)


def _print_night(night: dict) -> None:
    print(f"{night['label']:>17} ({night['date']}): {night['seconds']:7.1f} s, {night['posted']:,} penalties posted, "
          f"{night['accounts']:,} accounts charged")


def penalties_measure(*, night: date, on_night=None, workers: int = 2) -> dict:
    """Time the assessments: the catch-up of everything due through the day before ``night`` (``through``) and
    the same night again, each reconciling every account (``assess_penalties --workers``, the accounts shared
    by ``workers`` processes); then ``night``, a night on which late charges fall due (``charge_night``), as the
    nightly job assesses it (``nightly_penalties``: one process, looking only at the accounts the night of
    ``through`` left something to do on), and the same night again reconciling every account. Returns ``{"nights": [{"label", "date", "seconds", "posted", "accounts"},
    ...]}``; ``on_night`` is called with each as soon as it is done.

    Before the nightly job's night, the catch-up is recorded as the nightly assessment of ``through`` and
    what the demo recorded before it (its bills, entries, waivers and the utility) is dated a day earlier: on a real site the day's payments are recorded
    hours before the night, while here they are minutes old, and the nightly job takes a fact recorded
    within ``RECORDED_MARGIN`` of a night as recorded after it. The accounts' standings are then kept, as the
    night's last step does (untimed; its seconds are in the figures)."""
    from billing.ledger.standing import refresh_standings
    from billing.models import LedgerEntry
    from billing.services.penalties import penalties_assess_due

    through = night - timedelta(days=1)
    nights = []
    _vacuum()

    def timed(label: str, day: date, **options) -> dict:
        before = LedgerEntry.objects.filter(kind="penalty").count()
        started = time.perf_counter()
        result = penalties_assess_due(as_of=day, **options)
        seconds = time.perf_counter() - started
        posted = LedgerEntry.objects.filter(kind="penalty").count() - before
        night = {"label": label, "date": day.isoformat(), "seconds": seconds, "posted": posted,
                 "accounts": getattr(result, "accounts", 0)}
        nights.append(night)
        if on_night:
            on_night(night)
        return night

    from django.utils import timezone

    catch_up_started = timezone.now()
    timed("catch-up", through, workers=workers)
    timed("same night again", through, workers=workers)
    _as_a_night(through, started=catch_up_started)
    _vacuum()
    started = time.perf_counter()
    kept = refresh_standings()
    standings = {"label": "standings kept", "date": through.isoformat(), "seconds": time.perf_counter() - started,
                 "posted": 0, "accounts": kept}
    nights.append(standings)
    if on_night:
        on_night(standings)
    timed("next night", night, since_last_night=True)  # as ``nightly_penalties`` assesses it
    timed("next night, every account", night, workers=workers)
    return {"nights": nights}


def _vacuum() -> None:
    """Clear the ledger and the bills of the rows this bench deleted or rewrote (PostgreSQL): the ledger is
    append-only and an issued bill is final, so only a bench leaves dead rows in them for every read to step
    over."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM billing_ledgerentry, billing_bill")


def charge_night(*, on_or_before: date) -> date:
    """The latest day by ``on_or_before`` on which a late charge falls due on a live bill: a night with
    penalties to post, so the timed night is never an empty one. Refuses when no bill has such a day."""
    from billing.models import Bill
    from billing.ordinance import ordinance_on

    scheme = ordinance_on(on_or_before).penalties
    days = [due.on for bill_date, due_date in Bill.objects.exclude(status=Bill.Status.VOID).order_by()
            .values_list("bill_date", "due_date").distinct()
            for due in scheme.dates(bill_date=bill_date, due_date=due_date, through=on_or_before)]
    if not days:
        raise RuntimeError(f"no late charge falls due on any bill by {on_or_before}: there is no penalty night to "
                           "time (bill earlier months first)")
    return max(days)


def _as_a_night(day: date, *, started) -> None:
    """Record the catch-up as the nightly job's assessment of ``day`` (begun at ``started``), and date what
    was recorded before it a day earlier (see ``penalties_measure``)."""
    from django.db import connection

    from billing.penalties.shortcuts import NIGHTLY_PENALTIES_STEP
    from core.models import NightlyRun, NightlyStep

    run, _ = NightlyRun.objects.update_or_create(run_on=day, defaults={"status": "done", "finished_at": started})
    NightlyStep.objects.update_or_create(run=run, name=NIGHTLY_PENALTIES_STEP, defaults={
        "position": 2, "status": "done", "started_at": started, "finished_at": started})
    earlier = "- interval '1 day'" if connection.vendor == "postgresql" else None
    with connection.cursor() as cursor:
        for table, columns in (("billing_ledgerentry", ("created_at",)), ("billing_bill", ("created_at",)),
                               ("billing_penaltywaiver", ("requested_at", "decided_at")),
                               ("billing_utility", ("updated_at",))):
            for column in columns:
                moved = f"{column} {earlier}" if earlier else f"datetime({column}, '-1 day')"
                if connection.vendor == "postgresql":
                    cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
                # Names of our own tables and columns, not input.
                cursor.execute(f"UPDATE {table} SET {column} = {moved} WHERE {column} < %s", [started])  # noqa: S608
                if connection.vendor == "postgresql":
                    cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


if __name__ == "__main__":
    main()
