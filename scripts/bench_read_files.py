"""Meter systems' files at scale, on the database DATABASE_URL names (a scratch PostgreSQL database whose name contains
'bench': it is emptied first).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wb_bench_readfiles \\
        .venv/bin/python scripts/bench_read_files.py --meters 100000

Sets up ``--meters`` accounts, each with a meter and two readings (untimed; ``bench_import_readings``' set-up), then
times, as ``import_readings FILE --mapping M`` does them:

* a handheld's fixed-width route file of one register read per meter (``handheld_fixed``);
* an AMI head-end's 30 days of daily reads for every meter (``ami_daily_csv``: 3,000,000 lines for 100,000 meters),
  crossing a month's end, so each meter's month-end register is recorded as a reading too.

The work the import hands to workers after it commits (usage alerts) is not counted. Prints a line per file, the
size the daily reads take on disk, and a JSON line (``RESULT {...}``).
"""

import argparse
import io
import json
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

START = date(2025, 10, 1)  # the meters' installation and first reading; the second 30 days on
REGISTER_ON = date(2026, 10, 1)  # the handheld's read
# What each register shows then: the 5,000 gal a month the set-up's two readings show, kept up (inside the range
# expected, as most reads are).
REGISTER = 6000 + 5000 * (REGISTER_ON - START - timedelta(days=30)).days // 300 * 10
DAILY_FROM = date(2026, 10, 17)  # 30 days to Nov 15: October's end is in the file


def handheld_file(path: Path, serials: list[str]) -> None:
    with path.open("w") as out:
        out.write("H BENCH ROUTE\n")
        for n, serial in enumerate(serials, start=1):
            reading = REGISTER // 10  # in tens of gallons
            out.write(f"R{n % 100000:05d}{serial.ljust(12)} {REGISTER_ON:%m%d%Y}{reading:010d}A".ljust(83) + "\n")
        out.write(f"T{len(serials):06d}\n")


def daily_file(path: Path, serials: list[str]) -> int:
    lines = 0
    with path.open("w") as out:
        out.write("METER_ID,READ_DATE,REGISTER_GAL,EVENTS\n")
        days = [DAILY_FROM + timedelta(days=i) for i in range(30)]
        stamps = [d.isoformat() for d in days]
        for n, serial in enumerate(serials):
            register = REGISTER
            rows = []
            for i, stamp in enumerate(stamps):
                register += 100 + (n + i) % 140
                rows.append(f"{serial},{stamp},{register},\n")
            out.write("".join(rows))
            lines += 30
    return lines


def measure(meters: int) -> dict:
    from bench_import_readings import accounts_create
    from django.db import connection

    from meters.imports import readings_import
    from meters.models import DailyRead, Reading
    from meters.receivers import on_readings_recorded
    from meters.signals import readings_recorded

    call = __import__("django.core.management", fromlist=["call_command"]).call_command
    call("migrate", verbosity=0)
    call("setup_utility", "mineola", "--demo", "0", "--date", "2026-01-01", stdout=io.StringIO())
    began = time.perf_counter()
    serials = accounts_create(tag="R", count=meters, existing=2, start=START)
    figures = {"meters": meters, "setup_s": round(time.perf_counter() - began, 1)}
    # The workers' part (usage alerts from the readings) is theirs, not the import's.
    readings_recorded.disconnect(on_readings_recorded, dispatch_uid="meters.usage_alerts")
    with tempfile.TemporaryDirectory() as folder:
        route = Path(folder) / "route.dat"
        handheld_file(route, serials)
        before = Reading.objects.count()
        began = time.perf_counter()
        result = readings_import(file=str(route), as_of=REGISTER_ON, actor=None, mapping="handheld_fixed")
        figures["register_s"] = round(time.perf_counter() - began, 2)
        figures["register_created"] = result.created
        assert Reading.objects.count() - before == meters, "every meter read"

        daily = Path(folder) / "daily.csv"
        figures["daily_lines"] = daily_file(daily, serials)
        figures["daily_mb"] = round(daily.stat().st_size / 1024 ** 2, 1)
        before = Reading.objects.count()
        began = time.perf_counter()
        result = readings_import(file=str(daily), as_of=DAILY_FROM + timedelta(days=29), actor=None,
                                 mapping="ami_daily_csv")
        figures["daily_s"] = round(time.perf_counter() - began, 2)
        figures["daily_created"] = result.created
        figures["month_end_readings"] = Reading.objects.count() - before
        figures["daily_rows"] = DailyRead.objects.count()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_total_relation_size('meters_dailyread')")
        figures["daily_table_mb"] = round(cursor.fetchone()[0] / 1024 ** 2, 1)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--meters", type=int, default=100_000)
    args = parser.parse_args()
    from bench_setup import scratch_django

    if not scratch_django("bench_read_files"):
        return 2
    f = measure(args.meters)
    print(f"{f['meters']:,} meters (set-up {f['setup_s']} s, untimed)")
    print(f"  handheld route file, one register read a meter: {f['register_created']:,} readings in "
          f"{f['register_s']} s")
    print(f"  AMI daily reads, 30 days: {f['daily_lines']:,} lines ({f['daily_mb']} MB) in {f['daily_s']} s; "
          f"{f['daily_rows']:,} month rows ({f['daily_table_mb']} MB on disk), {f['month_end_readings']:,} "
          f"month-end readings")
    print("RESULT " + json.dumps(f))
    return 0


if __name__ == "__main__":
    sys.exit(main())
