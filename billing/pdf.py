"""Bill PDFs: what a bill says, rendered with WeasyPrint, stored, and printed by the book.

* **What the bill says** comes from the issued bill, its lines and ``billing.selectors.bill_summaries``:
  the account as it stood when the bill was issued — previous balance, payments received since, penalties,
  other entries, this bill's charges, the past-due part and the total amount due, and what will be owed
  the day after the due date if nothing more is paid. Nothing recorded after the bill was issued is read,
  so a re-render gives the same page; the addressee is the owner of record when it was issued.
* **Byte-for-byte the same**: no clock is read; the PDF's dates are the bill's issue time, it carries no
  random file identifier, and the only font is DejaVu from the system.
* **Fast** (``scripts/bench_pdf.py``): bills load in a handful of queries per batch; the stylesheet is
  parsed once per process; a batch of bills is laid out as one WeasyPrint document whose pages are then
  written out bill by bill (a bill's file is the same whether it was laid out alone or in a batch — the
  tests check this); the page uses positioned columns of preformatted lines instead of tables, no
  element ids (in WeasyPrint 70 an anchored sheet took some 10 ms more layout), a user-agent stylesheet
  without universal pseudo-element rules, and the chart as an SVG data image.
* **Stored once**: ``bills_issued`` hands new bills to Celery in chunks (``bill_pdfs_render``), and a PDF
  asked for before it is stored is rendered and stored then; the PDF is saved to ``Bill.pdf`` by updating
  that one column, never the issued figures, with the bill's row locked so one file is kept.
"""

import io
import logging
from base64 import b64encode
from collections import defaultdict
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import lru_cache

import pydyf
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Q
from django.template.loader import get_template, render_to_string
from django.utils.safestring import mark_safe

from core.money import ZERO

from .charts import chart_points, consumption_chart_svg
from .models import Bill
from .ordinance import ordinance_on
from .selectors import bill_summaries
from .signals import bill_pdfs_wanted

logger = logging.getLogger(__name__)

RENDER_CHUNK = 200  # bills per rendering task
LAYOUT_BATCH = 25  # bills laid out in one WeasyPrint document (measured: scripts/bench_pdf.py)


def _day(d: date) -> str:
    return f"{d:%b} {d.day}, {d:%Y}"


def _money(value: Decimal) -> str:
    return f"{value:,.2f}"


def _signed(value: Decimal) -> str:
    """Credits shown with a minus sign, as on a statement."""
    return f"-{-value:,.2f}" if value < 0 else f"{value:,.2f}"


def consumption_history(*, account_ids, through: date) -> dict[int, list[tuple[date, int]]]:
    """(bill date, gallons) of every live bill of these accounts dated on or before ``through``."""
    out: dict[int, list[tuple[date, int]]] = defaultdict(list)
    for account_id, bill_date, gallons in (Bill.objects.filter(account_id__in=account_ids, bill_date__lte=through)
                                           .exclude(status=Bill.Status.VOID).order_by("bill_date")
                                           .values_list("account_id", "bill_date", "gallons")):
        out[account_id].append((bill_date, gallons))
    return out


def _reading_row(reading, label: str) -> dict:
    meter = reading.meter
    return {"label": label, "meter": f'{meter.serial} ({meter.size}")', "date": _day(reading.read_on),
            "value": f"{reading.value:,}", "unit": "cu ft" if meter.unit == "cf" else "gal",
            "estimated": reading.read_type == reading.ReadType.ESTIMATED}


def _load(bill_ids) -> list[Bill]:
    return list(Bill.objects.filter(pk__in=list(bill_ids))
                .select_related("account__premises", "start_reading__meter",
                                "end_reading__meter")
                .prefetch_related("lines"))


