"""Every speed figure in one command, against targets and the figures measured before.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wb_bench .venv/bin/python scripts/bench.py all \\
        [--accounts 100000] [--only copy,demo,billday,penalties,pdfs,import,portal,conversion,notices,readfiles] \\
        [--json bench-results.json] [--workers 2]

    make bench BENCH_ARGS="--accounts 2000"

PostgreSQL only: the database in DATABASE_URL is created when missing and, for the demo village, dropped
and created again (so its name must contain "bench", or pass --allow-drop). The pieces, in order:

  copy       rows per second ``COPY ... FROM STDIN`` writes into a scratch table with billing_ledgerentry's
             columns (dropped after): the ceiling every other write is held against (the COPY limit
             column: the best a piece could do if writing its rows were all it did);
  demo       ``manage.py setup_utility DEMO_PRESET --demo N`` (Mineola) on the emptied database (migrating not counted);
  billday    the bill day (scripts/bench_billday.py) through a real Celery worker (``celery -A waterbilling
             worker -c WORKERS`` on a Redis database and a queue of its own, production settings): the month's
             readings imported, billed, every PDF rendered and stored, the paperless e-mails sent and the
             print file made, timed end to end and by step, on the first month and on the thirteenth (twelve
             months of history); then a sample of PDFs on a worker of 1 and of 2 processes;
  penalties  scripts/bench_penalties.py's catch-up of every unpaid bill, then the next night;
  pdfs       scripts/bench_pdf.py's bills per second on 2 processes (its own SQLite village): the rendering
             alone, with no database work, against the bill day's PDF figure; then the same bills profiled
             in one process, the milliseconds a bill by phase (parse, layout, drawing, writing);
  import     scripts/bench_import_readings.py: 100,000 readings over 25,000 meters;
  readfiles  scripts/bench_read_files.py: a handheld's register reads and 30 days of AMI daily reads for as many
             meters as accounts, through their mappings (its own scratch database);
  notices    scripts/bench_notices.py: the day's bills ready, reminders and late notices decided and queued for a
             demo village billed for a month (its own scratch database);
  portal     gunicorn (2 workers, production settings) and Locust: one client's median per portal page,
             20 clients without a pause (each a customer of its own reading an account of its own), the
             statement API and the admin account page.

Each piece prints its rows as soon as it is done; one that fails prints "failed: <reason>" and the others
go on. Pieces run alone (``--only``) make what they need first (the village, its bills), untimed.
"""

import argparse
import io
import json
import os
import platform
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from datetime import date, datetime, timedelta
from pathlib import Path

from bench_billday import piece_billday
from bench_portal import piece_portal
from bench_setup import (
    COLUMNS,
    DEMO_PRESET,
    PIECES,
    ROOT,
    SCALE,
    SCRIPTS,
    WORKS,
    Bench,
    billed_ensure,
    copy_limit_seconds,
    database_ensure,
    migrate,
    rows_written,
)

# ---------------------------------------------------------------------------------------------------
# The pieces: each yields its rows as it measures them.


