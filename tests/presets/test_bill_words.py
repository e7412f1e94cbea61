"""Each preset's bill speaks its own ordinance: the utility's name, office and chapter, the late rule in the
preset's words with its citation, and the last day without a late charge — on the PDF and the portal page,
never another village's text. Parametrized over every preset file."""

import re
import shutil
import subprocess
from datetime import date, timedelta

import pytest
from django.core.management import call_command

from billing.documents.bill import bill_views
from billing.models import Bill
from billing.ordinance import ordinance_on
from billing.selectors import first_late_day
from billing.services.bill_pdfs import bill_pdf_render
from core.dates import add_months, fmt_day
from ordinance.files import PRESET_DIR, preset_read
from tests.billing.steps import account_with_meter, read, run

PRESETS = sorted(path.stem for path in PRESET_DIR.glob("*.toml"))
OTHER_NAMES = {code: preset_read(code=code).data["utility"]["name"] for code in PRESETS}

pytestmark = pytest.mark.django_db
needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None,
                                   reason="pdftotext (poppler-utils) is not installed")


def _billed(code: str) -> Bill:
    """One account of the preset billed on the calendar's first bill date of 2026."""
    call_command("setup_utility", code, "--demo", "0", "--date", "2026-01-01", stdout=open("/dev/null", "w"))
    calendar = ordinance_on(date(2026, 1, 1)).calendar
    frequency, day = calendar.frequency_for("5/8"), date(2026, 1, 1)
    while not (books := [b for b in calendar.due_books(day) or [1]
                         if calendar.is_due(book=b, frequency=frequency, on=day)]):
        day = add_months(day, 1)
    book = books[0]
    account, meter = account_with_meter(book=book, start=add_months(day, -7), value=0)
    first, _ = calendar.cycle(book=book, frequency=frequency, bill_date=day).read_window
    read(meter, first + timedelta(days=10), 40_000)
    run("run_billing", "--date", day.isoformat())
    return Bill.objects.get(account=account)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@needs_poppler
@pytest.mark.citation("preset words")
@pytest.mark.parametrize("code", PRESETS)
def test_the_bill_pdf_speaks_the_presets_words(code):
    bill = _billed(code)
    data = preset_read(code=code).data
    text = _flat(subprocess.run(["pdftotext", "-", "-"], input=bill_pdf_render(bill=bill), capture_output=True,
                                check=True).stdout.decode())
    assert data["utility"]["name"] in text
    assert data["utility"].get("chapter", "") in text
    assert _flat(data["penalty"]["words"]) in text
    # The money box names the late charges as the ordinance does.
    label = "Interest and penalties" if code == "washingtonville" else "Penalties"
    assert label in text
    assert f"Late payment ({data['penalty']['citation']})" in text
    for other, name in OTHER_NAMES.items():
        if other != code and name not in data["utility"]["name"]:
            assert name not in text, (code, other)
    # "If paid after" names the last day without a late charge, as the preset's scheme counts it.
    scheme = ordinance_on(bill.bill_date).penalties
    last = first_late_day(scheme, bill_date=bill.bill_date, due_date=bill.due_date) - timedelta(days=1)
    assert f"If paid after {fmt_day(last)}" in text


@pytest.mark.citation("§ 4.2")
def test_a_bill_due_when_rendered_says_when_the_penalty_comes():
    # South Farmingdale: due when rendered (2026-02-01); the 10% falls on 2026-03-04, so the bill's
    # "if paid after" line is for payments after 2026-03-03, and adds 10%.
    bill = _billed("south_farmingdale")
    (view,) = bill_views(bill_ids=[bill.pk])
    assert (view.bill_date, view.due_date, view.late_after, view.late_on) == (
        "Feb 1, 2026", "Feb 1, 2026", "Mar 3, 2026", "Mar 4, 2026")
    # 40,000 gal: $28.00 + 28,000 × $2.40 = $67.20 → $95.20; 10% = $9.52 → $104.72.
    assert (view.total_due, view.late_total) == ("$95.20", "$104.72")


@pytest.mark.citation("Ch. 210")
def test_a_bill_without_a_late_penalty_adds_nothing_if_paid_late():
    bill = _billed("old_westbury")
    (view,) = bill_views(bill_ids=[bill.pk])
    # 40,000 gal: $40.00 + 25,000 × $4.50 = $112.50 → $152.50, the same after the due date.
    assert (view.due_date, view.late_after, view.total_due, view.late_total) == (
        "Mar 3, 2026", "Mar 3, 2026", "$152.50", "$152.50")
