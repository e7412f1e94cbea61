"""Benchmark: the admin's billing run preview (proof register) on a demo village, measured (not a test).

    export DJANGO_DEBUG=1 DATABASE_URL=sqlite:////tmp/preview3000.sqlite3
    .venv/bin/python manage.py migrate && .venv/bin/python manage.py setup_utility $PRESET --demo 3000  # PRESET: demo.DEMO_PRESET, or any in fixtures/presets
    .venv/bin/python scripts/bench_run_preview.py

Picks the busiest bill date (most accounts due) from a year ago to the preview's horizon, bills every
billing date of the twelve months before it (once; so the preview rates against real history: allowances,
averages for the high-usage hold), then asks for the start page and the preview page of that date as a
logged-in superuser through Django's test client. Prints seconds per page (first and best of ``--repeat``),
the queries, and how the preview's time splits between rating (``billing_run_proof``) and the rest.
"""

import argparse
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")  # development settings: a bench runs on a scratch database


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-history", action="store_true", help="do not bill the twelve months before")
    args = parser.parse_args()

    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from billing.models import Bill
    from billing.ordinance import billing_days_on
    from billing.runs.preview import PREVIEW_DAYS_AHEAD, _billing_date, _billing_days, billing_run_proof
    from core.commands import today
    from core.dates import add_months

    now = today()
    calendar = billing_days_on(now)
    horizon = now + timedelta(days=PREVIEW_DAYS_AHEAD)
    days = [d for d in _billing_days(calendar, start=horizon, step=-1) if d >= add_months(now, -12)]
    busiest = max((_billing_date(calendar, d) for d in days), key=lambda d: (d.accounts_due, d.on))
    print(f"busiest bill date: {busiest.on} ({busiest.what}): {busiest.accounts_due} accounts due")

    if not args.no_history:
        earlier = _billing_days(calendar, start=busiest.on - timedelta(days=1), step=-1)
        for day in sorted(d for d in earlier if d >= add_months(busiest.on, -12)):
            if not Bill.objects.filter(bill_date=day).exists():
                started = time.perf_counter()
                call_command("run_billing", "--date", day.isoformat(), "--no-progress", stdout=open(os.devnull, "w"))
                print(f"  history: billed {day} in {time.perf_counter() - started:.1f} s")
    if Bill.objects.filter(bill_date=busiest.on).exists():
        print(f"  note: {busiest.on} is partly billed already")

    user = User.objects.filter(is_superuser=True).first() or User.objects.create_superuser(
        "bench", "bench@example.org", "bench-only-password-9")
    client = Client()
    client.force_login(user)

    def timed(url: str) -> tuple[float, float, int, int]:
        times, queries, status = [], 0, 0
        for _ in range(max(args.repeat, 1)):
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                response = client.get(url)
                times.append(time.perf_counter() - started)
            queries, status = len(captured), response.status_code
        return times[0], min(times), queries, status

    start_url = reverse("admin:billing_billingrun_start")
    preview_url = reverse("admin:billing_billingrun_preview") + f"?run_on={busiest.on.isoformat()}"
    for name, url in (("start page", start_url), ("preview page", preview_url)):
        first, best, queries, status = timed(url)
        print(f"{name}: HTTP {status}, first {first:.2f} s, best {best:.2f} s, {queries} queries  ({url})")

    started = time.perf_counter()
    proof = billing_run_proof(run_on=busiest.on, today=now)
    rating = time.perf_counter() - started
    print(f"  of which rating (billing_run_proof): {rating:.2f} s for {proof.accounts_due} accounts due, "
          f"{proof.register.bills} bills, {len(proof.exceptions)} exceptions, {len(proof.holds)} holds, "
          f"total ${proof.register.total:,.2f}")


if __name__ == "__main__":
    main()