def piece_copy(bench: Bench):
    from django.db import connection, transaction

    database_ensure(bench.database, fresh=False)
    migrate()
    count = max(1_000_000, 10 * bench.args.accounts)
    table = "bench_copy_scratch"
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {table}")
        cursor.execute(f"CREATE TABLE {table} (LIKE billing_ledgerentry INCLUDING DEFAULTS)")
        cursor.execute("SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                       "WHERE table_name = %s ORDER BY ordinal_position", [table])
        columns = cursor.fetchall()
    try:
        data = _copy_rows(columns, count)
        with transaction.atomic(), connection.cursor() as cursor:
            started = time.perf_counter()
            cursor.cursor.copy_expert(f"COPY {table} ({', '.join(c[0] for c in columns)}) FROM STDIN", data)
        seconds = time.perf_counter() - started  # the commit included
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {table}")
    bench.copy_rows_per_s = count / seconds
    yield bench.row("COPY limit", f"{bench.copy_rows_per_s:,.0f} rows/s ({count:,} rows of "
                    f"billing_ledgerentry's {len(columns)} columns in {seconds:.1f} s)",
                    bench.copy_rows_per_s, "rows/s", None)


def _copy_rows(columns, count: int) -> io.StringIO:
    """Tab-separated rows shaped like ledger entries: every NOT NULL column filled, a bill on each."""
    makers = []
    for name, data_type, nullable in columns:
        if nullable == "YES" and name != "bill_id":
            makers.append(lambda i: r"\N")
        elif data_type in ("bigint", "integer", "smallint"):
            makers.append(str if name == "id" else (lambda i: str(i % 100_000 + 1)))
        elif data_type == "numeric":
            makers.append(lambda i: f"{i % 9_000 + 1}.{i % 100:02d}")
        elif data_type == "date":
            makers.append(lambda i: (date(2026, 1, 1) + timedelta(days=i % 330)).isoformat())
        elif data_type.startswith("timestamp"):
            makers.append(lambda i: "2026-11-01 12:00:00+00")
        elif data_type == "boolean":
            makers.append(lambda i: "f")
        elif data_type == "uuid":
            makers.append(lambda i: str(uuid.uuid4()))
        elif name.endswith("currency"):
            makers.append(lambda i: "USD")
        else:
            makers.append(lambda i: f"bill:{i}")
    buffer = io.StringIO()
    for i in range(1, count + 1):
        buffer.write("\t".join(make(i) for make in makers))
        buffer.write("\n")
    buffer.seek(0)
    return buffer


def piece_demo(bench: Bench):
    if "bench" not in bench.database and not bench.args.allow_drop:
        raise RuntimeError(f"the demo village empties database {bench.database!r} first; use a database "
                           "whose name contains 'bench', or pass --allow-drop")
    database_ensure(bench.database, fresh=True)
    migrate()
    before = rows_written()
    started = time.perf_counter()
    bench.manage("setup_utility", DEMO_PRESET, "--demo", str(bench.args.accounts), "--date", bench.as_of.isoformat())
    seconds = time.perf_counter() - started
    written = rows_written() - before
    yield bench.row("demo", f"{seconds:.1f} s for {bench.args.accounts:,} accounts "
                    f"({bench.args.accounts / seconds:,.0f} accounts/s)", seconds, "s", bench.met(seconds < 60),
                    copy_limit_seconds(bench, written))


def piece_penalties(bench: Bench):
    from bench_penalties import charge_night, penalties_measure

    from demo.payments import demo_payments_create

    billed_ensure(bench)
    from django.db import connection

    with connection.cursor() as cursor:  # as bench_penalties.py --fresh: the catch-up starts from none
        cursor.execute("ALTER TABLE billing_ledgerentry DISABLE TRIGGER USER")
        cursor.execute("DELETE FROM billing_ledgerentry WHERE kind IN ('penalty', 'penalty_correction')")
        cursor.execute("ALTER TABLE billing_ledgerentry ENABLE TRIGGER USER")
    # The timed night is one on which late charges fall due (the latest by the bench's day), never an empty one.
    night = charge_night(on_or_before=bench.as_of)
    through = night - timedelta(days=1)
    paid = demo_payments_create(as_of=through)
    print(f"  ({paid:,} demo payments posted through {through}, untimed)", flush=True)
    nights = {}
    before = rows_written()

    def night_done(night):
        nonlocal before
        night["rows"] = rows_written() - before
        before += night["rows"]
        nights[night["label"]] = night

    penalties_measure(night=night, on_night=night_done)
    catch_up, next_night = nights["catch-up"], nights["next night"]
    yield bench.row("penalty catch-up", f"{catch_up['seconds']:.1f} s through {catch_up['date']} "
                    f"({catch_up['posted']:,} penalties on {catch_up['accounts']:,} accounts)",
                    catch_up["seconds"], "s", bench.met(catch_up["seconds"] < 60 and catch_up["posted"] > 0),
                    copy_limit_seconds(bench, catch_up["rows"]))
    again, every, kept = nights["same night again"], nights["next night, every account"], nights["standings kept"]
    yield bench.row("penalty day", f"{next_night['seconds']:.1f} s on {next_night['date']}, a night on which "
                    f"{next_night['posted']:,} late charges fall due, as the nightly job assesses it; reconciling "
                    f"every account that night {every['seconds']:.1f} s, the catch-up's night again "
                    f"{again['seconds']:.1f} s; keeping {kept['accounts']:,} accounts' standings {kept['seconds']:.1f} s",
                    next_night["seconds"], "s", bench.met(next_night["seconds"] < 10 and next_night["posted"] > 0),
                    copy_limit_seconds(bench, next_night["rows"]), charges=next_night["posted"])


def _script_result(name: str, argv: list[str], *, env: dict) -> dict:
    """A bench script run in a process of its own: the figures of its last ``RESULT {json}`` line."""
    result = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    if result.returncode or not lines:
        tail = (result.stderr or result.stdout).strip().splitlines()[-2:]
        raise RuntimeError(f"{name} exited {result.returncode}: {' / '.join(tail)}")
    return json.loads(lines[-1][len("RESULT "):])


def piece_pdfs(bench: Bench):
    """bench_pdf.py in a process of its own: it sets Django up on its own SQLite village."""
    bills = 400
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    with tempfile.TemporaryDirectory(prefix="bench_pdf_") as scratch:
        database = Path(scratch) / "village.sqlite3"
        code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import bench_pdf; from pathlib import Path; "
                f"print('RESULT ' + json.dumps(bench_pdf.pdf_measure(bills={bills}, processes=2, "
                f"database=Path(sys.argv[2]))))")
        figures = _script_result("bench_pdf", [sys.executable, "-c", code, str(SCRIPTS), str(database)], env=env)
        rate = figures["bills_per_s"]
        yield bench.row("pdfs", f"{rate:.1f} bills/s ({figures['bills']} bills in {figures['seconds']:.1f} s, batch "
                        f"{figures['batch']}; CPU {figures['cpu_ms_per_bill']:.0f} ms a bill = "
                        f"{figures['cpu_bills_per_s']:.1f}/s on free cores)", rate, "bills/s", rate >= 100)
        # Why the rate is what it is: the same village's bills profiled in one process, by phase.
        code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import bench_pdf; from pathlib import Path; "
                "print('RESULT ' + json.dumps(bench_pdf.pdf_profile(bills=100, database=Path(sys.argv[2]))))")
        profile = _script_result("bench_pdf", [sys.executable, "-c", code, str(SCRIPTS), str(database)], env=env)
        phases = "; ".join(f"{name.strip()} {ms:.1f}" for name, ms in profile["phases"].items())
        yield bench.row("pdf phases", f"{profile['ms_per_bill']:.0f} ms a bill in one process: {phases} (ms a bill)",
                        profile["ms_per_bill"], "ms", profile["ms_per_bill"] <= profile["budget_ms"])


