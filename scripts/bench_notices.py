"""The nightly notices at scale: a demo village of N accounts billed for a month (untimed), then the day's notices
decided and queued (sending is the workers' job), on the database DATABASE_URL names (emptied first: use a scratch
PostgreSQL database).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wb_bench_notices \\
        .venv/bin/python scripts/bench_notices.py --accounts 100000

The days measured, as the nightly job's ``customer_notices`` step does them: the bills ready the day they are
issued (the demo village's e-mail addresses and paperless accounts as made), the reminders the office's 7 days before
the month's due date, and the late notices the day after it (the bills unpaid: the demo village pays nothing). Then
each day again (nothing new: once). Then a worker's sending of every e-mail and text queued (to Django's and the
texts' in-memory outboxes, so the provider's own time is not counted): each claimed in the database, what it reports
checked again against the ledger, sent and its try recorded. Prints one line per day, one for the sending, and a JSON
line (``RESULT {...}``).
"""

import argparse
import io
import json
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BILL_DATE = date(2026, 11, 1)  # due 2026-12-01 under Mineola's calendar
SOON = date(2026, 11, 24)
LATE = date(2026, 12, 2)
DAYS = (("ready", BILL_DATE), ("soon", SOON), ("late", LATE))


def measure(accounts: int) -> dict:
    from django.core.management import call_command

    from billing.models import Bill
    from notices.models import CustomerNotice
    from notices.receivers import on_notices_queued
    from notices.reminders import nightly_customer_notices
    from notices.signals import notices_queued

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    call_command("setup_utility", "mineola", "--demo", str(accounts), "--date", "2026-12-06", stdout=io.StringIO())
    call_command("run_billing", "--date", BILL_DATE.isoformat(), "--no-progress", stdout=io.StringIO())
    figures = {"accounts": accounts, "bills": Bill.objects.filter(bill_date=BILL_DATE).count(),
               "setup_s": round(time.perf_counter() - started, 1)}
    # Queued, not sent: the worker's sending is not the nightly step's time.
    notices_queued.disconnect(on_notices_queued, dispatch_uid="notices.send_queued")
    for name, day in DAYS:
        started = time.perf_counter()
        counts = nightly_customer_notices(as_of=day)
        figures[f"{name}_s"] = round(time.perf_counter() - started, 2)
        figures[f"{name}_decided"], figures[f"{name}_given"] = counts["reminders_decided"], counts["reminders_given"]
        started = time.perf_counter()
        again = nightly_customer_notices(as_of=day)
        figures[f"{name}_again_s"] = round(time.perf_counter() - started, 2)
        figures[f"{name}_again_given"] = again["reminders_given"]
    figures["rows"] = CustomerNotice.objects.count()
    from django.conf import settings
    from django.utils import timezone

    from notices.services import notices_send_waiting, quiet_until

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.SMS_BACKEND = "notices.sms.LocmemBackend"
    started = time.perf_counter()
    figures["sent"] = notices_send_waiting(now=quiet_until() or timezone.now())  # out of the quiet hours
    figures["send_s"] = round(time.perf_counter() - started, 1)
    figures["withdrawn"] = CustomerNotice.objects.filter(withdrawn_at__isnull=False).count()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=100_000)
    args = parser.parse_args()
    from bench_setup import scratch_django

    if not scratch_django("bench_notices"):
        return 2
    f = measure(args.accounts)
    print(f"{f['accounts']:,} accounts, {f['bills']:,} bills dated {BILL_DATE} (setup {f['setup_s']} s, untimed)")
    for name, day in DAYS:
        rate = f[f"{name}_given"] / f[f"{name}_s"] if f[f"{name}_s"] else 0
        print(f"  {day} ({name}): {f[f'{name}_decided']:,} decided, {f[f'{name}_given']:,} given and queued in "
              f"{f[f'{name}_s']} s ({rate:,.0f} a second); again {f[f'{name}_again_s']} s, "
              f"{f[f'{name}_again_given']} new")
    print(f"  sending every e-mail and text queued: {f['sent']:,} sent, {f['withdrawn']:,} withdrawn, in "
          f"{f['send_s']} s ({f['sent'] / max(f['send_s'], 0.1):,.0f} a second; the provider's own time not counted)")
    print("RESULT " + json.dumps(f))
    return 0


if __name__ == "__main__":
    sys.exit(main())
