"""Benchmark: how long each admin page takes on a demo database (not a test).

    export DJANGO_DEBUG=1 DATABASE_URL=sqlite:////tmp/dash3000.sqlite3
    .venv/bin/python manage.py migrate
    .venv/bin/python manage.py demo_bootstrap --demo 3000
    .venv/bin/python scripts/admin_pages_bench.py [--repeat 5] [--only SUBSTRING]

Logs in a superuser (``bench``, made if missing) with Django's test client and requests, ``--repeat``
times each: the admin home (the dashboard), every registered model's list, the account page of the
busiest account (the most ledger entries), that account's latest bill, the Reports page and each report
shown as a table, the termination case board and the backflow reports. Prints the median milliseconds and
the number of queries of each page, and flags those over half a second.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")  # development settings: a bench runs on a scratch database

LIMIT_MS = 500


def _pages() -> list[tuple[str, str]]:
    from django.contrib import admin
    from django.db.models import Count
    from django.urls import NoReverseMatch, reverse

    from accounts.models import Account
    from billing.models import Bill
    from reports.catalog import REPORTS

    pages = [("admin home (dashboard)", reverse("admin:index"))]
    for model in sorted(admin.site._registry, key=lambda m: (m._meta.app_label, m._meta.model_name)):
        opts = model._meta
        try:
            pages.append((f"list: {opts.app_label}.{opts.model_name}",
                          reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")))
        except NoReverseMatch:
            continue
    busiest = (Account.objects.annotate(entries=Count("ledger")).order_by("-entries", "id").first())
    if busiest is not None:
        pages.append((f"account page ({busiest.account_no})", reverse("admin:accounts_account_change",
                                                                     args=[busiest.pk])))
        bill = Bill.objects.filter(account=busiest).order_by("-bill_date", "-id").first()
        if bill is not None:
            pages.append((f"bill page ({bill.number})", reverse("admin:billing_bill_change", args=[bill.pk])))
    pages.append(("reports page", reverse("admin:reports")))
    for name in REPORTS:
        pages.append((f"report: {name}", f"{reverse('admin:reports')}?report={name}&format=view"))
    for label, name in (("termination case board", "admin:termination_terminationcase_board"),
                        ("termination delinquency list", "admin:termination_terminationcase_delinquent"),
                        ("backflow reports", "admin:backflow_device_reports"),
                        ("backflow noncompliance", "admin:backflow_compliancenotice_noncompliance"),
                        ("billing run start", "admin:billing_billingrun_start")):
        try:
            pages.append((label, reverse(name)))
        except NoReverseMatch:
            continue
    return pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="requests per page (the median is shown)")
    parser.add_argument("--only", default="", help="only the pages whose label contains this")
    args = parser.parse_args()

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"is_staff": True, "is_superuser": True, "email": "bench@example.org"})
    client = Client()
    client.force_login(user)
    rows, slow = [], 0
    for label, url in _pages():
        if args.only and args.only not in label:
            continue
        times, cpu, queries, status = [], [], 0, 0
        for _ in range(args.repeat):
            with CaptureQueriesContext(connection) as captured:
                started, started_cpu = time.perf_counter(), time.process_time()
                response = client.get(url)
                if response.streaming:
                    b"".join(response.streaming_content)
                times.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - started_cpu) * 1000)
            queries, status = len(captured.captured_queries), response.status_code
        median, median_cpu = statistics.median(times), statistics.median(cpu)
        flag = "SLOW" if median > LIMIT_MS or status != 200 else ""
        slow += bool(flag)
        rows.append((label, median, median_cpu, queries, status, flag))
        print(f"{label:<52} {median:>8.0f} ms {median_cpu:>8.0f} ms CPU {queries:>5} queries  {status} {flag}",
              flush=True)
    print(f"\n{len(rows)} pages, {slow} over {LIMIT_MS} ms (or not 200).")
    print("\n| page | median ms | CPU ms | queries |\n|---|---:|---:|---:|")
    for label, median, median_cpu, queries, _status, flag in rows:
        print(f"| {label}{' (**' + flag.lower() + '**)' if flag else ''} | {median:.0f} | {median_cpu:.0f} | {queries} |")


if __name__ == "__main__":
    main()
