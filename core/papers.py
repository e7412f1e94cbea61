"""A one-page paper with the bill's letterhead and look: notices, determinations, work orders. The apps build
``Paper`` views (already formatted text); ``paper_pdf`` renders one with ``core.documents``."""

from dataclasses import dataclass
from datetime import datetime

from .documents import PdfInfo, pdf_one_file

TEMPLATE = "core/paper.html"
STYLESHEET = "core/paper.css"
NARROW_STYLESHEET = "core/paper_narrow.css"  # a receipt printer's 80 mm roll


@dataclass(frozen=True)
class Paper:
    """The letterhead, the addressee in the envelope window, facts beside it, and paragraphs below; an
    optional table of amounts and a boxed warning."""

    title: str
    utility_name: str
    utility_header: str
    facts: list[tuple[str, str]]
    addressee: str
    paragraphs: list[str]
    table: list[tuple[str, str]]
    warning: str
    footer: str
    created_at: datetime
    table_total: bool = True  # the table's last row is its total (ruled and bold)
    lang: str = "en"  # the language it is written in: the addressee's account's, for what a customer reads


def paper_pdf(paper: Paper, *, narrow: bool = False) -> bytes:
    """The paper on US Letter, or ``narrow`` on a receipt printer's 80 mm roll."""
    info = PdfInfo(title=paper.title.capitalize(), author=paper.utility_name, created=paper.created_at,
                   lang=paper.lang)
    return pdf_one_file(template=TEMPLATE, stylesheet=NARROW_STYLESHEET if narrow else STYLESHEET,
                        context_name="papers", documents=[paper], info=info, batch=1)
