"""core.documents: a document's file is the same bytes however warm the process is, documents that use
different ASCII letters share one embedded font subset, and rendering leaves the garbage collector as it
found it."""

import gc
import re
import zlib
from datetime import UTC, datetime

from core import documents
from core.papers import Paper, paper_pdf


def paper(addressee: str, paragraph: str) -> Paper:
    return Paper(
        title="NOTICE",
        utility_name="Village Water",
        utility_header="1 Main Street",
        facts=[("Account", "1-00001")],
        addressee=addressee,
        paragraphs=[paragraph],
        table=[("Charges", "$10.00"), ("Total", "$10.00")],
        warning="Pay by the due date.",
        footer="Questions: 555-0100",
        created_at=datetime(2026, 11, 1, 9, 30, tzinfo=UTC),
    )


def font_files(data: bytes) -> list[bytes]:
    """The embedded font programs of a PDF file, decompressed."""
    streams = re.findall(rb"<</Length1 \d+/Filter /FlateDecode/Length (\d+)>>\nstream\n", data)
    out, start = [], 0
    for length in streams:
        start = data.index(b"stream\n", data.index(b"/Length1", start)) + len(b"stream\n")
        out.append(zlib.decompress(data[start : start + int(length)]))
    return out


def cold_caches():
    documents._font_files.clear()
    documents._deflated.cache_clear()


def test_a_file_is_the_same_bytes_whether_its_fonts_were_subset_before_or_not():
    first = paper("Ann Able\n2 Elm Street", "Your water bill is unpaid.")
    other = paper("Zed Quick\n99 Oak Road", "Jumpy ox: #42 @ 7% [sic]!")
    cold_caches()
    alone = paper_pdf(first)
    paper_pdf(other)
    assert paper_pdf(first) == alone
    cold_caches()
    assert paper_pdf(first) == alone


def test_documents_using_different_ascii_letters_embed_the_same_font_subsets():
    first = paper_pdf(paper("Ann Able\n2 Elm Street", "Your water bill is unpaid."))
    other = paper_pdf(paper("Zed Quick\n99 Oak Road", "Jumpy ox: #42 @ 7% [sic]!"))
    assert font_files(first) and font_files(first) == font_files(other)


def test_a_letter_beyond_ascii_is_embedded_too():
    plain = paper_pdf(paper("Ann Able\n2 Elm Street", "Your water bill is unpaid."))
    accented = paper_pdf(paper("Zoë Émile\n2 Elm Street", "Your water bill is unpaid."))
    assert font_files(plain) != font_files(accented)


def test_rendering_puts_the_garbage_collector_thresholds_back():
    before = gc.get_threshold()
    paper_pdf(paper("Ann Able\n2 Elm Street", "Your water bill is unpaid."))
    assert gc.get_threshold() == before
