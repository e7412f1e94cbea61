"""Time the penalties preview page on a demo database, as a superuser, the median of five loads.

    DATABASE_URL=sqlite:////tmp/penfast.sqlite3 DJANGO_DEBUG=1 .venv/bin/python scripts/penalty_preview_bench.py

Times the page for today and for the next few days with the shortcut (``penalty_candidates_since``) and with
every candidate planned, and says how many accounts each plans and whether the rows are the same. The
database needs the nightly job run for a recent day (``manage.py nightly``) for the shortcut to apply.
"""

import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.urls import reverse  # noqa: E402

from accounts.models import Account  # noqa: E402
from billing import penalty_selectors  # noqa: E402
from core.clock import today  # noqa: E402

RUNS = 5


def page_seconds(client: Client, url: str, on) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        response = client.get(url, {"on": on.isoformat()})
        times.append(time.perf_counter() - start)
        assert response.status_code == 200, response.status_code
    return statistics.median(times)


def main() -> None:
    setup_test_environment()
    client = Client()
    user = get_user_model().objects.filter(is_superuser=True).first()
    client.force_login(user)
    url = reverse("admin:billing_penalties_preview")
    last = getattr(penalty_selectors, "last_nightly_assessment", lambda: "not read")()
    print(f"{Account.objects.count()} accounts; last nightly assessment (day, step started): {last}")
    now = today()
    for ahead in (0, 1, 2, 7):
        on = now + timedelta(days=ahead)
        everyone = penalty_selectors.penalty_candidates(as_of=on)
        fast = page_seconds(client, url, on)
        if not hasattr(penalty_selectors, "penalty_candidates_since"):  # a version without the shortcut
            print(f"{on} (+{ahead}): {fast:.3f} s planning all {len(everyone)} candidates")
            continue
        since = penalty_selectors.penalty_candidates_since(as_of=on)
        rows = penalty_selectors.penalties_preview(as_of=on)
        with mock.patch.object(penalty_selectors, "penalty_candidates_since", return_value=None):
            full = page_seconds(client, url, on)
            full_rows = penalty_selectors.penalties_preview(as_of=on)
        planned = "all (no shortcut)" if since is None else len(since)
        print(f"{on} (+{ahead}): {fast:.3f} s planning {planned} of {len(everyone)} candidates; every candidate "
              f"{full:.3f} s; {len(rows)} rows, {'same' if rows == full_rows else 'DIFFERENT'} as the full plan")

if __name__ == "__main__":
    main()
