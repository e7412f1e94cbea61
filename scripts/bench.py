"""Every speed figure in one command, against targets and the figures measured before.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wb_bench .venv/bin/python scripts/bench.py all \\
        [--accounts 100000] [--only copy,demo,billing,penalties,pdfs,import,portal] [--months 12] \\
        [--json bench-results.json] [--workers 2]

    make bench BENCH_ARGS="--accounts 2000"

PostgreSQL only: the database in DATABASE_URL is created when missing and, for the demo village, dropped
and created again (so its name must contain "bench", or pass --allow-drop). The pieces, in order:

  copy       rows per second ``COPY ... FROM STDIN`` writes into a scratch table with billing_ledgerentry's
             columns (dropped after): the ceiling every other write is held against (the COPY limit
             column: the best a piece could do if writing its rows were all it did);
  demo       ``manage.py setup_utility DEMO_PRESET --demo N`` (Mineola) on the emptied database (migrating not counted);
  billing    monthly runs started the way ``manage.py run_billing`` starts them, billed by a real Celery
             worker (``celery -A waterbilling worker -c WORKERS`` on a Redis database and a queue of its
             own, production settings), then one more month the way scripts/bench_billing.py bills it (a
             process pool);
  penalties  scripts/bench_penalties.py's catch-up of every unpaid bill, then the next night;
  pdfs       scripts/bench_pdf.py's bills per second on 2 processes (its own SQLite village);
  import     scripts/bench_import_readings.py: 100,000 readings over 25,000 meters;
  portal     gunicorn (2 workers, production settings) and Locust: one client's median per portal page,
             20 clients without a pause, the statement API and the admin account page.

Each piece prints its rows as soon as it is done; one that fails prints "failed: <reason>" and the others
go on. Pieces run alone (``--only``) make what they need first (the village, its bills), untimed.
"""

import argparse
import contextlib
import csv
import io
import json
import os
import platform
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
import uuid
from datetime import date, datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(SCRIPTS))
from demo import DEMO_PRESET  # noqa: E402

PIECES = ("copy", "demo", "billing", "penalties", "pdfs", "import", "portal", "conversion")

# The figures measured before this command existed, on the 2-core bench machine with 100,000 accounts
# unless said otherwise: work -> (baseline shown, where it comes from).
BASELINES = {
    "billing": ("2,000 bills/s", "scripts/bench_billing.py, 100,000 accounts, 2 processes"),
    "billing (process pool)": ("2,000 bills/s", "scripts/bench_billing.py, 100,000 accounts, 2 processes"),
    "penalty day": ("109 s", "scripts/bench_penalties.py, the next night"),
    "penalty catch-up": ("191 s", "scripts/bench_penalties.py, the catch-up (worst case)"),
    "pdfs": ("29 bills/s", "scripts/bench_pdf.py, 2 processes"),
    "import": ("16 s", "scripts/bench_import_readings.py, 100,000 readings"),
    "demo": ("150 s", f"setup_utility {DEMO_PRESET} --demo 100000"),
    "portal home": ("13 ms", "one client, median"),
    "portal account": ("96 ms", "one client, median"),
    "portal bill": ("23 ms", "one client, median"),
    "portal 20 clients": ("29 requests/s, p95 1.0–1.4 s", "20 clients, gunicorn -w 2"),
    "statement API": ("—", "not measured before"),
    "admin account page": ("—", "not measured before"),
    "conversion": ("—", "not measured before"),
}
TARGETS = {
    "billing": "≥ 5,000 bills/s; last month no slower than the first",
    "billing (process pool)": "≥ 5,000 bills/s",
    "penalty day": "< 10 s",
    "penalty catch-up": "< 60 s",
    "pdfs": "≥ 40 bills/s",
    "import": "< 10 s",
    "demo": "< 60 s",
    "portal home": "p50 < 20 ms",
    "portal account": "p50 < 20 ms",
    "portal bill": "p50 < 20 ms",
    "portal 20 clients": "≥ 150 requests/s, p95 < 200 ms, no errors",
    "statement API": "p95 < 100 ms",
    "admin account page": "p95 < 200 ms",
    "conversion": "< 60 s for 100,000 accounts with two years of history",
}
# The works each piece reports, in order: a piece that fails reports the ones it had not reached.
WORKS = {
    "copy": ["COPY limit"],
    "demo": ["demo"],
    "billing": ["billing", "billing (process pool)"],
    "penalties": ["penalty catch-up", "penalty day"],
    "pdfs": ["pdfs"],
    "import": ["import"],
    "portal": ["portal home", "portal account", "portal bill", "portal 20 clients", "statement API",
               "admin account page"],
    "conversion": ["conversion"],
}
LABELS = {
    "billing": "billing (Celery workers)",
    "penalty day": "penalty day (next night)",
    "penalty catch-up": "penalty catch-up (worst case)",
    "pdfs": "bill PDFs (2 processes)",
    "import": "import 100,000 readings",
    "portal home": "portal home, 1 client",
    "portal account": "portal account page, 1 client",
    "portal bill": "portal bill page, 1 client",
    "conversion": "conversion (post + reconcile)",
}
CELERY_REDIS_DB = 7
PORTAL_USERNAME = "bench-portal@example.org"
ADMIN_USERNAME = "bench-admin"
COLUMNS = ("work", "figure", "target", "baseline", "COPY limit")


