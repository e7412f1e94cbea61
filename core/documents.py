"""PDF documents from HTML, rendered with WeasyPrint: the same bytes every time, and fast in batches.

Any app renders its printed documents here (a bill, a notice): it gives a Django template that lays out a
list of documents, one stylesheet, and for each document what the file says about itself (``PdfInfo``).

* **Byte-for-byte the same.** No clock is read: the file's dates are the ``created`` moment the caller
  gives (a bill's issue time), the file carries no random identifier (no ``/ID``), and the only fonts are
  the system's (a stylesheet names one family). A document's file is the same whether it was laid out
  alone or in a batch.
* **Fast.** Each stylesheet is parsed once per process; a batch of documents is laid out as one
  WeasyPrint document whose pages are then written out document by document; and the user-agent
  stylesheet leaves out WeasyPrint's universal pseudo-element rules (``_user_agent_stylesheet``).
  What makes a page itself quick to lay out (positioned columns rather than tables, no element ids,
  pictures as data images) belongs to its template and is said there.
"""

import io
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, lru_cache
from typing import Any

import pydyf
from django.conf import settings
from django.template.loader import get_template, render_to_string

__all__ = ["PdfInfo", "pdf_files", "pdf_one_file"]


@dataclass(frozen=True)
class PdfInfo:
    """What a document's file says about itself, and how many pages the document fills."""

    title: str
    author: str
    created: datetime
    pages: int = 1


@lru_cache(maxsize=1)
def _user_agent_stylesheet():
    """WeasyPrint's HTML5 user-agent stylesheet without its universal pseudo-element rules.

    ``::marker`` and the footnote and note pseudo-elements match every element, so WeasyPrint computes
    six extra styles for each one; a printed form has no lists or notes, and dropping those rules takes
    about a third off a bill's layout time. Everything else in the stylesheet is kept as it is.
    """
    from weasyprint import CSS
    from weasyprint.css.counters import CounterStyle
    from weasyprint.html import UA

    lean = "\n".join(line for line in UA.splitlines()
                      if not line.startswith(("::marker", "::footnote-", "::note-")))
    return CSS(string=lean, counter_style=CounterStyle())


@lru_cache(maxsize=1)
def _html_class():
    from weasyprint import HTML

    class LeanHTML(HTML):
        # WeasyPrint 70 asks the document for its user-agent stylesheets here.
        def _ua_stylesheets(self, forms=False):
            return [_user_agent_stylesheet()]

    return LeanHTML


@cache
def _stylesheet(name: str):
    from weasyprint import CSS

    return CSS(string=get_template(name).template.source)


def _layout(*, template: str, stylesheet: str, context_name: str, documents: Sequence):
    """One WeasyPrint document laying out these documents."""
    html = render_to_string(template, {context_name: documents})
    return _html_class()(string=html, base_url=str(settings.BASE_DIR)).render(stylesheets=[_stylesheet(stylesheet)])


def _pdf_date(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("D:%Y%m%d%H%M%SZ")


def _finisher(info: PdfInfo):
    def finish(document, pdf):
        pdf.info["Title"] = pydyf.String(info.title)
        pdf.info["Author"] = pydyf.String(info.author)
        pdf.info["CreationDate"] = pydyf.String(_pdf_date(info.created))
        pdf.info["ModDate"] = pydyf.String(_pdf_date(info.created))
    return finish


def _write(document, pages, info: PdfInfo) -> bytes:
    out = io.BytesIO()
    document.copy(pages).write_pdf(out, finisher=_finisher(info))
    return out.getvalue()


def _split(document, infos: list[PdfInfo], *, stylesheet: str) -> list[list]:
    """The laid-out pages, document by document: each fills exactly the pages it says it does."""
    if len(document.pages) != sum(info.pages for info in infos):
        raise RuntimeError(f"{len(infos)} documents laid out on {len(document.pages)} pages, not the "
                           f"{sum(info.pages for info in infos)} they fill (see {stylesheet})")
    out, start = [], 0
    for info in infos:
        out.append(document.pages[start:start + info.pages])
        start += info.pages
    return out


def _batches(items: Sequence, size: int) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def pdf_files(*, template: str, stylesheet: str, context_name: str, documents: Sequence[Any],
              info: Callable[[Any], PdfInfo], batch: int) -> list[bytes]:
    """One PDF file per document, in the order given; ``batch`` documents are laid out together."""
    out = []
    for part in _batches(documents, batch):
        infos = [info(d) for d in part]
        document = _layout(template=template, stylesheet=stylesheet, context_name=context_name, documents=part)
        for pages, document_info in zip(_split(document, infos, stylesheet=stylesheet), infos, strict=True):
            out.append(_write(document, pages, document_info))
    return out


def pdf_one_file(*, template: str, stylesheet: str, context_name: str, documents: Sequence[Any], info: PdfInfo,
                 batch: int, progress: Callable[[int], Any] | None = None) -> bytes:
    """Every document in one PDF file, in the order given, each starting a new page.

    ``progress`` (a callable taking a count of documents) is called as batches are laid out.
    """
    if not documents:
        raise ValueError("no documents to render")
    pages, first = [], None
    for part in _batches(documents, batch):
        document = _layout(template=template, stylesheet=stylesheet, context_name=context_name, documents=part)
        first = first or document
        pages.extend(document.pages)
        if progress:
            progress(len(part))
    return _write(first, pages, info)
