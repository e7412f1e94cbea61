"""PDF documents from HTML, rendered with WeasyPrint: the same bytes every time, and fast in batches.

Any app renders its printed documents here (a bill, a notice): it gives a Django template that lays out a
list of documents, one stylesheet, and for each document what the file says about itself (``PdfInfo``).

* **Byte-for-byte the same.** No clock is read: the file's dates are the ``created`` moment the caller
  gives (a bill's issue time), the file carries no random identifier (no ``/ID``), and the only fonts are
  the system's (a stylesheet names one family). A document's file is the same whether it was laid out
  alone or in a batch, and whatever the process rendered before it.
* **Accessible.** Each file is tagged PDF/UA-1 (``_write``): a screen reader follows the structure tree
  built from the template's HTML (headings, paragraphs, tables with their header cells, figures with their
  ``alt`` text), in the file's language, and the viewer shows its title. A template writes its HTML in
  reading order and gives every picture its alternative text. Tagging costs next to nothing (WeasyPrint
  builds the tree from the boxes it has laid out).
* **Fast.** Each stylesheet is parsed once per process; a batch of documents is laid out as one
  WeasyPrint document whose pages are then written out document by document; and the user-agent
  stylesheet leaves out WeasyPrint's universal pseudo-element rules (``_user_agent_stylesheet``).
  Each file still embeds its own subset of each font, but every subset keeps the font's printable
  ASCII glyphs besides those the document uses, so most documents share one, which is made and
  compressed once per process (``_subset_once``, ``_compress_fonts_once``). While documents render,
  Python's cyclic garbage collector runs in larger steps (``_collecting_less``).
  What makes a page itself quick to lay out (positioned columns rather than tables, no element ids,
  pictures as data images) belongs to its template and is said there.
"""

import copy
import gc
import io
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
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
    lang: str = "en"  # the document's language (BCP 47), which a screen reader speaks it in


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


# Every embedded subset keeps these characters' glyphs, so documents differing only in which letters and
# digits they use embed the same subset (and it is made once); a few kilobytes more in each file.
_COMMON_CHARACTERS = range(0x20, 0x7F)  # printable ASCII
_SUBSETS_KEPT = 64  # subsets kept per font file (a few dozen at most in a run of bills)


@dataclass
class _FontFile:
    """A font file WeasyPrint embeds, its common glyphs, and the subsets made of it, by what they keep."""

    content: bytes
    common_glyphs: frozenset[int]
    subsets: dict[tuple, bytes]


_font_files: dict[tuple[int, int], list[_FontFile]] = {}


def _font_file(content: bytes, index: int) -> _FontFile:
    """The one record of this font file (by its bytes: each document reads its own copy of them)."""
    files = _font_files.setdefault((len(content), index), [])
    for known in files:
        if known.content == content:
            return known
    from fontTools.ttLib import TTFont

    ttfont = TTFont(io.BytesIO(content), fontNumber=index, lazy=True)
    cmap = ttfont.getBestCmap() or {}
    glyphs = frozenset(ttfont.getGlyphID(cmap[code]) for code in _COMMON_CHARACTERS if code in cmap)
    files.append(_FontFile(content=content, common_glyphs=glyphs, subsets={}))
    return files[-1]


@cache
def _subset_once() -> None:
    """Make WeasyPrint subset each font once per process for each set of glyphs, keeping the common ones.

    WeasyPrint 70 subsets a font anew for every file it writes (``Font.subset``): a few milliseconds a
    bill with HarfBuzz, a quarter of a second with fontTools where HarfBuzz's subsetter is not
    installed. The subset is a function of the font file, the glyphs kept and the subsetting options,
    so a document's file stays the same whatever was rendered before it. Only which glyph outlines the
    file carries changes: the glyphs drawn, their widths and their text are WeasyPrint's as ever.
    """
    from weasyprint.pdf.fonts import Font

    make_subset = Font.subset

    def subset(font, to_unicode, hinting):
        if not to_unicode:
            return make_subset(font, to_unicode, hinting)
        record = _font_file(font.file_content, font.index)
        glyphs = frozenset(to_unicode) | record.common_glyphs
        key = (glyphs, hinting, bool(font.missing))
        made = record.subsets.get(key)
        if made is None:
            make_subset(font, dict.fromkeys(sorted(glyphs)), hinting)
            if len(record.subsets) >= _SUBSETS_KEPT:
                record.subsets.clear()
            made = record.subsets[key] = font.file_content
        font.file_content = made

    Font.subset = subset


@cache
def _stylesheet(name: str):
    from weasyprint import CSS

    return CSS(string=get_template(name).template.source)


def _layout(*, template: str, stylesheet: str, context_name: str, documents: Sequence):
    """One WeasyPrint document laying out these documents."""
    _subset_once()
    html = render_to_string(template, {context_name: documents})
    return _html_class()(string=html, base_url=str(settings.BASE_DIR)).render(stylesheets=[_stylesheet(stylesheet)])