class Bench:
    """What the pieces share: the options, the COPY rate, the rows printed so far, scratch files."""

    def __init__(self, args):
        self.args = args
        self.database_url = os.environ["DATABASE_URL"]
        self.database = urlparse(self.database_url).path.lstrip("/")
        self.copy_rows_per_s = None
        self.rows = []
        self.scratch = Path(tempfile.mkdtemp(prefix="wb_bench_"))
        self.as_of = None
        self.queue = f"bench-{os.getpid()}"
        self.redis_url = f"redis://127.0.0.1:6379/{CELERY_REDIS_DB}"

    # ----------------------------------------------------------------------------------------------
    def production_env(self, **extra) -> dict:
        """The environment of the processes that serve: production settings on the bench database."""
        env = {**os.environ, "DJANGO_DEBUG": "0", "ALLOWED_HOSTS": "127.0.0.1,localhost",
               "DATABASE_URL": self.database_url, "REDIS_URL": self.redis_url,
               "CELERY_TASK_DEFAULT_QUEUE": self.queue, "BILL_PDFS_ON_ISSUE": "0",
               "MEDIA_ROOT": str(self.scratch / "media"), "PYTHONPATH": str(ROOT)}
        env.update(extra)
        return env

    def manage(self, *arguments, env=None, timeout=None) -> str:
        result = subprocess.run([sys.executable, str(ROOT / "manage.py"), *arguments], cwd=ROOT,
                                env=env or dict(os.environ), capture_output=True, text=True, timeout=timeout)
        if result.returncode:
            tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
            raise RuntimeError(f"manage.py {arguments[0]} exited {result.returncode}: {' / '.join(tail)}")
        return result.stdout

    # ----------------------------------------------------------------------------------------------
    def row(self, work, figure, value, unit, met, copy_limit="—", **extra):
        baseline, source = BASELINES.get(work, ("—", ""))
        return {"work": LABELS.get(work, work), "figure": figure, "unit": unit, "target": TARGETS.get(work, "—"),
                "baseline": baseline, "met": met, "value": value, "copy_limit": copy_limit,
                "baseline_source": source, **extra}

    def failed(self, work, reason):
        return self.row(work, f"failed: {reason}", None, None, False)


# ---------------------------------------------------------------------------------------------------
# The database


def _admin_connection():
    import psycopg2

    parts = urlparse(os.environ["DATABASE_URL"])
    connection = psycopg2.connect(host=parts.hostname or "127.0.0.1", port=parts.port or 5432,
                                  user=parts.username or "postgres", password=parts.password, dbname="postgres")
    connection.autocommit = True
    return connection


def database_ensure(name: str, *, fresh: bool) -> None:
    from django.db import connections

    connections.close_all()
    admin = _admin_connection()
    try:
        with admin.cursor() as cursor:
            if fresh:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            if cursor.fetchone() is None:
                cursor.execute(f'CREATE DATABASE "{name}"')
    finally:
        admin.close()
    if fresh:
        from django.contrib.contenttypes.models import ContentType

        ContentType.objects.clear_cache()


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def rows_written() -> int:
    """Rows inserted and updated in the bench database so far, by every connection (PostgreSQL's counters,
    which a connection reports when it goes idle: hence the pause)."""
    from django.db import connection

    time.sleep(1.2)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT coalesce(sum(n_tup_ins + n_tup_upd), 0) FROM pg_stat_user_tables")
        return int(cursor.fetchone()[0])


