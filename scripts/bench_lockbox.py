"""Time ``lockbox_import`` on a large lockbox file (not a test; run it against a scratch database).

    export DATABASE_URL=sqlite:////tmp/lockbox.sqlite3 DJANGO_DEBUG=1
    .venv/bin/python manage.py migrate --noinput
    .venv/bin/python manage.py demo_bootstrap --demo 300
    .venv/bin/python scripts/bench_lockbox.py [--rows 400000] [--unmatched 0.05]

Writes a lockbox file of ``--rows`` checks cycling over the database's bills (each row the scan line its bill's
stub prints; ``--unmatched`` of them with no stub, for the exceptions queue), then times its import and a second
import of the same file (every row skipped). Prints the rows per second of each and the process's peak memory.
Each run uses a deposit date of its own, so it can be run again on the same database.
"""

import argparse
import os
import resource
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--unmatched", type=float, default=0.05)
    args = parser.parse_args()
    import django

    django.setup()
    from billing.models import Bill, Payment
    from core.clock import today
    from remittance.lockbox import lockbox_import
    from remittance.models import PaymentException

    bills = list(Bill.objects.values_list("account__account_no", "number"))
    if not bills:
        sys.exit("no bills in this database: run demo_bootstrap first")
    day = today() - timedelta(days=Payment.objects.filter(source="lockbox").values("paid_on").distinct().count())
    every = max(1, round(1 / args.unmatched)) if args.unmatched else 0
    lines = ["deposit_date,batch,item,amount,check_number,scan_line"]
    for n in range(args.rows):
        account_no, number = bills[n % len(bills)]
        stub = "" if every and n % every == 0 else f"{account_no}  {number}  0000001000  0000001100"
        lines.append(f"{day},{n // 1000},{n % 1000},10.00,{n},{stub}")
    file = ("\n".join(lines) + "\n").encode()
    print(f"{args.rows:,} checks over {len(bills):,} bills, {len(file) / 1e6:.1f} MB, deposit date {day}")
    for label in ("import", "again (all skipped)"):
        start = time.perf_counter()
        result = lockbox_import(file=file, as_of=today())
        took = time.perf_counter() - start
        print(f"{label}: {took:.1f} s, {args.rows / took:,.0f} rows/s — {result}")
    print(f"payments posted that day: {Payment.objects.filter(source='lockbox', paid_on=day).count():,}; "
          f"queued: {PaymentException.objects.filter(received_on=day).count():,}")
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
