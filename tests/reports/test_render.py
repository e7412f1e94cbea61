"""Rendering: a report of thousands of rows flows onto as many pages as it needs, the header row repeated on
each, the totals row at the end; and the formats agree with each other."""

import shutil
import subprocess
from datetime import date
from decimal import Decimal

import pytest

from reports.render import COUNT, MONEY, Column, ReportView, Table, as_csv, as_json, as_pdf, printed

needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None,
                                   reason="pdftotext (poppler-utils) is not installed")

ROWS = 2_000


def long_view() -> ReportView:
    rows = [{"account_no": f"1-{n:05d}", "owner": f"Owner number {n}", "book": n % 10 + 1,
             "balance": Decimal(n) / 100} for n in range(1, ROWS + 1)]
    total = sum((row["balance"] for row in rows), Decimal("0.00"))  # 1 + 2 + … + 2,000 cents = $20,010.00
    return ReportView(
        name="aging", title="Aging", as_of=date(2026, 5, 10), parameters=[("date", "As of", date(2026, 5, 10))],
        notes=["A long report."],
        main=Table("rows", "Balances", (Column("account_no", "Account"), Column("owner", "Owner", width=30),
                                        Column("book", "Book", COUNT), Column("balance", "Balance", MONEY)),
                   rows, {"balance": total}, total_label=f"Total: {ROWS:,} accounts"),
        more=[], totals={"accounts": ROWS})


@needs_poppler
def test_a_report_of_thousands_of_rows_flows_onto_pages_with_the_header_on_each(mineola, tmp_path):
    path = tmp_path / "long.pdf"
    path.write_bytes(as_pdf(long_view()))
    pages = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                           check=True).stdout.decode().split("\f")
    pages = [p for p in pages if p.strip()]
    assert len(pages) > 20
    assert all("Account" in p and "Balance" in p for p in pages)  # the header row, repeated
    assert f"Page {len(pages)} of {len(pages)}" in pages[-1]
    assert "1-02000" in pages[-1] and "Total: 2,000 accounts" in pages[-1] and "$20,010.00" in pages[-1]
    text = "".join(pages)
    assert all(f"1-{n:05d}" in text for n in (1, 999, 1000, 1500))


def test_csv_json_and_the_page_agree_on_the_rows_and_the_totals():
    view = long_view()
    lines = as_csv(view).splitlines()
    assert lines[0] == "Account,Owner,Book,Balance"
    assert lines[1] == "1-00001,Owner number 1,2,0.01"
    assert lines[-1] == "Total,,,20010.00" and len(lines) == ROWS + 2
    data = as_json(view)
    assert data["rows"][0] == {"account_no": "1-00001", "owner": "Owner number 1", "book": 2, "balance": "0.01"}
    assert data["totals"] == {"balance": "20010.00", "accounts": ROWS}
    table = printed(view.main)
    assert [c.text for c in table.rows[0]] == ["1-00001", "Owner number 1", "2", "$0.01"]
    assert [(c.text, c.span) for c in table.total] == [("Total: 2,000 accounts", 3), ("$20,010.00", 1)]