def piece_import(bench: Bench):
    from bench_import_readings import import_measure

    database_ensure(bench.database, fresh=False)
    migrate()
    marks = {}
    figures = import_measure(readings=100_000, meters=25_000, existing=12,
                             mark=lambda point: marks.__setitem__(point, rows_written()))
    seconds = figures["seconds"]
    yield bench.row("import", f"{seconds:.1f} s ({figures['rows_per_s']:,.0f} rows/s; the same file again "
                    f"{figures['reimport_seconds']:.1f} s)", seconds, "s", seconds < 10,
                    copy_limit_seconds(bench, marks["imported"] - marks["import"]))


def piece_conversion(bench: Bench):
    """bench_conversion.py in a process of its own, on a scratch database of its own (a conversion opens books
    only on accounts without any, so not the billed village's)."""
    url = bench.database_url.rsplit("/", 1)[0] + f"/{bench.database}_conversion"
    env = {**os.environ, "DATABASE_URL": url}
    f = _script_result("bench_conversion", [sys.executable, str(SCRIPTS / "bench_conversion.py"), "--accounts",
                                            str(bench.args.accounts)], env=env)
    seconds = f["convert_s"]
    yield bench.row("conversion", f"{seconds:.1f} s: post {f['post_s']:.1f} s + reconcile {f['reconcile_s']:.1f} s "
                    f"({f['differences']} differences) of {f['rows']:,} open items ({f['open_bills']:,} open bills of "
                    f"{f['converted_accounts']:,} accounts owing), {f['past_bills']:,} past bills and "
                    f"{f['payment_rows']:,} past payments, {f['devices']:,} backflow devices and {f['contacts']:,} "
                    f"e-mail addresses of {f['accounts']:,} accounts; check {f['check_s']:.1f} s, "
                    f"rollback {f['rollback_s']:.1f} s", seconds, "s",
                    bench.met(seconds < 60 and f["differences"] == 0))


