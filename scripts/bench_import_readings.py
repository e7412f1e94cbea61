"""Time ``manage.py import_readings`` on a large file (not a test; run it against a scratch database).

    createdb -h 127.0.0.1 -U postgres waterbilling_bench
    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/waterbilling_bench DJANGO_DEBUG=1
    .venv/bin/python manage.py migrate --noinput
    .venv/bin/python scripts/bench_import_readings.py [--meters 25000] [--readings 100000] [--existing 12]

Creates ``--meters`` accounts, each with an installed meter and ``--existing`` monthly readings already
on file (plain bulk inserts, no history: this is set-up, not the thing measured), writes a CSV of
``--readings`` new readings spread over those meters, then times the import and a second import of the
same file (every row skipped). Each run tags its rows, so it can be run again on the same database.
"""

import argparse
import csv
import os
import sys
import tempfile
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")  # development settings: a bench runs on a scratch database

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from accounts.models import Account, Customer, Premises  # noqa: E402
from core.commands import today  # noqa: E402
from meters.models import Installation, Meter, Reading  # noqa: E402

BATCH = 5000
DAYS_PER_READ = 30


def accounts_create(*, tag: str, count: int, existing: int, start) -> list[str]:
    """``count`` accounts with a meter installed on ``start`` and ``existing`` monthly readings."""
    serials = []
    with transaction.atomic():
        for first in range(0, count, BATCH):
            numbers = range(first, min(first + BATCH, count))
            owners = Customer.objects.bulk_create(
                [Customer(name=f"Bench owner {tag} {n}", mailing_address=f"{n} Bench Road\nMineola, NY 11501")
                 for n in numbers])
            premises = Premises.objects.bulk_create(
                [Premises(service_address=f"{n} Bench Road", sbl=f"{tag}-{n}") for n in numbers])
            accounts = Account.objects.bulk_create(
                [Account(account_no=f"{tag}-{n:06d}", book=1 + n % 10, category="one_two_family", premises=p,
                         owner=o, opened_on=start)
                 for n, p, o in zip(numbers, premises, owners, strict=True)])
            meters = Meter.objects.bulk_create(
                [Meter(serial=f"{tag}M{n:06d}", size="5/8", unit=Meter.Unit.GALLONS) for n in numbers])
            Installation.objects.bulk_create(
                [Installation(meter=m, account=a, installed_on=start)
                 for m, a in zip(meters, accounts, strict=True)])
            Reading.objects.bulk_create(
                [Reading(meter=m, read_on=start + timedelta(days=DAYS_PER_READ * k), value=1000 + 5000 * k,
                         source="install" if k == 0 else "manual")
                 for m in meters for k in range(existing)], batch_size=BATCH)
            serials.extend(m.serial for m in meters)
    return serials


def csv_write(path: Path, *, serials: list[str], readings: int, existing: int, start) -> None:
    per_meter = -(-readings // len(serials))
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["meter_serial", "read_date", "reading", "read_type"])
        written = 0
        for k in range(existing, existing + per_meter):
            for serial in serials:
                if written == readings:
                    return
                writer.writerow([serial, (start + timedelta(days=DAYS_PER_READ * k)).isoformat(),
                                 1000 + 5000 * k, "actual"])
                written += 1


def timed_import(path: Path, as_of) -> tuple[float, str]:
    out = StringIO()
    began = time.perf_counter()
    call_command("import_readings", str(path), "--date", as_of.isoformat(), "--no-progress", stdout=out)
    return time.perf_counter() - began, out.getvalue().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--meters", type=int, default=25_000)
    parser.add_argument("--readings", type=int, default=100_000)
    parser.add_argument("--existing", type=int, default=12, help="readings already on file per meter")
    args = parser.parse_args()

    as_of = today()
    per_meter = -(-args.readings // args.meters)
    start = as_of - timedelta(days=DAYS_PER_READ * (args.existing + per_meter))
    tag = f"B{int(time.time()) % 100_000:05d}"
    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}; tag {tag}")

    began = time.perf_counter()
    serials = accounts_create(tag=tag, count=args.meters, existing=args.existing, start=start)
    print(f"set-up: {args.meters:,} accounts and meters, {args.meters * args.existing:,} readings on file "
          f"in {time.perf_counter() - began:.1f} s")

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "readings.csv"
        csv_write(path, serials=serials, readings=args.readings, existing=args.existing, start=start)
        seconds, output = timed_import(path, as_of)
        print(f"import:   {output}")
        rate = args.readings / seconds
        print(f"          {args.readings:,} readings in {seconds:.1f} s = {rate:,.0f} rows/s")
        seconds, output = timed_import(path, as_of)
        print(f"re-import: {output}")
        print(f"          {args.readings:,} rows checked and skipped in {seconds:.1f} s "
              f"= {args.readings / seconds:,.0f} rows/s")


if __name__ == "__main__":
    main()
