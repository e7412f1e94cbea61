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

BATCH = 5000
DAYS_PER_READ = 30


def accounts_create(*, tag: str, count: int, existing: int, start) -> list[str]:
    """``count`` accounts with a meter installed on ``start`` and ``existing`` monthly readings."""
    from django.db import transaction

    from accounts.models import Account, Customer, Premises
    from meters.models import Installation, Meter, Reading

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
    from django.core.management import call_command

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

    import django

    django.setup()
    import_measure(meters=args.meters, readings=args.readings, existing=args.existing, say=print)


def import_measure(*, meters: int = 25_000, readings: int = 100_000, existing: int = 12, say=None,
                   mark=None) -> dict:
    """Set up ``meters`` tagged accounts, then time importing ``readings`` new readings and importing the
    same file again. Returns ``tag``, ``setup_seconds``, ``readings``, ``seconds``, ``rows_per_s``,
    ``output``, ``reimport_seconds``, ``reimport_rows_per_s``, ``reimport_output``; ``say`` gets the lines
    the script prints, ``mark`` is called with "import" just before the timed import and "imported" after."""
    from django.db import connection

    from core.commands import today

    say = say or (lambda line: None)
    mark = mark or (lambda point: None)
    as_of = today()
    per_meter = -(-readings // meters)
    start = as_of - timedelta(days=DAYS_PER_READ * (existing + per_meter))
    tag = f"B{int(time.time()) % 100_000:05d}"
    say(f"database: {connection.vendor} {connection.settings_dict['NAME']}; tag {tag}")

    began = time.perf_counter()
    serials = accounts_create(tag=tag, count=meters, existing=existing, start=start)
    setup_seconds = time.perf_counter() - began
    say(f"set-up: {meters:,} accounts and meters, {meters * existing:,} readings on file "
        f"in {setup_seconds:.1f} s")

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "readings.csv"
        csv_write(path, serials=serials, readings=readings, existing=existing, start=start)
        mark("import")
        seconds, output = timed_import(path, as_of)
        mark("imported")
        say(f"import:   {output}")
        rate = readings / seconds
        say(f"          {readings:,} readings in {seconds:.1f} s = {rate:,.0f} rows/s")
        again, again_output = timed_import(path, as_of)
        say(f"re-import: {again_output}")
        say(f"          {readings:,} rows checked and skipped in {again:.1f} s "
            f"= {readings / again:,.0f} rows/s")
    return {"tag": tag, "setup_seconds": setup_seconds, "readings": readings, "seconds": seconds,
            "rows_per_s": rate, "output": output, "reimport_seconds": again,
            "reimport_rows_per_s": readings / again, "reimport_output": again_output}


if __name__ == "__main__":
    main()