def bill_views(bills: list[Bill]) -> list[dict]:
    """Everything the bill template shows, for many bills in a fixed number of queries."""
    if not bills:
        return []
    latest = max(b.bill_date for b in bills)
    ordinance = ordinance_on(latest)
    utility, scheme = ordinance.utility, ordinance.penalties
    account_ids = sorted({b.account_id for b in bills})
    summaries = bill_summaries(bills=bills)
    history = consumption_history(account_ids=account_ids, through=latest)
    address_lines = [line.strip() for line in utility.office_address.splitlines() if line.strip()]
    portal_url = settings.SITE_URL.rstrip("/") + "/portal/"
    views = []
    for bill in bills:
        account = bill.account
        rows = history.get(bill.account_id, [])
        summary = summaries[bill.pk]
        previous_date, late = summary.previous_date, summary.late_total
        readings = [_reading_row(r, label) for r, label in ((bill.start_reading, "Previous"),
                                                             (bill.end_reading, "Current")) if r is not None]
        chart = consumption_chart_svg(chart_points(rows, through=bill.bill_date))
        summary_rows = [
            (f"Previous balance{f' ({_day(previous_date)})' if previous_date else ''}",
             _signed(summary.previous_balance)),
            ("Payments received since", _signed(summary.payments)),
            ("Penalties", _signed(summary.penalties)),
            *([("Fees, credits and adjustments", _signed(summary.other))] if summary.other != ZERO else []),
            ("Current charges", _signed(summary.current)),
        ]
        views.append({
            "pk": bill.pk, "number": bill.number, "account_no": account.account_no,
            "access_code": account.access_code, "portal_url": portal_url,
            "service_address": account.premises.service_address,
            # The addressee is the owner of record when the bill was issued, whenever it is rendered.
            "owner_name": bill.recipient_name,
            "owner_address": "\n".join(line.strip() for line in bill.recipient_address.splitlines()
                                       if line.strip()),
            "utility_name": utility.name, "utility_phone": utility.phone,
            "utility_header": "\n".join([*([utility.chapter] if utility.chapter else []), *address_lines,
                                          *([f"Phone {utility.phone}"] if utility.phone else [])]),
            "utility_address_text": "\n".join(address_lines),
            "bill_date": _day(bill.bill_date), "due_date": _day(bill.due_date),
            "issued_on": _day(bill.issued_on) if bill.issued_on != bill.bill_date else "",
            "period": f"{_day(bill.period_start)} – {_day(bill.period_end)}",
            "reading_labels": "\n".join(r["label"] for r in readings),
            "reading_meters": "\n".join(r["meter"] for r in readings),
            "reading_count": max(2, len(readings)),
            "reading_dates": "\n".join(r["date"] for r in readings),
            "reading_values": "\n".join(f"{r['value']} {r['unit']}" for r in readings),
            "reading_flags": "\n".join("E" if r["estimated"] else " " for r in readings),
            "has_estimate": any(r["estimated"] for r in readings),
            "gallons": f"{bill.gallons:,}",
            "lines": [{"description": line.description, "citation": line.citation,
                       "amount": _money(line.amount.amount)} for line in bill.lines.all()],
            "dense": len(bill.lines.all()) > 4,  # smaller type so a long bill still clears the stub
            "summary_labels": "\n".join(label for label, _ in summary_rows),
            "summary_values": "\n".join(value for _, value in summary_rows),
            "summary_count": len(summary_rows),
            "current": _signed(summary.current),
            "total_due": _signed(summary.total_due), "late_total": _signed(late),
            "past_due": _signed(summary.past_due) if summary.past_due > ZERO else "",
            "late_on": _day(summary.late_on),
            "late_words": scheme.words or "", "penalty_citation": getattr(scheme, "citation", ""),
            # The chart's SVG goes in as a data: image, so its nodes skip the HTML parser and the CSS
            # cascade (a few milliseconds a bill); it draws the same.
            "chart": mark_safe(f'<img src="data:image/svg+xml;base64,{b64encode(chart.encode()).decode()}" '  # noqa: S308
                               'alt="Water use, gallons per bill, last 24 months">'),
            "scanline": f"{account.account_no}  {bill.number}  {int(summary.total_due * 100):010d}  "
                        f"{int(late * 100):010d}",
            "title": f"Water bill {bill.number}", "created_at": bill.created_at,
        })
    return views


# --- WeasyPrint -------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _user_agent_stylesheet():
    """WeasyPrint's HTML5 user-agent stylesheet without its universal pseudo-element rules.

    ``::marker`` and the footnote and note pseudo-elements match every element, so WeasyPrint computes
    six extra styles for each one; a bill has no lists or notes, and dropping those rules takes about a
    third off its layout time. Everything else in the stylesheet is kept as it is.
    """
    from weasyprint import CSS
    from weasyprint.css.counters import CounterStyle
    from weasyprint.html import UA

    lean = "\n".join(line for line in UA.splitlines()
                      if not line.startswith(("::marker", "::footnote-", "::note-")))
    return CSS(string=lean, counter_style=CounterStyle())


@lru_cache(maxsize=1)
def _bill_html_class():
    from weasyprint import HTML

    class BillHTML(HTML):
        # WeasyPrint 70 asks the document for its user-agent stylesheets here.
        def _ua_stylesheets(self, forms=False):
            return [_user_agent_stylesheet()]

    return BillHTML


def _bill_html(html: str):
    return _bill_html_class()(string=html, base_url=str(settings.BASE_DIR))


@lru_cache(maxsize=1)
def _stylesheet():
    from weasyprint import CSS

    return CSS(string=get_template("billing/bill.css").template.source)


def _layout(views: list[dict]):
    """One WeasyPrint document for these bills, one sheet each."""
    html = render_to_string("billing/bill.html", {"bills": views})
    return _bill_html(html).render(stylesheets=[_stylesheet()])


