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

REQUESTS = 10


def timed(client, url) -> tuple[float, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times = []
    for _ in range(REQUESTS):
        start = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - start)
        assert response.status_code == 200, (url, response.status_code)
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    return statistics.median(times), len(queries)


def busiest_account():
    """The account with the most ledger entries, and that number."""
    from django.db.models import Count

    from accounts.models import Account
    from billing.models import LedgerEntry

    busiest = (LedgerEntry.objects.values("account_id").annotate(n=Count("id")).order_by("-n").first())
    return Account.objects.select_related("owner").get(pk=busiest["account_id"]), busiest["n"]


def account_page_measure() -> dict:
    """Medians (seconds) and query counts of the busiest account's admin page and of the account list's
    search for its owner's surname, as a superuser through Django's test client."""
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from accounts.models import Account

    user = get_user_model().objects.filter(is_superuser=True).first()
    if user is None:
        user = get_user_model().objects.create_superuser("bench", password="x")  # noqa: S106
    client = Client()
    client.force_login(user)
    account, entries = busiest_account()
    page, page_queries = timed(client, reverse("admin:accounts_account_change", args=[account.pk]))
    surname = account.owner.name.split()[-1]
    search, search_queries = timed(client, reverse("admin:accounts_account_changelist") + f"?q={surname}")
    return {"accounts": Account.objects.count(), "account_no": account.account_no, "entries": entries,
            "page_median": page, "page_queries": page_queries, "surname": surname, "search_median": search,
            "search_queries": search_queries}


def main() -> None:
    import django

    django.setup()
    figures = account_page_measure()
    print(f"{figures['accounts']:,} accounts; busiest account {figures['account_no']} "
          f"({figures['entries']} ledger entries): account page median {figures['page_median'] * 1000:.0f} ms "
          f"over {REQUESTS} requests, {figures['page_queries']} queries")
    print(f"search '{figures['surname']}': median {figures['search_median'] * 1000:.0f} ms, "
          f"{figures['search_queries']} queries")


if __name__ == "__main__":
    main()
