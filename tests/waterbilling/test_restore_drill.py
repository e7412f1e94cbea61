"""The restore drill of docs/operations.md, run for real: write down the books' control totals, back the database up
with ``pg_dump``, restore it into a fresh database with ``pg_restore``, and the restored books tie out to the cent
(``control_totals --compare``), recorded with the database and the dump; a restored copy that lost a payment does not,
and says which totals differ; the comparison run on the live database itself is refused. And the real restore, as
written: over a database whose books changed since the dump, dropped and created again, gives the books back."""

import io
import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from billing.services.payments import payment_post
from tests.billing.steps import account_with_meter, read, run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def needs_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL): pg_dump reads what the test has committed")


def pg(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, capture_output=True, text=True, check=True)


def totals_and_dump(tmp_path, *, into: str) -> tuple[dict, str, Path]:
    """The books' control totals written to before.json, the test database dumped, and the database ``into``
    (the test database's name and that) created empty: the PostgreSQL tools' environment, its URL and the dump."""
    before = io.StringIO()
    call_command("control_totals", "--json", stdout=before)
    (tmp_path / "before.json").write_text(before.getvalue())
    db = connection.settings_dict
    env = {**os.environ, "PGHOST": db["HOST"] or "127.0.0.1", "PGPORT": str(db["PORT"] or 5432),
           "PGUSER": db["USER"] or "postgres", "PGPASSWORD": db["PASSWORD"] or ""}
    name = f"{db['NAME']}_{into}"
    dump = tmp_path / "waterbilling.dump"
    pg("pg_dump", "--format=custom", "--no-owner", f"--file={dump}", db["NAME"], env=env)
    pg("dropdb", "--if-exists", "--force", name, env=env)
    pg("createdb", name, env=env)
    return env, f"postgres://{env['PGUSER']}:{env['PGPASSWORD']}@{env['PGHOST']}:{env['PGPORT']}/{name}", dump


def test_a_backup_restored_into_a_fresh_database_ties_out(mineola, tmp_path):
    for n in range(3):
        account, meter = account_with_meter(book=1, account_no=f"1-{n + 1:04d}")
        read(meter, date(2026, 1, 12), 1_000_000 + 9_000 * (n + 1))
    run("run_billing", "--date", "2026-02-01")
    payment_post(account_no="1-0001", amount=account.bills.get().total.amount, paid_on=date(2026, 2, 20),
                 reference="CHK-1", tender="check", check_number="101")
    env, url, dump = totals_and_dump(tmp_path, into="restored")
    assert json.loads((tmp_path / "before.json").read_text())["payments"] == 1
    fresh, db = url.rsplit("/", 1)[1], connection.settings_dict
    try:
        pg("pg_restore", "--no-owner", f"--dbname={fresh}", str(dump), env=env)
        check = [sys.executable, "manage.py", "control_totals", "--compare", str(tmp_path / "before.json")]
        app_env = {**os.environ, "DATABASE_URL": url, "DJANGO_DEBUG": "1", "BACKUP_DIR": str(tmp_path)}
        restored = subprocess.run(check, cwd=ROOT, env=app_env, capture_output=True, text=True)
        assert restored.returncode == 0, restored.stdout + restored.stderr
        assert restored.stdout.startswith("The books tie out: 3 accounts, 3 bills, 1 payments")
        assert "Not recorded as a restore drill: name the dump" in restored.stdout
        assert not (tmp_path / "restore-drill.json").exists()
        recorded = subprocess.run([*check, "--dump", dump.name], cwd=ROOT, env=app_env, capture_output=True, text=True)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        # Recorded beside the backups, where the readiness check looks for the last drill: which copy, from what.
        record = json.loads((tmp_path / "restore-drill.json").read_text())
        assert record["payments"] == 1 and record["dump"] == "waterbilling.dump"
        assert record["database"]["name"] == fresh and record["totals_from"]["name"] == db["NAME"]
        assert record["database"]["identity"] != record["totals_from"]["identity"]
        # A restore that lost rows is caught, by name (the ledger's own guard against deletes is set aside for it).
        pg("psql", "-d", fresh, "-c", "SET session_replication_role = replica; "
                                      "DELETE FROM billing_ledgerentry WHERE kind = 'payment'", env=env)
        lost = subprocess.run(check, cwd=ROOT, env=app_env, capture_output=True, text=True)
        assert lost.returncode == 1 and "ledger_rows:" in lost.stdout and "ledger_total:" in lost.stdout
    finally:
        pg("dropdb", "--if-exists", fresh, env=env)


def test_the_drill_run_on_the_live_database_is_refused_and_records_nothing(mineola, tmp_path, settings):
    settings.BACKUP_DIR = str(tmp_path)
    before = io.StringIO()
    call_command("control_totals", "--json", stdout=before)
    (tmp_path / "before.json").write_text(before.getvalue())
    out = io.StringIO()
    with pytest.raises(SystemExit) as stopped:
        call_command("control_totals", "--compare", str(tmp_path / "before.json"), "--dump", "x.dump", stdout=out)
    assert stopped.value.code == 1
    assert out.getvalue().startswith(f"This is the database the totals were written from ({connection.settings_dict['NAME']})")
    assert not (tmp_path / "restore-drill.json").exists()


def test_a_real_restore_over_changed_books_gives_the_books_back(mineola, tmp_path):
    """docs/operations.md, *Restore for real*: with the site stopped, the database dropped and created again and the
    dump restored into it. Here over a copy standing for the live database, whose books changed after the dump."""
    account, meter = account_with_meter(book=1, account_no="1-0001")
    read(meter, date(2026, 1, 12), 1_009_000)
    run("run_billing", "--date", "2026-02-01")
    env, url, dump = totals_and_dump(tmp_path, into="live")
    live = url.rsplit("/", 1)[1]
    app_env = {**os.environ, "DATABASE_URL": url, "DJANGO_DEBUG": "1"}
    check = [sys.executable, "manage.py", "control_totals", "--compare", str(tmp_path / "before.json")]
    try:
        pg("pg_restore", "--no-owner", f"--dbname={live}", str(dump), env=env)
        # The books change after the dump: a payment posted, and a row lost.
        pg("psql", "-d", live, "-c", "SET session_replication_role = replica; "
                                     "DELETE FROM billing_ledgerentry WHERE id = (SELECT max(id) FROM "
                                     "billing_ledgerentry)", env=env)
        changed = subprocess.run(check, cwd=ROOT, env=app_env, capture_output=True, text=True)
        assert changed.returncode == 1 and "ledger_rows:" in changed.stdout
        # Restored over them as written: drop, create, restore (the site stopped, so nothing holds a connection).
        pg("dropdb", "--force", live, env=env)
        pg("createdb", live, env=env)
        pg("pg_restore", "--no-owner", f"--dbname={live}", str(dump), env=env)
        restored = subprocess.run(check, cwd=ROOT, env=app_env, capture_output=True, text=True)
        assert restored.returncode == 0, restored.stdout + restored.stderr
        assert restored.stdout.startswith("The books tie out: 1 accounts, 1 bills, 0 payments")
    finally:
        pg("dropdb", "--if-exists", "--force", live, env=env)