def copy_limit_seconds(bench: Bench, rows: int) -> str:
    if not bench.copy_rows_per_s or rows <= 0:
        return "—"
    return f"{rows / bench.copy_rows_per_s:.1f} s ({rows:,} rows)"


def copy_limit_rate(bench: Bench, rows: int, units: int, unit: str) -> str:
    if not bench.copy_rows_per_s or rows <= 0 or units <= 0:
        return "—"
    per = rows / units
    return f"{bench.copy_rows_per_s / per:,.0f} {unit} ({per:.1f} rows each)"


def analyze() -> None:
    """Refresh PostgreSQL's statistics, untimed, as autovacuum does on a server as tables grow (it may be
    off on a bench server, and the planner would then plan for the empty tables it saw last)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def village_ensure(bench: Bench) -> None:
    """The bench database migrated, with a demo village in it (made untimed when missing)."""
    from accounts.models import Account

    database_ensure(bench.database, fresh=False)
    migrate()
    if not Account.objects.exists():
        print(f"  (making a demo village of {bench.args.accounts:,} accounts first, untimed)", flush=True)
        bench.manage("setup_utility", DEMO_PRESET, "--demo", str(bench.args.accounts), "--date",
                     bench.as_of.isoformat())
    analyze()


def billing_months(bench: Bench) -> tuple[list[date], date]:
    """The months the workers bill (``--months`` of them, ending last month), and the month the process
    pool bills after them (this one)."""
    from core.dates import add_months

    this_month = bench.as_of.replace(day=1)
    months = [add_months(this_month, -k) for k in range(bench.args.months, 0, -1)]
    return months, this_month


def billed_ensure(bench: Bench) -> None:
    """The village billed over the bench's months (untimed, in this process) when it has no bills."""
    from django.core.management import call_command

    from billing.models import Bill

    village_ensure(bench)
    if Bill.objects.exists():
        return
    months, last = billing_months(bench)
    print(f"  (billing {len(months) + 1} months first, untimed)", flush=True)
    for month in [*months, last]:
        call_command("run_billing", "--date", month.isoformat(), "--no-progress", stdout=io.StringIO())
    analyze()


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
                    f"({bench.args.accounts / seconds:,.0f} accounts/s)", seconds, "s", seconds < 60,
                    copy_limit_seconds(bench, written))


def piece_billing(bench: Bench):
    from bench_billing import billing_pool_measure
    from django.db import connection

    from billing.models import Bill, BillingException, BillingRun, BillLine, LedgerEntry

    village_ensure(bench)
    if Bill.objects.exists():
        print("  (earlier bills, runs and ledger entries deleted first)", flush=True)
        tables = [m._meta.db_table for m in (LedgerEntry, BillLine, Bill, BillingException, BillingRun)]
        with connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {', '.join(tables)} CASCADE")
    months, pool_month = billing_months(bench)
    try:
        yield _billing_celery_row(bench, months)
    except Exception as exc:  # noqa: BLE001 - the process pool's figure still stands on its own
        traceback.print_exc(limit=-3, file=sys.stderr)
        yield bench.failed("billing", _reason(exc))
    before = rows_written()
    analyze()
    pool = billing_pool_measure(dates=[pool_month], workers=bench.args.workers)["months"][0]
    written = rows_written() - before
    yield bench.row(
        "billing (process pool)",
        f"{pool['bills_per_s']:,.0f} bills/s ({pool['bills']:,} bills, {pool['date'][:7]}, {bench.args.workers} "
        f"processes; peak {pool['peak_mb']:,.0f} MB)",
        pool["bills_per_s"], "bills/s", pool["bills_per_s"] >= 5000,
        copy_limit_rate(bench, written, pool["bills"], "bills/s"))