def piece_notices(bench: Bench):
    """bench_notices.py in a process of its own, on a scratch database of its own: the nightly notices of a day
    decided and queued for the accounts of a demo village billed for a month."""
    url = bench.database_url.rsplit("/", 1)[0] + f"/{bench.database}_notices"
    env = {**os.environ, "DATABASE_URL": url}
    f = _script_result("bench_notices", [sys.executable, str(SCRIPTS / "bench_notices.py"), "--accounts",
                                          str(bench.args.accounts)], env=env)
    seconds = max(f["ready_s"], f["soon_s"], f["late_s"])
    yield bench.row("notices", f"{seconds:.1f} s the slowest day: {f['late_given']:,} late notices decided and "
                    f"queued the day after {f['bills']:,} bills fell due ({f['accounts']:,} accounts) in "
                    f"{f['late_s']:.1f} s; {f['ready_given']:,} bills ready the bill day {f['ready_s']:.1f} s; the "
                    f"reminders 7 days before {f['soon_s']:.1f} s; each day again {f['late_again_s']:.1f} s, nothing "
                    f"new", seconds, "s",
                    bench.met(seconds < 60 and f["late_again_given"] == f["ready_again_given"] == 0))


def piece_readfiles(bench: Bench):
    """bench_read_files.py in a process of its own, on a scratch database of its own: a handheld's register reads
    and an AMI head-end's 30 days of daily reads for as many meters as the village has accounts."""
    url = bench.database_url.rsplit("/", 1)[0] + f"/{bench.database}_readfiles"
    env = {**os.environ, "DATABASE_URL": url}
    f = _script_result("bench_read_files", [sys.executable, str(SCRIPTS / "bench_read_files.py"), "--meters",
                                            str(bench.args.accounts)], env=env)
    yield bench.row("readfiles (register)", f"{f['register_s']:.1f} s: {f['register_created']:,} register reads "
                    f"in a handheld's fixed-width file (mapping handheld_fixed)", f["register_s"], "s",
                    bench.met(f["register_s"] < 30))
    yield bench.row("readfiles (daily)", f"{f['daily_s']:.1f} s: {f['daily_lines']:,} daily reads (30 days, "
                    f"{f['meters']:,} meters; {f['daily_rows']:,} month rows, {f['daily_table_mb']} MB on disk, "
                    f"{f['month_end_readings']:,} month-end readings)", f["daily_s"], "s",
                    bench.met(f["daily_s"] < 60))



# Each piece by its name in ``PIECES`` (tests/test_bench_honesty.py checks that they are the same).
PIECE_RUNNERS = {"copy": piece_copy, "demo": piece_demo, "billday": piece_billday, "penalties": piece_penalties,
                 "pdfs": piece_pdfs, "import": piece_import, "portal": piece_portal, "conversion": piece_conversion,
                 "notices": piece_notices, "readfiles": piece_readfiles}

# ---------------------------------------------------------------------------------------------------
# The table


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return (text or type(exc).__name__)[:300]


def _cells(row: dict) -> list[str]:
    return [row["work"], row["figure"], row["target"], row["baseline"], row["copy_limit"]]


def _mark(row: dict) -> str:
    """✓ met, ✗ missed, ○ met below the size its target is stated for (so not marked met)."""
    if row["met"] is None:
        return "○ " if row["target"] != "—" and row["value"] is not None else ""
    return "✓ " if row["met"] else "✗ "


def _print_row(row: dict) -> None:
    cells = _cells(row)
    cells[1] = _mark(row) + cells[1]
    print("| " + " | ".join(cells) + " |", flush=True)


def _print_table(rows: list[dict]) -> None:
    widths = [max(len(c) for c in column) for column in zip(COLUMNS, *[_cells(r) for r in rows], strict=True)]
    widths[1] += 2
    line = "| " + " | ".join(name.ljust(width) for name, width in zip(COLUMNS, widths, strict=True)) + " |"
    print(line)
    print("|" + "|".join("-" * (width + 2) for width in widths) + "|")
    for row in rows:
        cells = _cells(row)
        cells[1] = _mark(row) + cells[1]
        print("| " + " | ".join(c.ljust(width) for c, width in zip(cells, widths, strict=True)) + " |")


