"""Bill PDFs: rendered once, stored, and printed by the book.

* **Rendered** by ``core.documents`` from ``billing.documents.bill``'s view of each bill, ``LAYOUT_BATCH``
  bills laid out together; a bill's file is the same whether it was rendered alone or in a batch.
* **Stored once**: ``bills_issued`` hands new bills to Celery in chunks of ``RENDER_CHUNK``
  (``billing.receivers``), and a PDF asked for before it is stored is rendered and stored then; the PDF is
  saved to ``Bill.pdf`` by updating that one column, never the issued figures, with the bill's row locked
  so one file is kept.
"""

import logging
from datetime import date

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Q

from core.db import lock_in_order
from core.documents import PdfInfo, pdf_files, pdf_one_file

from ..documents.bill import BillView, bill_views
from ..models import Bill
from ..signals import bill_pdfs_wanted

logger = logging.getLogger(__name__)

RENDER_CHUNK = 200  # bills per rendering task
LAYOUT_BATCH = 25  # bills laid out in one WeasyPrint document (measured: scripts/bench_pdf.py)
TEMPLATE = "billing/bill.html"
STYLESHEET = "billing/bill.css"  # each bill is one sheet: ``.bill`` is a Letter-size box that clips overflow


def _info(view: BillView) -> PdfInfo:
    return PdfInfo(title=view.title, author=view.utility_name, created=view.created_at, lang=view.language)


def bills_pdf_files(*, bills) -> dict[int, bytes]:
    """One PDF file per bill, keyed by bill id."""
    views = bill_views(bill_ids=[b.pk for b in bills])
    files = pdf_files(template=TEMPLATE, stylesheet=STYLESHEET, context_name="bills", documents=views,
                      info=_info, batch=LAYOUT_BATCH)
    return {view.pk: data for view, data in zip(views, files, strict=True)}


def bill_pdf_render(*, bill: Bill) -> bytes:
    return bills_pdf_files(bills=[bill])[bill.pk]


def bills_pdf_render(*, bills, title: str = "Water bills", progress=None) -> bytes:
    """Many bills in one PDF, in the order given, each starting a new page.

    ``progress`` (a callable taking a count of bills) is called as batches are laid out.
    """
    order = {b.pk: i for i, b in enumerate(bills)}
    if not order:
        raise ValueError("no bills to render")
    views = sorted(bill_views(bill_ids=order), key=lambda v: order[v.pk])
    info = PdfInfo(title=title, author=views[0].utility_name, created=max(v.created_at for v in views))
    return pdf_one_file(template=TEMPLATE, stylesheet=STYLESHEET, context_name="bills", documents=views,
                        info=info, batch=LAYOUT_BATCH, progress=progress)


def bill_pdf_name(bill: Bill) -> str:
    # Under Bill.pdf's upload_to (bills/%Y/%m/) by bill date; the public id keeps names unguessable.
    return f"bills/{bill.bill_date:%Y/%m}/{bill.number}-{bill.public_id}.pdf"


def bill_pdfs_store(*, bill_ids) -> int:
    """Render and store the PDFs of these bills that have none yet; returns how many were stored."""
    bills = list(Bill.objects.filter(Q(pdf="") | Q(pdf__isnull=True), pk__in=list(bill_ids))
                 .exclude(status=Bill.Status.VOID).only("id"))
    if not bills:
        return 0
    return bill_pdfs_keep(bills_pdf_files(bills=bills))


def bill_pdfs_keep(files: dict[int, bytes]) -> int:
    """Store each file (by bill id) as its bill's PDF unless a readable one is stored by now; returns how many
    were stored.

    Only the ``pdf`` column is written: an issued bill's figures never change (PostgreSQL refuses any other
    change), and a void bill keeps no file. Safe to run twice or concurrently: the bills' rows are locked
    (``lock_in_order``) while their files are written, so requests rendering one bill at once store one file,
    and a file at a bill's name that no bill holds yet (left by a crashed attempt) is replaced, not kept beside.
    A batch is one transaction: a worker's task of 200 bills commits once, not 200 times.
    """
    if not files:
        return 0
    with transaction.atomic():
        bills = lock_in_order(Bill.objects.exclude(status=Bill.Status.VOID).filter(pk__in=list(files))
                              .only("id", "number", "public_id", "bill_date", "pdf"))
        stored = []
        for bill in bills:
            if bill.pdf and default_storage.exists(bill.pdf.name):
                continue
            name = bill_pdf_name(bill)
            if default_storage.exists(name):
                default_storage.delete(name)
            bill.pdf = default_storage.save(name, ContentFile(files[bill.pk]))
            stored.append(bill)
        Bill.objects.bulk_update(stored, ["pdf"])
    return len(stored)


def bill_pdf_bytes(*, bill: Bill) -> bytes:
    """The stored PDF; when none is stored yet (or its file is gone), a fresh render — the same bytes —
    which is stored, so the bill is rendered once however often it is asked for."""
    if bill.pdf:
        try:
            with default_storage.open(bill.pdf.name, "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            pass
    content = bill_pdf_render(bill=bill)
    if bill.status != Bill.Status.VOID:
        try:
            bill_pdfs_keep({bill.pk: content})
        except OSError:
            # Storage full or read-only: the customer still gets the bill; the next request tries again.
            logger.exception("could not store the PDF of bill %s", bill.number)
    return content


def bill_pdfs_render_pending(*, bill_date: date | None = None, chunk: int = RENDER_CHUNK) -> int:
    """Ask for the PDFs of every live bill (of ``bill_date``, or all) that has none stored, in tasks of
    ``chunk`` bills (``billing.receivers``); returns how many."""
    rows = Bill.objects.filter(Q(pdf="") | Q(pdf__isnull=True)).exclude(status=Bill.Status.VOID)
    if bill_date is not None:
        rows = rows.filter(bill_date=bill_date)
    ids = list(rows.order_by("id").values_list("id", flat=True))
    if ids:
        bill_pdfs_wanted.send(sender=Bill, bill_ids=ids, chunk=chunk)
    return len(ids)
