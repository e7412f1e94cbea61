"""Time the penalties preview page on a demo database, as a superuser, the median of five loads.

    DATABASE_URL=sqlite:////tmp/penfast.sqlite3 DJANGO_DEBUG=1 .venv/bin/python scripts/penalty_preview_bench.py

Times the page for today and for the next few days with the shortcut (``penalty_candidates_since``) and with
every candidate planned, and says how many accounts each plans and whether the rows are the same; then
today's page after 100 payments at the counter since the night (rolled back). The
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
from billing.penalties import selectors as penalty_selectors  # noqa: E402

try:
    from billing.penalties import shortcuts as shortcuts  # noqa: E402
except ImportError:  # a version before the shortcuts had a module of their own
    shortcuts = penalty_selectors
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
    last = getattr(shortcuts, "last_nightly_assessment", lambda: "not read")()
    print(f"{Account.objects.count()} accounts; last nightly assessment (day, step started): {last}")
    now = today()
    for ahead in (0, 1, 2, 7):
        on = now + timedelta(days=ahead)
        everyone = penalty_selectors.penalty_candidates(as_of=on)
        fast = page_seconds(client, url, on)
        if not hasattr(shortcuts, "penalty_candidates_since"):  # a version without the shortcut
            print(f"{on} (+{ahead}): {fast:.3f} s planning all {len(everyone)} candidates")
            continue
        since = shortcuts.penalty_candidates_since(as_of=on)
        rows = penalty_selectors.penalties_preview(as_of=on)
        with mock.patch.object(penalty_selectors, "penalty_candidates_split", return_value=None):
            full = page_seconds(client, url, on)
            every = penalty_selectors.penalties_preview(as_of=on)
        planned = "all (no shortcut)" if since is None else len(since)
        print(f"{on} (+{ahead}): {fast:.3f} s planning {planned} of {len(everyone)} candidates; every candidate "
              f"{full:.3f} s; {len(rows)} rows, {'same' if rows == every else 'DIFFERENT'} as the full plan")
    after_a_day_at_the_counter(client, url)

def after_a_day_at_the_counter(client: Client, url: str, payments: int = 100) -> None:
    """Today's page after the counter took ``payments`` payments since the night (rolled back afterwards)."""
    if not hasattr(shortcuts, "penalty_candidates_since"):
        return
    from decimal import Decimal

    from django.db import transaction

    from billing.services.payments import payment_post

    now = today()
    numbers = list(Account.objects.filter(id__in=penalty_selectors.penalty_candidates(as_of=now)[:payments])
                   .values_list("account_no", flat=True))
    with transaction.atomic():
        for n, account_no in enumerate(numbers):
            payment_post(account_no=account_no, amount=Decimal("25.00"), paid_on=now, reference=f"BENCH-{n}",
                         tender="cash")
        since = shortcuts.penalty_candidates_since(as_of=now)
        fast = page_seconds(client, url, now)
        same = penalty_selectors.penalties_preview(as_of=now) == full_rows(now)
        transaction.set_rollback(True)
    print(f"{now} after {len(numbers)} payments at the counter: {fast:.3f} s planning {len(since)} accounts; "
          f"{'same' if same else 'DIFFERENT'} as the full plan")


def full_rows(on):
    with mock.patch.object(penalty_selectors, "penalty_candidates_split", return_value=None):
        return penalty_selectors.penalties_preview(as_of=on)


if __name__ == "__main__":
    main()
