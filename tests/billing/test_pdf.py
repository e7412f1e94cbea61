"""Bill PDFs: what the bill says (worked from docs/ordinances.md by hand), byte-for-byte re-rendering, storage,
the book print file, and the consumption chart."""

import io
import shutil
import subprocess
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from billing.charts import ChartPoint, chart_points, consumption_chart_svg, nice_ceiling
from billing.documents.bill import bill_views
from billing.models import Bill
from billing.selectors import bill_summaries
from billing.services import bill_pdfs as pdf
from meters.models import Reading
from tests.factories import AccountFactory, CustomerFactory, InstallationFactory, MeterFactory
from tests.portal.conftest import pay

pytestmark = pytest.mark.django_db
needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None,
                                   reason="pdftotext (poppler-utils) is not installed")


def run(*args):
    call_command(*args, "--no-progress", stdout=io.StringIO())


def worked_example_account(*, account_no=None, read_type="actual", **kwargs):
    """docs/ordinances.md, Mineola: 1,000,000 gal on 2025-07-10, 1,062,500 on 2026-01-12 → $186.13 on 2026-02-01."""
    account = AccountFactory(book=1, **({"account_no": account_no} if account_no else {}), **kwargs)
    meter = MeterFactory()
    InstallationFactory(meter=meter, account=account, installed_on=date(2025, 7, 10))
    Reading.objects.create(meter=meter, read_on=date(2025, 7, 10), value=1_000_000, source="install")
    Reading.objects.create(meter=meter, read_on=date(2026, 1, 12), value=1_062_500, read_type=read_type)
    return account, meter


def text_of(data: bytes) -> str:
    return subprocess.run(["pdftotext", "-layout", "-", "-"], input=data, capture_output=True, check=True).stdout.decode()


def test_first_bill_figures(mineola):
    account, _ = worked_example_account(read_type="estimated")
    run("run_billing", "--date", "2026-02-01")
    view, = bill_views(bill_ids=[Bill.objects.get().pk])
    assert (view.total_due, view.late_total, view.current) == ("$186.13", "$195.44", "$186.13")
    assert [value for _, value in view.summary] == ["$0.00", "$0.00", "$0.00", "$186.13"]
    assert [r.value for r in view.readings] == ["1,000,000 gal", "1,062,500 gal"]
    assert [r.estimated for r in view.readings] == [False, True] and view.has_estimate
    assert view.access_code == account.access_code
    assert view.bill_date == "Feb 1, 2026" and view.due_date == "Mar 1, 2026"
    assert [(line.citation, line.quantity_rate, line.amount) for line in view.lines] == [
        ("§ 45.28 A(1), A(2)(a)", "flat 45.00", "$45.00"), ("§ 45.28 A(1)", "30,000 gal × 3.10 per 1,000", "$93.00"),
        ("§ 45.28 A(1)", "12,500 gal × 3.85 per 1,000", "$48.13")]


