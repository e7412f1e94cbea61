"""Paper notices, printed: one PDF of the chosen notices with the office's letterhead, in the mail house's order (by
the ZIP code of the address, then account, as the bills' print file), and the day's print file the nightly job makes
of every paper notice not yet printed (``MEDIA_ROOT/notices/paper-notices-DATE.pdf``). Each notice printed keeps the
day it was printed (``printed_on``)."""

from datetime import date
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from billing.ordinance import ordinance_on
from billing.services.mail_files import zip_code
from core.documents import PdfInfo, pdf_one_file
from core.papers import STYLESHEET, TEMPLATE, Paper
from ordinance.selectors import utility_required

from .models import CustomerNotice


def print_file_path(on: date) -> Path:
    return Path(settings.MEDIA_ROOT) / "notices" / f"paper-notices-{on.isoformat()}.pdf"


def paper_notices_pdf(notices: list[CustomerNotice], *, on: date) -> bytes:
    """The notices as one PDF, in the mail house's order, and each marked printed (and mailed) on ``on``."""
    notices = sorted(notices, key=lambda n: (zip_code(n.sent_to), n.account.account_no, n.pk))
    utility = ordinance_on(on).utility
    office = utility_required()
    header = "\n".join([office.office_address, office.phone]).strip()
    now = timezone.now()
    papers = [Paper(title=n.subject, utility_name=utility.name, utility_header=header,
                    facts=[("Account number", n.account.account_no)], addressee=n.sent_to,
                    paragraphs=[line.strip() for line in n.body.splitlines() if line.strip()], table=[], warning="",
                    footer=f"{utility.name}, account {n.account.account_no}.", created_at=now, lang=n.language)
              for n in notices]
    pdf = pdf_one_file(template=TEMPLATE, stylesheet=STYLESHEET, context_name="papers", documents=papers,
                       info=PdfInfo(title="Notices to mail", author=utility.name, created=now), batch=25)
    CustomerNotice.objects.filter(pk__in=[n.pk for n in notices], printed_on__isnull=True).update(
        printed_on=on, sent_at=now)
    return pdf


def nightly_paper_notices(*, as_of: date) -> dict:
    """The nightly job's step: the day's print file of every paper notice not yet printed."""
    waiting = list(CustomerNotice.objects.filter(channel=CustomerNotice.Channel.PAPER, printed_on__isnull=True)
                   .select_related("account"))
    if not waiting:
        return {"paper_notices": 0}
    path = print_file_path(as_of)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(paper_notices_pdf(waiting, on=as_of))
    return {"paper_notices": len(waiting)}