def _billing_celery_row(bench: Bench, months: list[date]) -> dict:
    celery_months, peak_mb, written = _billing_on_celery(bench, months)
    bills = sum(m["bills"] for m in celery_months)
    seconds = sum(m["seconds"] for m in celery_months)
    rate = bills / seconds if seconds else 0
    first, last = celery_months[0], celery_months[-1]
    print("  Celery: " + ", ".join(f"{m['date'][:7]} {m['bills_per_s']:,.0f}/s" for m in celery_months), flush=True)
    return bench.row(
        "billing",
        f"{rate:,.0f} bills/s ({bills:,} bills, {len(celery_months)} months {first['date'][:7]}…{last['date'][:7]}, "
        f"-c {bench.args.workers}); first month {first['bills_per_s']:,.0f}/s, last {last['bills_per_s']:,.0f}/s; "
        f"worker peak {peak_mb:,.0f} MB",
        rate, "bills/s", rate >= 5000 and last["bills_per_s"] >= first["bills_per_s"],
        copy_limit_rate(bench, written, bills, "bills/s"), months=celery_months)


def _billing_on_celery(bench: Bench, months: list[date]) -> tuple[list[dict], float, int]:
    """Bill each month through a Celery worker; returns each month's figures, the worker's peak memory and
    the rows written."""

    env = bench.production_env(SECRET_KEY=os.environ["SECRET_KEY"])
    log_path = bench.scratch / "worker.log"
    node = f"{bench.queue}@{socket.gethostname()}"
    with log_path.open("w") as log:
        worker = subprocess.Popen(
            [str(VENV_BIN / "celery"), "-A", "waterbilling", "worker", "--loglevel", "INFO", "--concurrency",
             str(bench.args.workers), "--hostname", node, "--without-gossip", "--without-mingle",
             "--without-heartbeat"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while " ready." not in log_path.read_text():
            if worker.poll() is not None:
                raise RuntimeError(f"the Celery worker exited: {_tail(log_path)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Celery worker was not ready in 60 s: {_tail(log_path)}")
            time.sleep(0.5)
        figures = []
        before = rows_written()
        with _celery_sending(bench):
            for month in months:
                figures.append(_celery_month(month, worker, log_path))
                print(f"  {month}: {figures[-1]['bills']:,} bills in {figures[-1]['seconds']:.1f} s = "
                      f"{figures[-1]['bills_per_s']:,.0f} bills/s", flush=True)
        peak_mb = _peak_mb(worker.pid)
    finally:
        _stop(worker)
        _queue_forget(bench)
    written = rows_written() - before
    return figures, peak_mb, written


@contextlib.contextmanager
def _celery_sending(bench: Bench):
    """This process sends tasks through the bench's Redis queue instead of running them eagerly."""
    from waterbilling.celery import app

    changes = {"broker_url": bench.redis_url, "task_always_eager": False, "task_default_queue": bench.queue}
    saved = {key: app.conf[key] for key in changes}
    app.conf.update(changes)
    try:
        yield
    finally:
        app.pool.force_close_all()
        app.conf.update(saved)


def _celery_month(month: date, worker: subprocess.Popen, log_path: Path) -> dict:
    """One run the way ``run_billing`` starts it with Celery workers: create it, send its dispatch, hand
    out again what is due while waiting. Timed from before the run's accounts are chosen to its end."""
    from django.utils import timezone

    from billing.models import BillingRun
    from billing.runs.lifecycle import billing_run_create, billing_run_hand_out
    from billing.tasks import billing_run_dispatch, chunk_send

    analyze()
    started = timezone.now()
    run = billing_run_create(run_on=month)
    billing_run_dispatch.delay(run.pk)
    progress, moved_at, handed_at = None, time.monotonic(), time.monotonic()
    while True:
        run = BillingRun.objects.get(pk=run.pk)
        if run.status != BillingRun.Status.RUNNING:
            break
        if worker.poll() is not None:
            raise RuntimeError(f"the Celery worker exited: {_tail(log_path)}")
        if run.chunks_done != progress:
            progress, moved_at = run.chunks_done, time.monotonic()
        elif time.monotonic() - moved_at > 120:
            raise RuntimeError(f"the run for {month} made no progress in 120 s ({run.chunks_done} of "
                               f"{run.chunks_total} chunks): {_tail(log_path)}")
        if time.monotonic() - handed_at > 1:
            billing_run_hand_out(run_id=run.pk, send=chunk_send)
            handed_at = time.monotonic()
        time.sleep(0.05)
    if run.status != BillingRun.Status.DONE:
        raise RuntimeError(f"the run for {month} ended {run.status}: {run.error}")
    seconds = ((run.finished_at or timezone.now()) - started).total_seconds()
    return {"date": month.isoformat(), "bills": run.bills_created, "seconds": seconds,
            "bills_per_s": run.bills_created / seconds if seconds else 0}


def _peak_mb(pid: int) -> float:
    """The largest peak resident memory (VmHWM) of a process and its children."""
    import psutil

    peaks = []
    for process in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        try:
            for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
        except OSError:
            continue
    return max(peaks, default=0)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


def _queue_forget(bench: Bench) -> None:
    """The bench queue's keys in its Redis database (kombu's bindings, anything left unsent)."""
    try:
        import redis

        client = redis.Redis.from_url(bench.redis_url)
        client.delete(bench.queue, f"_kombu.binding.{bench.queue}", f"_kombu.binding_permanent.{bench.queue}")
        for key in client.scan_iter(f"waterbilling:{bench.queue}:*"):
            client.delete(key)
    except Exception as exc:  # noqa: BLE001 - tidying up; the figures stand
        print(f"  (could not tidy Redis: {exc})", flush=True)


def _tail(path: Path, lines: int = 3) -> str:
    return " / ".join(path.read_text().strip().splitlines()[-lines:])


def piece_penalties(bench: Bench):
    from bench_penalties import penalties_measure

    from demo.payments import demo_payments_create

    billed_ensure(bench)
    from django.db import connection

    with connection.cursor() as cursor:  # as bench_penalties.py --fresh: the catch-up starts from none
        cursor.execute("ALTER TABLE billing_ledgerentry DISABLE TRIGGER USER")
        cursor.execute("DELETE FROM billing_ledgerentry WHERE kind IN ('penalty', 'penalty_correction')")
        cursor.execute("ALTER TABLE billing_ledgerentry ENABLE TRIGGER USER")
    through = bench.as_of - timedelta(days=1)
    paid = demo_payments_create(as_of=through)
    print(f"  ({paid:,} demo payments posted through {through}, untimed)", flush=True)
    nights = {}
    before = rows_written()

    def night_done(night):
        nonlocal before
        night["rows"] = rows_written() - before
        before += night["rows"]
        nights[night["label"]] = night

    penalties_measure(through=through, on_night=night_done)
    catch_up, next_night = nights["catch-up"], nights["next night"]
    yield bench.row("penalty catch-up", f"{catch_up['seconds']:.1f} s through {catch_up['date']} "
                    f"({catch_up['posted']:,} penalties on {catch_up['accounts']:,} accounts)",
                    catch_up["seconds"], "s", catch_up["seconds"] < 60,
                    copy_limit_seconds(bench, catch_up["rows"]))
    again, every, kept = nights["same night again"], nights["next night, every account"], nights["standings kept"]
    yield bench.row("penalty day", f"{next_night['seconds']:.1f} s on {next_night['date']} as the nightly job "
                    f"assesses it ({next_night['posted']:,} penalties); reconciling every account that night "
                    f"{every['seconds']:.1f} s, the catch-up's night again {again['seconds']:.1f} s; keeping "
                    f"{kept['accounts']:,} accounts' standings {kept['seconds']:.1f} s",
                    next_night["seconds"], "s", next_night["seconds"] < 10,
                    copy_limit_seconds(bench, next_night["rows"]))


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
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import bench_pdf; "
            f"print('RESULT ' + json.dumps(bench_pdf.pdf_measure(bills={bills}, processes=2)))")
    figures = _script_result("bench_pdf", [sys.executable, "-c", code, str(SCRIPTS)], env=env)
    rate = figures["bills_per_s"]
    yield bench.row("pdfs", f"{rate:.1f} bills/s ({figures['bills']} bills in {figures['seconds']:.1f} s, batch "
                    f"{figures['batch']}; CPU {figures['cpu_ms_per_bill']:.0f} ms a bill = "
                    f"{figures['cpu_bills_per_s']:.1f}/s on free cores)", rate, "bills/s", rate >= 40)


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
                    seconds < 60 and f["accounts"] >= 100_000 and f["differences"] == 0)