def test_second_bill_adds_up_previous_balance_payments_penalties_and_charges(mineola):
    """Bill 1 ($186.13, due 2026-03-01) goes unpaid: 03-02 5% = 9.31, then 1% = 1.86 on 04-02, 05-02, 06-02
    and 07-02 — 16.75. $100 is paid on 2026-07-20: principal first, 186.13 − 100.00 = 86.13 of bill 1's
    water stays unpaid. Bill 2 (2026-08-01): 20,000 gal = $45.00 minimum.
    Total due 86.13 + 16.75 + 45.00 = 147.88, of which bill 1's 86.13 + 16.75 = 102.88 is past due.
    If paid after the due date (2026-09-01), on 09-02 the account owes also bill 1's 1% on 86.13 = 0.86
    on 08-02 and again on 09-02, and bill 2's 5% of 45.00 = 2.25: 147.88 + 0.86 + 0.86 + 2.25 = 151.85."""
    account, meter = worked_example_account()
    run("run_billing", "--date", "2026-02-01")
    run("assess_penalties", "--date", "2026-07-31")
    pay(account, "100.00", "2026-07-20", "CHK-1", as_of=date(2026, 7, 31))
    Reading.objects.create(meter=meter, read_on=date(2026, 7, 15), value=1_082_500)
    run("run_billing", "--date", "2026-08-01")
    second = Bill.objects.get(bill_date=date(2026, 8, 1))
    view, = bill_views(bill_ids=[second.pk])
    assert view.summary == [("Previous balance (Feb 1, 2026)", "$186.13"), ("Payments received since", "−$100.00"),
                            ("Penalties", "$16.75"), ("Current charges", "$45.00")]
    assert (view.total_due, view.past_due, view.late_total) == ("$147.88", "$102.88", "$151.85")
    summary = bill_summaries(bills=[second])[second.pk]
    assert (summary.past_due, summary.late_on) == (Decimal("102.88"), date(2026, 9, 2))
    # A payment after the bill date does not change the bill.
    before = pdf.bill_pdf_render(bill=second)
    pay(account, "147.88", "2026-08-20", "CHK-2", as_of=date(2026, 8, 20))
    assert pdf.bill_pdf_render(bill=second) == before


@needs_poppler
def test_pdf_reads_like_a_bill(mineola):
    account, _ = worked_example_account(read_type="estimated")
    run("run_billing", "--date", "2026-02-01")
    text = text_of(pdf.bill_pdf_render(bill=Bill.objects.get()))
    for expected in ("Village of Mineola Water Department", "155 Washington Avenue", "(516) 746-0750",
                     account.account_no, account.premises.service_address, account.owner.name,
                     "202602-" + account.account_no, "Feb 1, 2026", "Mar 1, 2026", "Jul 10, 2025 – Jan 12, 2026",
                     "1,000,000 gal", "1,062,500 gal", "62,500 gal", "E = estimated reading",
                     "Minimum charge, includes 20,000 gal", "§ 45.28 A(1), A(2)(a)", "48.13", "$186.13",
                     "$195.44", "§ 45.29 E", "5% of the unpaid charges", account.access_code, "/portal/",
                     "Please detach and return", "Amount enclosed"):
        assert expected in text, expected


def test_rendering_is_deterministic_and_the_same_alone_or_in_a_batch(mineola):
    for _ in range(3):
        worked_example_account()
    run("run_billing", "--date", "2026-02-01")
    bills = list(Bill.objects.order_by("id"))
    alone = [pdf.bill_pdf_render(bill=b) for b in bills]
    assert alone[0].startswith(b"%PDF-") and alone[0].rstrip().endswith(b"%%EOF")
    assert [pdf.bill_pdf_render(bill=b) for b in bills] == alone
    batch = pdf.bills_pdf_files(bills=bills)
    assert [batch[b.pk] for b in bills] == alone
    assert b"/ID" not in alone[0]  # no random file identifier


def test_store_saves_only_the_pdf_column_once(mineola, media):
    worked_example_account()
    run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get()
    issued = Bill.objects.filter(pk=bill.pk).values().get()
    assert pdf.bill_pdfs_store(bill_ids=[bill.pk]) == 1
    assert pdf.bill_pdfs_store(bill_ids=[bill.pk]) == 0
    bill.refresh_from_db()
    assert bill.pdf.name == f"bills/2026/02/{bill.number}-{bill.public_id}.pdf"
    assert bill.pdf.read() == pdf.bill_pdf_render(bill=bill)
    after = Bill.objects.filter(pk=bill.pk).values().get()
    assert {k: v for k, v in after.items() if k != "pdf"} == {k: v for k, v in issued.items() if k != "pdf"}


