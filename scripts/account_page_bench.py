"""How long the admin account page takes: the median of ten requests for the busiest account's page (the one
with the most ledger entries), as a superuser, with Django's test client.

    DJANGO_DEBUG=1 DATABASE_URL=sqlite:////tmp/acct3000.sqlite3 .venv/bin/python manage.py migrate
    DJANGO_DEBUG=1 DATABASE_URL=sqlite:////tmp/acct3000.sqlite3 .venv/bin/python manage.py demo_bootstrap --demo 3000
    DJANGO_DEBUG=1 DATABASE_URL=sqlite:////tmp/acct3000.sqlite3 .venv/bin/python scripts/account_page_bench.py

Also times the account list's search box (an owner's surname) the same way.
"""

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402

from accounts.models import Account  # noqa: E402
from billing.models import LedgerEntry  # noqa: E402

REQUESTS = 10


def timed(client, url) -> tuple[float, int]:
    times = []
    for _ in range(REQUESTS):
        start = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - start)
        assert response.status_code == 200, (url, response.status_code)
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    return statistics.median(times), len(queries)


def main() -> None:
    user = get_user_model().objects.filter(is_superuser=True).first()
    if user is None:
        user = get_user_model().objects.create_superuser("bench", password="x")  # noqa: S106
    client = Client()
    client.force_login(user)
    busiest = (LedgerEntry.objects.values("account_id").annotate(n=Count("id")).order_by("-n").first())
    account = Account.objects.select_related("owner").get(pk=busiest["account_id"])
    page, queries = timed(client, reverse("admin:accounts_account_change", args=[account.pk]))
    print(f"{Account.objects.count():,} accounts; busiest account {account.account_no} "
          f"({busiest['n']} ledger entries): account page median {page * 1000:.0f} ms over {REQUESTS} requests, "
          f"{queries} queries")
    surname = account.owner.name.split()[-1]
    search, queries = timed(client, reverse("admin:accounts_account_changelist") + f"?q={surname}")
    print(f"search '{surname}': median {search * 1000:.0f} ms, {queries} queries")


if __name__ == "__main__":
    main()