def _machine() -> dict:
    from django.db import connection

    memory = ""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            postgres = cursor.fetchone()[0]
    except Exception as exc:  # noqa: BLE001 - the machine's description should not stop the bench
        postgres = f"unknown ({exc})"
    return {"cores": os.cpu_count(), "memory": memory, "postgres_version": postgres,
            "python": platform.python_version()}


def run_all(args) -> int:
    import django

    django.setup()
    from core.commands import today

    bench = Bench(args)
    bench.as_of = date.fromisoformat(args.as_of) if args.as_of else today()
    database_ensure(bench.database, fresh=False)
    machine = _machine()
    began = time.perf_counter()
    print(f"bench on {bench.database} ({machine['cores']} cores, {machine['memory']}, PostgreSQL "
          f"{machine['postgres_version']}, Python {machine['python']}); {args.accounts:,} accounts; as of {bench.as_of}; "
          f"pieces: {', '.join(args.only)}", flush=True)
    print("| " + " | ".join(COLUMNS) + " |", flush=True)
    pieces = PIECE_RUNNERS
    try:
        for name in PIECES:
            if name not in args.only:
                continue
            started = time.perf_counter()
            print(f"  … {name}", flush=True)
            left = list(WORKS[name])
            try:
                for row in pieces[name](bench):
                    bench.rows.append(row)
                    _print_row(row)
                    left.pop(0)
            except Exception as exc:  # noqa: BLE001 - one broken piece must not hide the others
                traceback.print_exc(limit=-3, file=sys.stderr)
                for work in left:
                    row = bench.failed(work, _reason(exc))
                    bench.rows.append(row)
                    _print_row(row)
            print(f"  ({name}: {time.perf_counter() - started:.0f} s)", flush=True)
    finally:
        shutil.rmtree(bench.scratch, ignore_errors=True)
    print(f"\nAll in {time.perf_counter() - began:.0f} s:\n")
    _print_table(bench.rows)
    if not bench.at_scale:
        print(f"\n○: within its target on {args.accounts:,} accounts; the targets are for {SCALE:,}, so only a run "
              f"at {SCALE:,} marks them met.")
    if args.json:
        report = {"date": datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine,
                  "accounts": args.accounts, "copy_rows_per_s": bench.copy_rows_per_s,
                  "rows": bench.rows}
        Path(args.json).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        print(f"\nwritten to {args.json}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["all"])
    parser.add_argument("--accounts", type=int, default=100_000, help="accounts in the demo village")
    parser.add_argument("--only", default=",".join(PIECES),
                        help=f"comma-separated pieces to run, of: {', '.join(PIECES)} (default all)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker concurrency and pool processes")
    parser.add_argument("--portal-seconds", type=int, default=20, help="how long each Locust phase runs")
    parser.add_argument("--as-of", default=None, help="the day the bench stands on (default: today)")
    parser.add_argument("--allow-drop", action="store_true",
                        help="let the demo piece empty a database whose name does not contain 'bench'")
    args = parser.parse_args()

    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in only if name not in PIECES]
    if unknown or not only:
        parser.error(f"--only: {', '.join(unknown) or 'nothing'} is not a piece; use some of {', '.join(PIECES)}")
    args.only = only
    if args.accounts < 1:
        parser.error(f"--accounts: {args.accounts} is not a number of accounts; use 1 or more")
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://", "pgsql://")):
        print("bench: DATABASE_URL must name a PostgreSQL database (postgres://...), e.g. "
              "DATABASE_URL=postgres://postgres@127.0.0.1:5432/wb_bench; the figures are PostgreSQL's, and the "
              f"bench empties that database. Got: {url or 'nothing'}", file=sys.stderr)
        return 2

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")  # this process: development settings on a scratch database
    # One key for this process and the ones it starts, so the sessions made here sign in on gunicorn.
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    # This process bills and renders in-process (Celery eager); the worker it starts gets Redis itself.
    os.environ.pop("REDIS_URL", None)
    os.environ["BILL_PDFS_ON_ISSUE"] = "0"
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
