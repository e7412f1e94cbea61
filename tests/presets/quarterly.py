"""Steps the quarterly presets' tests take through the commands a clerk runs: install the preset, import
accounts and readings from CSV, bill, import payments, assess penalties, charge a fee, read statements."""

import io
import json

from django.core.management import call_command

ACCOUNT_HEADER = ("account_no,book,category,owner_name,owner_address,occupant_name,service_address,sbl,"
                  "meter_serial,meter_size,meter_unit,initial_reading,initial_read_date\n")


def cmd(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def write(tmp_path, name: str, content: str) -> str:
    path = tmp_path / name
    path.write_text(content)
    return str(path)


def statement(account_no: str, on: str) -> dict:
    return json.loads(cmd("statement", account_no, "--json", "--date", on))


def install(preset: str) -> None:
    """The preset on a demo/training site, as `setup_utility PRESET --demo 0` does: its rates are samples."""
    cmd("setup_utility", preset, "--demo", "0", "--date", "2026-01-01")


def accounts(tmp_path, rows: list[str], *, on: str) -> None:
    cmd("import_accounts", write(tmp_path, "accounts.csv", ACCOUNT_HEADER + "\n".join(rows) + "\n"), "--date", on)


def readings(tmp_path, rows: list[str], *, on: str) -> None:
    cmd("import_readings", write(tmp_path, "readings.csv",
                                 "meter_serial,read_date,reading,read_type\n" + "\n".join(rows) + "\n"), "--date", on)


def payments(tmp_path, rows: list[str], *, on: str, name: str = "payments.csv") -> None:
    cmd("import_payments", write(tmp_path, name, "account_no,amount,paid_on,reference\n" + "\n".join(rows) + "\n"),
        "--date", on)


def bill(*days: str) -> None:
    for day in days:
        cmd("run_billing", "--date", day, "--no-progress")


def assess(*days: str) -> None:
    for day in days:
        cmd("assess_penalties", "--date", day, "--no-progress")


def charges(account_no: str, on: str) -> list[tuple]:
    return [(c["kind"], c["date"], c["amount"], c["citation"]) for c in statement(account_no, on)["charges"]]


def lines(bill: dict) -> list[tuple]:
    return [(line["kind"], line["quantity"], line["rate"], line["amount"], line["citation"]) for line in bill["lines"]]


def billed_village(tmp_path, preset: str, *, accounts_rows: list[str], reading_rows: list[str],
                   payment_rows: list[str], paid_by: str, assessed: list[str]) -> None:
    """A quarterly village billed on 2026-02-01 with its payments imported, then penalties assessed on
    ``assessed`` (every day of interest for a daily run, or only the last for a catch-up run)."""
    install(preset)
    accounts(tmp_path, accounts_rows, on="2025-10-31")
    readings(tmp_path, reading_rows, on="2026-04-30")
    bill("2026-02-01")
    payments(tmp_path, payment_rows, on=paid_by)
    assess(*assessed)
