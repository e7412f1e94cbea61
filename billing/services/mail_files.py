"""The mail house's print file of a run, made by a worker from the run's page, and the messages printed on bills.

* ``mail_file_request``: the clerk asks from the run's page (the run must be done); a ``MailFile`` row waits
  and ``mail_file_requested`` hands it to a worker (``billing.receivers``).
* ``mail_file_make``: the run's live bills for paper — paperless accounts with an address to e-mail are left
  out and counted (``accounts.selectors.emailed_bills``) — sorted by the ZIP code of the address each was issued
  to (then account number; an address without a ZIP code last), in one PDF: each bill's stored PDF, the pages
  put together (``pages_joined``: the font subsets the bills share kept once), the ones not stored yet rendered
  and stored first. Where a message for the run's bills was written or changed after the run began, the stored
  PDFs may lack it, and every bill is laid out fresh instead. A failure is kept on the row with its error;
  asking again makes a new file.

The messages bills print are ``billing.selectors.bill_messages``.
"""

import io
import logging
import re

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from accounts.selectors import emailed_bills
from core.errors import ApplicationError

from ..models import Bill, BillingRun, BillMessage, MailFile
from ..signals import mail_file_requested
from .bill_pdfs import bill_pdfs_store, bills_pdf_render

logger = logging.getLogger(__name__)
ZIP = re.compile(r"\b(\d{5})(?:-\d{4})?\s*$")
NO_ZIP = "99999z"  # sorts after every ZIP code


def zip_code(address: str) -> str:
    """The ZIP code ending an address (its last line), or ``NO_ZIP``."""
    lines = [line for line in address.strip().splitlines() if line.strip()]
    found = ZIP.search(lines[-1]) if lines else None
    return found.group(1) if found else NO_ZIP


def mail_file_request(*, run: BillingRun, actor) -> MailFile:
    if run.status != BillingRun.Status.DONE:
        raise ApplicationError(f"the run is {run.get_status_display().lower()}; its print file is made once it is "
                               "done", field="run")
    if not Bill.objects.filter(run=run).exclude(status=Bill.Status.VOID).exists():
        raise ApplicationError("the run issued no bills to print", field="run")
    with transaction.atomic():
        mail_file = MailFile.objects.create(run=run, created_by=actor)
        transaction.on_commit(lambda: mail_file_requested.send(sender=MailFile, mail_file_id=mail_file.pk))
    return mail_file


def mail_file_make(*, mail_file_id: int) -> MailFile:
    mail_file = MailFile.objects.select_related("run").get(pk=mail_file_id)
    if mail_file.status != MailFile.Status.QUEUED:
        return mail_file  # made already (a redelivered task)
    try:
        live = Bill.objects.filter(run=mail_file.run).exclude(status=Bill.Status.VOID)
        emailed = live.filter(emailed_bills("account__")).count()
        bills = list(live.exclude(emailed_bills("account__")).only("id", "recipient_address", "account__account_no")
                     .select_related("account"))
        bills.sort(key=lambda b: (zip_code(b.recipient_address), b.account.account_no))
        run = mail_file.run
        MailFile.objects.filter(pk=mail_file.pk).update(to_print=len(bills))
        progress = _progress(mail_file.pk)
        if bills:
            title = f"Water bills of the run of {run.run_on}, by ZIP code"
            if _messages_changed_since(run, bills):
                data = bills_pdf_render(bills=bills, title=title, progress=progress)
            else:
                ids = [b.pk for b in bills]
                for start in range(0, len(ids), PROGRESS_STEP):  # any not rendered yet (stored ones are skipped)
                    bill_pdfs_store(bill_ids=ids[start:start + PROGRESS_STEP])
                    progress(len(ids[start:start + PROGRESS_STEP]))
                stored = {b.pk: b.pdf.name for b in Bill.objects.filter(pk__in=[b.pk for b in bills]).only("pdf")}
                data = pages_joined([stored[b.pk] for b in bills], title=title)
            mail_file.file.save(f"run-{run.pk}-print-{mail_file.pk}.pdf", ContentFile(data), save=False)
        mail_file.bills, mail_file.emailed, mail_file.status = len(bills), emailed, MailFile.Status.DONE
        mail_file.to_print = mail_file.laid_out = len(bills)
    except Exception as exc:  # kept for the clerk on the run's page, and in the worker's log with its traceback
        logger.exception("print file %s of run %s failed", mail_file.pk, mail_file.run_id)
        mail_file.status, mail_file.error = MailFile.Status.FAILED, f"{type(exc).__name__}: {exc}"[:2000]
        mail_file.finished_at = timezone.now()
        mail_file.save(update_fields=["status", "error", "finished_at"])
        return mail_file
    mail_file.finished_at = timezone.now()
    mail_file.save(update_fields=["file", "bills", "to_print", "laid_out", "emailed", "status", "finished_at"])
    return mail_file


PROGRESS_STEP = 200  # bills stored between two counts of the progress the run's page shows


def _progress(mail_file_id: int):
    """A counter of bills laid out, kept on the print file's row for the run's page to show."""
    done = 0

    def laid_out(count: int) -> None:
        nonlocal done
        done += count
        MailFile.objects.filter(pk=mail_file_id).update(laid_out=done)

    return laid_out


def _messages_changed_since(run: BillingRun, bills: list[Bill]) -> bool:
    """Whether a message for these bills' dates was written, changed or deleted after the run began."""
    first, last = min(b.bill_date for b in bills), max(b.bill_date for b in bills)
    return BillMessage.history.filter(first_bill_date__lte=last, last_bill_date__gte=first,
                                      history_date__gte=run.created_at).exists()


JOIN_PART = 500  # files joined at a time: a part is written out before the next is opened


def pages_joined(names: list[str], *, title: str) -> bytes:
    """One PDF of the stored files ``names`` (each a bill's), their pages in order. Each bill's file embeds its
    own copy of the font subsets most bills share (``core.documents``): identical font files are kept once,
    so the print file grows by each page's drawing, not by its fonts. The files are joined ``JOIN_PART`` at a
    time and the parts then joined, so no more than one part's files are open at once (a month's 20,000
    files held open together took some 10 GB)."""

    def read(name: str) -> bytes:
        with default_storage.open(name, "rb") as fh:
            return fh.read()

    parts = [_joined([read(name) for name in names[start:start + JOIN_PART]], title=title)
             for start in range(0, len(names), JOIN_PART)]
    return parts[0] if len(parts) == 1 else _joined(parts, title=title)


def _joined(files: list[bytes], *, title: str) -> bytes:
    import pikepdf

    joined = pikepdf.Pdf.new()
    sources = []  # open until the file is saved: pikepdf copies a page's streams when it writes them
    for data in files:
        sources.append(pikepdf.Pdf.open(io.BytesIO(data)))
        joined.pages.extend(sources[-1].pages)
    kept: dict[bytes, pikepdf.Object] = {}
    for page in joined.pages:
        for font in (page.obj.get("/Resources", {}).get("/Font", {}) or {}).values():
            for descendant in font.get("/DescendantFonts", [font]):
                descriptor = descendant.get("/FontDescriptor")
                if descriptor is None:
                    continue
                for key in ("/FontFile2", "/FontFile3", "/FontFile"):
                    stream = descriptor.get(key)
                    if stream is not None:
                        raw = stream.read_raw_bytes()
                        descriptor[key] = kept.setdefault(raw, stream)
    joined.docinfo["/Title"] = title
    out = io.BytesIO()
    joined.remove_unreferenced_resources()
    joined.save(out, compress_streams=True, object_stream_mode=pikepdf.ObjectStreamMode.generate)
    return out.getvalue()
