"""Bills, statements, receipts and notices are tagged PDF/UA-1 files a screen reader can follow (WCAG 2.1 AA
for the PDFs a village posts): read back with pikepdf, each has a structure tree in reading order tied to the
page's marked content, its language, its own title shown as the window's title, table headers, and the chart's
alternative text."""

from datetime import date
from decimal import Decimal

import pytest

from billing.documents.bill import bill_views
from billing.documents.receipt import receipt_pdf
from billing.documents.statement import statement_pdf
from billing.models import Bill, Payment
from billing.services import bill_pdfs
from billing.services.payments import payment_post
from termination.documents import notice_pdf
from tests.billing.steps import account_with_meter, read, run
from tests.pdf_structure import structure
from tests.termination.steps import delinquent_account, served_case

pytestmark = pytest.mark.django_db


def accessible(data: bytes, *, title: str):
    """The checks every file passes; gives the structure for the document's own."""
    s = structure(data)
    assert s.ua_part == "1", "claims PDF/UA-1 in its XMP metadata"
    assert (s.lang, s.marked, s.display_title, s.title) == ("en", True, True, title)
    assert s.tree.children and s.tree.children[0].tag == "Document"
    assert s.marked_content > 10, "the page's text is tied to the structure tree"
    assert all(figure.alt for figure in s.figures()), "every figure has alternative text"
    return s


@pytest.fixture
def billed(mineola):
    account, meter = account_with_meter(book=1, account_no="1-0901")
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    return account


def test_a_bill_reads_aloud_in_order_with_its_chart_described(billed):
    bill = Bill.objects.get()
    view, = bill_views(bill_ids=[bill.pk])
    s = accessible(bill_pdfs.bill_pdf_render(bill=bill), title=view.title)
    tags = s.tree.tags()
    assert tags.count("H1") == 1 and tags.count("H2") >= 4  # the utility; the bill's parts
    figure, = s.figures()
    # The chart's figures, not only its name: each bill's month and gallons.
    assert figure.alt == "Water use, gallons per bill, last 24 months: Feb 2026: 62,500 gallons."
    # Each fact is one paragraph (label, then value), not a column of labels followed by a column of values.
    facts = next(node for node in s.tree.walk() if node.tag == "Div" and len(node.children) == 6)
    assert all(p.tag == "P" and len(p.children) == 2 for p in facts.children)


def test_a_statement_has_table_headers_for_every_cell(billed):
    s = accessible(statement_pdf(account=billed, as_of=date(2026, 2, 10)), title="Statement of account 1-0901 as of Feb 10, 2026")
    tables = [node for node in s.tree.walk() if node.tag == "Table"]
    assert len(tables) == 4
    cells = [node for table in tables for node in table.walk() if node.tag == "TD"]
    headers = [node for table in tables for node in table.walk() if node.tag == "TH"]
    assert headers and all(cell.headers for cell in cells if cell.headers is not None)
    # Each header says whether it heads a column (the grids' heads) or a row (the facts).
    assert {h.scope for h in headers} == {"Row", "Column"}
    assert sum(1 for cell in cells if cell.headers) >= len(cells) - 1  # "No payments" spans the table


def test_a_receipt_and_a_termination_notice_are_tagged(billed, mineola):
    payment_post(account_no="1-0901", amount=Decimal("100.00"), paid_on=date(2026, 2, 20), reference="CHK-100",
                 tender="check", check_number="100")
    s = accessible(receipt_pdf(Payment.objects.get()), title="Receipt for payment")
    assert "TH" in s.tree.tags()

    account, _ = delinquent_account()
    number = served_case(account)
    from termination.models import TerminationCase

    notice = TerminationCase.objects.get(number=number).notices.first()
    s = accessible(notice_pdf(notice), title="Notice of hearing and termination of water service")
    rows = [node for node in s.tree.walk() if node.tag == "TR"]
    assert rows and all(row.children[0].tag == "TH" for row in rows)  # each fact and amount names its row
    assert all(row.children[0].scope == "Row" for row in rows)