def _pdf_date(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("D:%Y%m%d%H%M%SZ")


def _finisher(*, title: str, author: str, created: datetime):
    def finish(document, pdf):
        pdf.info["Title"] = pydyf.String(title)
        pdf.info["Author"] = pydyf.String(author)
        pdf.info["CreationDate"] = pydyf.String(_pdf_date(created))
        pdf.info["ModDate"] = pydyf.String(_pdf_date(created))
    return finish


def _write(document, pages, *, title: str, author: str, created: datetime) -> bytes:
    out = io.BytesIO()
    document.copy(pages).write_pdf(out, finisher=_finisher(title=title, author=author, created=created))
    return out.getvalue()


def _pages_by_bill(document, views: list[dict]) -> dict[int, list]:
    """Each bill is one sheet: ``.bill`` is a fixed Letter-size box that clips what would overflow."""
    if len(document.pages) != len(views):
        raise RuntimeError(f"{len(views)} bills laid out on {len(document.pages)} pages; a bill must fill "
                           "exactly one sheet (see billing/bill.css)")
    return {view["pk"]: [page] for view, page in zip(views, document.pages, strict=True)}


def _render_files(views: list[dict]) -> dict[int, bytes]:
    out = {}
    author = views[0]["utility_name"] if views else ""
    for start in range(0, len(views), LAYOUT_BATCH):
        batch = views[start:start + LAYOUT_BATCH]
        document = _layout(batch)
        pages = _pages_by_bill(document, batch)
        for view in batch:
            out[view["pk"]] = _write(document, pages[view["pk"]], title=view["title"], author=author,
                                     created=view["created_at"])
    return out


def bills_pdf_files(*, bills) -> dict[int, bytes]:
    """One PDF file per bill, keyed by bill id."""
    return _render_files(bill_views(_load(b.pk for b in bills)))


def bill_pdf_render(*, bill: Bill) -> bytes:
    return bills_pdf_files(bills=[bill])[bill.pk]


def bills_pdf_render(*, bills, title: str = "Water bills", progress=None) -> bytes:
    """Many bills in one PDF, in the order given, each starting a new page.

    ``progress`` (a callable taking a count of bills) is called as batches are laid out.
    """
    bills = list(bills)
    if not bills:
        raise ValueError("no bills to render")
    order = {b.pk: i for i, b in enumerate(bills)}
    views = sorted(bill_views(_load(order)), key=lambda v: order[v["pk"]])
    pages, first = [], None
    for start in range(0, len(views), LAYOUT_BATCH):
        document = _layout(views[start:start + LAYOUT_BATCH])
        first = first or document
        pages.extend(document.pages)
        if progress:
            progress(len(views[start:start + LAYOUT_BATCH]))
    created = max(v["created_at"] for v in views)
    return _write(first, pages, title=title, author=views[0]["utility_name"], created=created)


# --- Storage and tasks -------------------------------------------------------------------------------

def bill_pdf_name(bill: Bill) -> str:
    # Under Bill.pdf's upload_to (bills/%Y/%m/) by bill date; the public id keeps names unguessable.
    return f"bills/{bill.bill_date:%Y/%m}/{bill.number}-{bill.public_id}.pdf"


def bill_pdfs_store(*, bill_ids) -> int:
    """Render and store the PDFs of these bills that have none yet; returns how many were stored."""
    bills = list(Bill.objects.filter(Q(pdf="") | Q(pdf__isnull=True), pk__in=list(bill_ids))
                 .exclude(status=Bill.Status.VOID).only("id"))
    if not bills:
        return 0
    files = bills_pdf_files(bills=bills)
    return sum(bill_pdf_keep(bill_id=bill.pk, content=files[bill.pk]) for bill in bills)


def bill_pdf_keep(*, bill_id: int, content: bytes) -> bool:
    """Store ``content`` as the bill's PDF unless a readable one is stored by now; True when it was.

    Only the ``pdf`` column is written: an issued bill's figures never change (PostgreSQL refuses any other
    change), and a void bill keeps no file. Safe to run twice or concurrently: the bill's row is locked
    while its file is written, so requests rendering one bill at once store one file, and a file at the
    bill's name that no bill holds yet (left by a crashed attempt) is replaced, not kept beside.
    """
    with transaction.atomic():
        bill = (Bill.objects.select_for_update().exclude(status=Bill.Status.VOID)
                .only("id", "number", "public_id", "bill_date", "pdf").filter(pk=bill_id).first())
        if bill is None or (bill.pdf and default_storage.exists(bill.pdf.name)):
            return False
        name = bill_pdf_name(bill)
        if default_storage.exists(name):
            default_storage.delete(name)
        saved = default_storage.save(name, ContentFile(content))
        Bill.objects.filter(pk=bill.pk).update(pdf=saved)
        return True


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
            bill_pdf_keep(bill_id=bill.pk, content=content)
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


def book_bills(*, book: int, bill_date: date):
    """A book's live bills of one bill date in account order, as the mail house wants them."""
    return (Bill.objects.filter(account__book=book, bill_date=bill_date).exclude(status=Bill.Status.VOID)
            .order_by("account__account_no"))

