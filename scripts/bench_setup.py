"""What the pieces of scripts/bench.py share: the targets and figures measured before, the bench's options and
rows (``Bench``), and the bench database: created, migrated, filled with the demo village and billed."""

import io
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(SCRIPTS))
from demo import DEMO_PRESET  # noqa: E402

PIECES = ("copy", "demo", "billday", "penalties", "pdfs", "import", "portal", "conversion", "notices", "readfiles")

# The figures measured before this command existed, on the 2-core bench machine with 100,000 accounts
# unless said otherwise: work -> (baseline shown, where it comes from).
BASELINES = {
    "bill day": ("about 9 minutes of PDFs alone", "a month's 22,000 bills at 41 bills/s, 2026-12-02"),
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
    "notices": ("—", "not measured before"),
}
# The paperless e-mails of the thirteenth month may cost this much more a bill than the first's and still be
# "no slower": the spread between runs of the same code.
EMAIL_SPREAD = 0.10
TARGETS = {
    "bill day": "the run ≥ 5,000 bills/s, PDFs ≥ 100 bills/s (2 processes)",
    "paperless e-mails": f"the thirteenth month no slower than the first (within {EMAIL_SPREAD:.0%}, the spread of runs)",
    "PDFs, 1 → 2 worker processes": "≥ 100 bills/s on 2",
    "penalty day": "< 10 s",
    "penalty catch-up": "< 60 s",
    "pdfs": "≥ 100 bills/s",
    "pdf phases": "≤ 20 ms a bill (100 bills/s on 2 processes)",
    "import": "< 10 s",
    "demo": "< 60 s",
    "portal home": "p50 < 20 ms",
    "portal account": "p50 < 20 ms",
    "portal bill": "p50 < 20 ms",
    "portal 20 clients": "≥ 150 requests/s, p95 < 200 ms, no errors",
    "statement API": "p95 < 100 ms",
    "admin account page": "p95 < 200 ms",
    "conversion": "< 60 s for 100,000 accounts with two years of history",
    "notices": "< 60 s for 100,000 accounts (decided and queued)",
}
# The works each piece reports, in order: a piece that fails reports the ones it had not reached.
WORKS = {
    "copy": ["COPY limit"],
    "demo": ["demo"],
    "billday": ["bill day, first month", "bill day", "paperless e-mails", "PDFs, 1 → 2 worker processes"],
    "penalties": ["penalty catch-up", "penalty day"],
    "pdfs": ["pdfs", "pdf phases"],
    "import": ["import"],
    "portal": ["portal home", "portal account", "portal bill", "portal 20 clients", "statement API",
               "admin account page"],
    "conversion": ["conversion"],
    "notices": ["notices"],
}
LABELS = {
    "bill day": "bill day, thirteenth month (Celery workers)",
    "penalty day": "penalty day (next night)",
    "penalty catch-up": "penalty catch-up (worst case)",
    "pdfs": "bill PDFs (2 processes)",
    "pdf phases": "a bill PDF by phase (profile, 1 process)",
    "import": "import 100,000 readings",
    "portal home": "portal home, 1 client",
    "portal account": "portal account page, 1 client",
    "portal bill": "portal bill page, 1 client",
    "conversion": "conversion (post + reconcile)",
}
# The village size the targets are stated for: a figure on a smaller one is never marked met.
SCALE = 100_000
CELERY_REDIS_DB = 7
PORTAL_USERNAME = "bench-portal@example.org"  # the clients are bench-portal-1@…, bench-portal-2@…
PORTAL_CLIENTS = 20  # Locust's clients on bill day, each a customer with an account of its own
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

    @property
    def at_scale(self) -> bool:
        return self.args.accounts >= SCALE

    def met(self, ok: bool) -> bool | None:
        """A target stated for ``SCALE`` accounts: missed when missed at any size, met only at that size
        (None below it: the table marks it untried)."""
        return False if not ok else (True if self.at_scale else None)

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


def billing_months(bench: Bench) -> list[date]:
    """The months a piece that needs bills bills first (untimed): the twelve before this one, and this one."""
    from core.dates import add_months

    this_month = bench.as_of.replace(day=1)
    return [add_months(this_month, -k) for k in range(12, -1, -1)]


def billed_ensure(bench: Bench) -> None:
    """The village billed over the bench's months (untimed, in this process) when it has no bills."""
    from django.core.management import call_command

    from billing.models import Bill

    village_ensure(bench)
    if Bill.objects.exists():
        return
    months = billing_months(bench)
    print(f"  (billing {len(months)} months first, untimed)", flush=True)
    for month in months:
        call_command("run_billing", "--date", month.isoformat(), "--no-progress", stdout=io.StringIO())
    analyze()


def scratch_django(script: str) -> bool:
    """Set Django up for a piece's own script on the scratch database ``DATABASE_URL`` names, emptied first; False
    (having said why) when it names none: the name must contain 'bench', since everything in it is dropped."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")) or "bench" not in url:
        print(f"{script}: DATABASE_URL must name a scratch PostgreSQL database whose name contains 'bench' "
              "(it is emptied)", file=sys.stderr)
        return False
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")
    os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    database_ensure(url.rsplit("/", 1)[1], fresh=True)
    return True