def test_bills_issued_renders_in_chunks_and_pending_finds_the_rest(mineola, media, settings):
    from billing.signals import bills_issued

    for _ in range(3):
        worked_example_account()
    run("run_billing", "--date", "2026-02-01")
    ids = list(Bill.objects.order_by("id").values_list("id", flat=True))
    settings.BILL_PDFS_ON_ISSUE = True
    bills_issued.send(sender=Bill, bill_ids=ids[:2])  # the receiver's tasks run eagerly in tests
    assert Bill.objects.exclude(pdf="").count() == 2
    assert pdf.bill_pdfs_render_pending(bill_date=date(2026, 2, 1)) == 1
    assert not Bill.objects.filter(pdf="").exists()
    assert pdf.bill_pdfs_render_pending() == 0


@needs_poppler
def test_print_book_writes_the_books_bills_in_account_order(mineola, tmp_path):
    for number in ("1-00030", "1-00010", "1-00020"):
        worked_example_account(account_no=number, owner=CustomerFactory(name=f"Owner of {number}"))
    other, _ = worked_example_account(account_no="2-00001")
    other.book = 2
    other.save()
    run("run_billing", "--date", "2026-02-01")
    out = tmp_path / "book1.pdf"
    call_command("print_book", "1", "--date", "2026-02-01", "--out", str(out), "--no-progress",
                 stdout=io.StringIO())
    data = out.read_bytes()
    pages = text_of(data).split("\f")
    owners = [next(n for n in ("1-00010", "1-00020", "1-00030", "2-00001") if f"Owner of {n}" in page)
              for page in pages if page.strip()]
    assert owners == ["1-00010", "1-00020", "1-00030"]
    with pytest.raises(CommandError, match="no bills dated 2026-03-01"):
        call_command("print_book", "1", "--date", "2026-03-01", "--out", str(out), stdout=io.StringIO())


def test_chart_points_keep_the_last_24_months():
    rows = [(date(2024, 2, 1), 10), (date(2024, 8, 1), 20), (date(2025, 2, 1), 30), (date(2026, 2, 1), 40),
            (date(2026, 8, 1), 50)]
    assert chart_points(rows, through=date(2026, 2, 1)) == [
        ChartPoint(date(2024, 8, 1), 20), ChartPoint(date(2025, 2, 1), 30), ChartPoint(date(2026, 2, 1), 40)]


def test_nice_ceiling():
    assert [nice_ceiling(v) for v in (0, 999, 1001, 43_000, 62_500, 1_100_000)] == [
        1000, 1000, 2000, 50_000, 100_000, 2_000_000]


def test_chart_draws_bars_in_proportion_and_escapes_its_text():
    svg = consumption_chart_svg([ChartPoint(date(2025, 8, 1), 25_000), ChartPoint(date(2026, 2, 1), 50_000)],
                                title="<Use & misuse>")
    assert "<title>&lt;Use &amp; misuse&gt;</title>" in svg
    heights = [float(h) for h in __import__("re").findall(r'<rect [^>]*height="([\d.]+)"', svg)]
    assert len(heights) == 2 and heights[1] == pytest.approx(2 * heights[0], abs=0.2)
    assert "Aug ’25" in svg and "Feb ’26" in svg and "25k" in svg and "50k" in svg
    assert "No earlier bills yet" in consumption_chart_svg([])
    monthly = consumption_chart_svg([ChartPoint(date(2025 + (m // 12), m % 12 + 1, 1), 1000 * m) for m in range(24)])
    assert monthly.count("<rect") == 24 and "<title>" in monthly


def test_a_billing_run_renders_and_stores_pdfs_after_commit(mineola, settings, django_capture_on_commit_callbacks):
    from tests.billing.steps import account_with_meter, read, run

    settings.BILL_PDFS_ON_ISSUE = True
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    with django_capture_on_commit_callbacks(execute=True):
        run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get()
    assert bill.pdf.name.endswith(".pdf")
    with bill.pdf.open("rb") as fh:
        assert fh.read(5) == b"%PDF-"