def _pdf_date(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("D:%Y%m%d%H%M%SZ")


@lru_cache(maxsize=_SUBSETS_KEPT)
def _deflated(font: bytes) -> bytes:
    """An embedded font file compressed as pydyf compresses a stream (zlib at level 9): the same bytes."""
    compressor = zlib.compressobj(level=9)
    return compressor.compress(font) + compressor.flush()


def _compress_fonts_once(pdf) -> None:
    """Put the file's font streams in already compressed: the subsets are shared (``_subset_once``), so
    each is compressed once per process rather than once per file. A font stream holds the font file
    alone; the file's bytes are those pydyf would write."""
    for stream in pdf.objects:
        if (isinstance(stream, pydyf.Stream) and stream.compress and len(stream.stream) == 1
                and ("Length1" in stream.extra or stream.extra.get("Subtype") == "/OpenType")):
            stream.stream = [_deflated(stream.stream[0])]
            stream.extra["Filter"] = "/FlateDecode"
            stream.compress = False


def _header_scopes(pdf) -> None:
    """Give each table header cell its /Scope, which WeasyPrint's tags leave out: a header in the table's head is
    its column's, any other its row's (the templates' ``scope="col"`` and ``scope="row"``). A screen reader then
    reads each cell with its headers."""
    def parent(element):
        reference = element.get("P")
        if not isinstance(reference, bytes | str):
            return None
        number = int((reference.decode() if isinstance(reference, bytes) else reference).split()[0])
        found = pdf.objects[number] if number < len(pdf.objects) else None
        return found if isinstance(found, pydyf.Dictionary) else None

    for element in pdf.objects:
        if isinstance(element, pydyf.Dictionary) and element.get("S") == "/TH":
            row = parent(element)
            group = parent(row) if row is not None else None
            scope = "/Column" if group is not None and group.get("S") == "/THead" else "/Row"
            attributes = element.get("A")
            if not isinstance(attributes, pydyf.Dictionary):
                attributes = element["A"] = pydyf.Dictionary({"O": "/Table"})
            attributes["Scope"] = scope


def _finisher(info: PdfInfo):
    def finish(document, pdf):
        pdf.info["Title"] = pydyf.String(info.title)
        pdf.info["Author"] = pydyf.String(info.author)
        pdf.info["CreationDate"] = pydyf.String(_pdf_date(info.created))
        pdf.info["ModDate"] = pydyf.String(_pdf_date(info.created))
        _header_scopes(pdf)
        _compress_fonts_once(pdf)
    return finish


def _write(document, pages, info: PdfInfo) -> bytes:
    """The file of these pages: tagged PDF/UA-1 (a structure tree in the HTML's reading order, table headers,
    figures with their alternative text, the title shown as the window's), with its own title and language."""
    part = document.copy(pages)
    part.metadata = copy.copy(document.metadata)  # the batch's is shared by every file written from it
    part.metadata.title, part.metadata.authors, part.metadata.lang = info.title, [info.author], info.lang
    out = io.BytesIO()
    part.write_pdf(out, finisher=_finisher(info), pdf_variant="pdf/ua-1")
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


# Objects allocated between two collections of the youngest generation while documents render (Python's
# default is 700). Laying out a page allocates some hundred thousand boxes and layouts; at the default
# every few hundred of them set off a collection, and every hundredth of those walks the whole heap.
_RENDER_GC_THRESHOLD = 50_000
_gc_lock = threading.Lock()
_gc_rendering = 0  # renders in progress in this process
_gc_thresholds = gc.get_threshold()


@contextmanager
def _collecting_less() -> Iterator[None]:
    """Collect garbage less often while documents render: about a tenth of a page's time otherwise.

    Garbage is still collected (the collector stays on), only in larger steps; the thresholds in force
    before are put back when the last render in the process ends.
    """
    global _gc_rendering, _gc_thresholds
    with _gc_lock:
        if not _gc_rendering:
            _gc_thresholds = gc.get_threshold()
            gc.set_threshold(max(_gc_thresholds[0], _RENDER_GC_THRESHOLD), *_gc_thresholds[1:])
        _gc_rendering += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_rendering -= 1
            if not _gc_rendering:
                gc.set_threshold(*_gc_thresholds)


def _batches(items: Sequence, size: int) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def pdf_files(*, template: str, stylesheet: str, context_name: str, documents: Sequence[Any],
              info: Callable[[Any], PdfInfo], batch: int) -> list[bytes]:
    """One PDF file per document, in the order given; ``batch`` documents are laid out together."""
    out = []
    with _collecting_less():
        for part in _batches(documents, batch):
            infos = [info(d) for d in part]
            document = _layout(template=template, stylesheet=stylesheet, context_name=context_name,
                               documents=part)
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
    with _collecting_less():
        for part in _batches(documents, batch):
            document = _layout(template=template, stylesheet=stylesheet, context_name=context_name,
                               documents=part)
            first = first or document
            pages.extend(document.pages)
            if progress:
                progress(len(part))
        return _write(first, pages, info)
