"""The restore drill of docs/operations.md, run for real: write down the books' control totals, back the database up
with ``pg_dump``, restore it into a fresh database with ``pg_restore``, and the restored books tie out to the cent
(``control_totals --compare``); a restored copy that lost a payment does not, and says which totals differ."""

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


def test_a_backup_restored_into_a_fresh_database_ties_out(mineola, tmp_path):
    for n in range(3):
        account, meter = account_with_meter(book=1, account_no=f"1-{n + 1:04d}")
        read(meter, date(2026, 1, 12), 1_000_000 + 9_000 * (n + 1))
    run("run_billing", "--date", "2026-02-01")
    payment_post(account_no="1-0001", amount=account.bills.get().total.amount, paid_on=date(2026, 2, 20),
                 reference="CHK-1", tender="check", check_number="101")
    before = io.StringIO()
    call_command("control_totals", "--json", stdout=before)
    (tmp_path / "before.json").write_text(before.getvalue())
    assert json.loads(before.getvalue())["payments"] == 1

    db = connection.settings_dict
    env = {**os.environ, "PGHOST": db["HOST"] or "127.0.0.1", "PGPORT": str(db["PORT"] or 5432),
           "PGUSER": db["USER"] or "postgres", "PGPASSWORD": db["PASSWORD"] or ""}
    fresh = f"{db['NAME']}_restored"
    dump = tmp_path / "waterbilling.dump"
    pg("pg_dump", "--format=custom", "--no-owner", f"--file={dump}", db["NAME"], env=env)
    pg("dropdb", "--if-exists", fresh, env=env)
    pg("createdb", fresh, env=env)
    try:
        pg("pg_restore", "--no-owner", f"--dbname={fresh}", str(dump), env=env)
        url = f"postgres://{env['PGUSER']}:{env['PGPASSWORD']}@{env['PGHOST']}:{env['PGPORT']}/{fresh}"
        check = [sys.executable, "manage.py", "control_totals", "--compare", str(tmp_path / "before.json")]
        app_env = {**os.environ, "DATABASE_URL": url, "DJANGO_DEBUG": "1", "BACKUP_DIR": str(tmp_path)}
        restored = subprocess.run(check, cwd=ROOT, env=app_env, capture_output=True, text=True)
        assert restored.returncode == 0, restored.stdout + restored.stderr
        assert restored.stdout.startswith("The books tie out: 3 accounts, 3 bills, 1 payments")
        # Recorded beside the backups, where the readiness check looks for the last drill.
        assert json.loads((tmp_path / "restore-drill.json").read_text())["payments"] == 1
        # A restore that lost rows is caught, by name (the ledger's own guard against deletes is set aside for it).
        pg("psql", "-d", fresh, "-c", "SET session_replication_role = replica; "
                                      "DELETE FROM billing_ledgerentry WHERE kind = 'payment'", env=env)
        lost = subprocess.run(check, cwd=ROOT, env=app_env, capture_output=True, text=True)
        assert lost.returncode == 1 and "ledger_rows:" in lost.stdout and "ledger_total:" in lost.stdout
    finally:
        pg("dropdb", "--if-exists", fresh, env=env)