def piece_portal(bench: Bench):
    billed_ensure(bench)
    logins = _portal_logins()
    static = bench.scratch / "static"
    settings_dir = bench.scratch / "settings"
    settings_dir.mkdir(exist_ok=True)
    # Production settings, with the collected static files (the manifest the pages need) kept in scratch.
    (settings_dir / "bench_settings.py").write_text(
        f"from waterbilling.settings import *  # noqa: F403\nSTATIC_ROOT = {str(static)!r}\n")
    env = bench.production_env(SECRET_KEY=os.environ["SECRET_KEY"], DJANGO_SETTINGS_MODULE="bench_settings",
                               PYTHONPATH=f"{settings_dir}{os.pathsep}{ROOT}")
    bench.manage("collectstatic", "--noinput", "-v", "0", env=env)
    port = _free_port()
    host = f"http://127.0.0.1:{port}"
    log_path = bench.scratch / "gunicorn.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [str(VENV_BIN / "gunicorn"), "waterbilling.wsgi", "-w", "2", "-b", f"127.0.0.1:{port}"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_served(host, server, log_path)
        _check_pages(host, logins)
        locust_env = {**os.environ, **{f"BENCH_{k.upper()}": str(v) for k, v in logins.items()}}
        seconds = bench.args.portal_seconds

        one = _locust(bench, host, locust_env, "PortalUser", users=1, seconds=seconds, name="one")
        for work, name in (("portal home", "portal home"), ("portal account", "portal account"),
                           ("portal bill", "portal bill")):
            stats = one[name]
            yield bench.row(work, f"p50 {stats['50%']:.0f} ms, p95 {stats['95%']:.0f} ms "
                            f"({stats['Request Count']:,.0f} requests, {stats['Failure Count']:.0f} errors)",
                            stats["50%"], "ms", stats["50%"] < 20 and stats["Failure Count"] == 0)

        many = _locust(bench, host, locust_env, "PortalUser", users=20, seconds=seconds, name="twenty")
        total = many["Aggregated"]
        rate, p95, errors = total["Requests/s"], total["95%"], total["Failure Count"]
        yield bench.row("portal 20 clients", f"{rate:,.0f} requests/s, p50 {total['50%']:.0f} ms, p95 {p95:,.0f} ms, "
                        f"{errors:.0f} errors ({total['Request Count']:,.0f} requests)", rate, "requests/s",
                        rate >= 150 and p95 < 200 and errors == 0, p95_ms=p95, errors=errors)

        staff = _locust(bench, host, locust_env, "StaffUser", users=1, seconds=seconds, name="staff")
        for work, limit in (("statement API", 100), ("admin account page", 200)):
            stats = staff[work]
            yield bench.row(work, f"p95 {stats['95%']:.0f} ms, p50 {stats['50%']:.0f} ms "
                            f"({stats['Request Count']:,.0f} requests, {stats['Failure Count']:.0f} errors; "
                            f"account {logins['account_no']})",
                            stats["95%"], "ms", stats["95%"] < limit and stats["Failure Count"] == 0)
    finally:
        _stop(server)
        _queue_forget(bench)


def _portal_logins() -> dict:
    """A portal customer linked to the account with the longest history, a superuser with an API token,
    and a signed-in session for each (made here, so Locust times pages rather than argon2)."""
    from account_page_bench import busiest_account
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from rest_framework.authtoken.models import Token

    from accounts.models import PortalLink
    from billing.models import Bill

    users = get_user_model()
    account, _ = busiest_account()
    bill = Bill.objects.filter(account=account).exclude(status=Bill.Status.VOID).order_by("-bill_date", "-pk").first()
    if bill is None:
        raise RuntimeError(f"account {account.account_no} has no bill to show")
    customer = users.objects.filter(username=PORTAL_USERNAME).first() or users.objects.create_user(
        username=PORTAL_USERNAME, email=PORTAL_USERNAME, password=secrets.token_urlsafe(16))
    PortalLink.objects.get_or_create(user=customer, account=account)
    admin = users.objects.filter(username=ADMIN_USERNAME).first() or users.objects.create_superuser(
        ADMIN_USERNAME, email="bench-admin@example.org", password=secrets.token_urlsafe(16))
    token, _ = Token.objects.get_or_create(user=admin)

    def session(user) -> str:
        store = SessionStore()
        store[SESSION_KEY] = str(user.pk)
        store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        store[HASH_SESSION_KEY] = user.get_session_auth_hash()
        store.save()
        return store.session_key

    return {"portal_session": session(customer), "admin_session": session(admin), "token": token.key,
            "account": account.public_id, "bill": bill.public_id, "account_no": account.account_no,
            "account_pk": account.pk}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(url: str, headers: dict) -> int:
    request = urllib.request.Request(url, headers={"X-Forwarded-Proto": "https", **headers})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - 127.0.0.1 only
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _wait_served(host: str, server: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited: {_tail(log_path)}")
        try:
            if _get(f"{host}/portal/login/", {}) == 200:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"gunicorn did not serve the login page in 60 s: {_tail(log_path)}")
        time.sleep(0.5)


def _check_pages(host: str, logins: dict) -> None:
    """Each page answers 200 once before it is timed (a login that did not take would time a redirect)."""
    portal = {"Cookie": f"sessionid={logins['portal_session']}"}
    admin = {"Cookie": f"sessionid={logins['admin_session']}"}
    for path, headers in ((f"/portal/accounts/{logins['account']}/", portal),
                          (f"/portal/bills/{logins['bill']}/", portal), ("/portal/", portal),
                          (f"/api/v1/accounts/{logins['account_no']}/statement/",
                           {"Authorization": f"Token {logins['token']}"}),
                          (f"/admin/accounts/account/{logins['account_pk']}/change/", admin)):
        status = _get(host + path, headers)
        if status != 200:
            raise RuntimeError(f"{path} answered {status}, not 200")


def _locust(bench: Bench, host: str, env: dict, user_class: str, *, users: int, seconds: int, name: str) -> dict:
    """Run Locust headless; returns its stats rows by name (numbers as floats)."""
    prefix = bench.scratch / f"locust_{name}"
    result = subprocess.run(
        [str(VENV_BIN / "locust"), "-f", str(SCRIPTS / "locustfile.py"), user_class, "--headless", "-u", str(users),
         "-r", str(users), "-t", f"{seconds}s", "--host", host, "--csv", str(prefix), "--only-summary",
         "--stop-timeout", "5", "--loglevel", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=seconds + 120)
    stats_path = Path(f"{prefix}_stats.csv")
    if not stats_path.exists():
        tail = (result.stderr or result.stdout).strip().splitlines()[-2:]
        raise RuntimeError(f"locust wrote no stats (exit {result.returncode}): {' / '.join(tail)}")
    stats = {}
    with stats_path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            stats[row["Name"]] = {k: _number(v) for k, v in row.items() if k not in ("Type", "Name")}
    return stats


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


# ---------------------------------------------------------------------------------------------------
# The table


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return (text or type(exc).__name__)[:300]


def _cells(row: dict) -> list[str]:
    return [row["work"], row["figure"], row["target"], row["baseline"], row["copy_limit"]]


def _print_row(row: dict) -> None:
    mark = {True: "✓ ", False: "✗ ", None: ""}[row["met"]]
    cells = _cells(row)
    cells[1] = mark + cells[1]
    print("| " + " | ".join(cells) + " |", flush=True)


def _print_table(rows: list[dict]) -> None:
    widths = [max(len(c) for c in column) for column in zip(COLUMNS, *[_cells(r) for r in rows], strict=True)]
    widths[1] += 2
    line = "| " + " | ".join(name.ljust(width) for name, width in zip(COLUMNS, widths, strict=True)) + " |"
    print(line)
    print("|" + "|".join("-" * (width + 2) for width in widths) + "|")
    for row in rows:
        mark = {True: "✓ ", False: "✗ ", None: ""}[row["met"]]
        cells = _cells(row)
        cells[1] = mark + cells[1]
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
    pieces = {"copy": piece_copy, "demo": piece_demo, "billing": piece_billing, "penalties": piece_penalties,
              "pdfs": piece_pdfs, "import": piece_import, "portal": piece_portal, "conversion": piece_conversion}
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
    parser.add_argument("--months", type=int, default=12, help="monthly runs the Celery workers bill")
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
    if args.months < 1:
        parser.error(f"--months: {args.months} is not a number of months; use 1 or more")
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
