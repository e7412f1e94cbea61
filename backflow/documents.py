"""Backflow compliance notices and the annual summary, printed with the bill's look (``core.papers``)."""

from django.core.files.base import ContentFile
from django.db import transaction

from billing.models import Utility
from core.dates import fmt_day
from core.money import fmt_dollars
from core.papers import Paper, paper_pdf

from .models import ComplianceNotice
from .policy import backflow_policy

METHOD_WORDS = {
    "first_class_mail": "first-class mail", "personal": "personal delivery", "certified_mail": "certified mail",
    "registered_mail": "registered mail, return receipt requested",
    "suitable_age_and_mail": "delivery to a person of suitable age and discretion, and first-class mail",
}


def notice_paper(notice: ComplianceNotice) -> Paper:
    utility = Utility.objects.get()
    rule = backflow_policy().notices[notice.kind]
    account = notice.account
    facts = [("Account number", account.account_no), ("Service address", account.premises.service_address),
             ("Served on", f"{fmt_day(notice.served_on)} by {METHOD_WORDS.get(notice.method, notice.method)}"
              + (f", article {notice.article_number}" if notice.article_number else ""))]
    if notice.device_id:
        facts.append(("Device", f"{notice.device.type} {notice.device.serial}, {notice.device.size}\""))
    if notice.deadline:
        facts.append(("Act by", fmt_day(notice.deadline)))
    paragraphs = [rule.words]
    if notice.due_for and notice.kind in ("test_due", "overdue"):
        paragraphs.append(f"The test was due on {fmt_day(notice.due_for)}. Have it tested by a New York State "
                          "certified backflow tester, who files the report with us.")
    if notice.per_day:
        paragraphs.append(f"A fine of {fmt_dollars(notice.per_day)} is imposed for each day the violation continues "
                          f"after this notice ({notice.citation}).")
    if notice.largest_pipe_inches:
        inches = f"{notice.largest_pipe_inches.normalize():f}"
        paragraphs.append(f"Failure to deliver the certification makes the owner subject to a fine of up to $25 per "
                          f"day beyond the 180th day after this notice, multiplied by the {inches} inches of the "
                          "largest pipe supplying the premises (§ 141-11 B).")
    if notice.shortened_to:
        paragraphs.append(f"The period is shortened to {fmt_day(notice.shortened_to)} by {notice.shortened_by}: "
                          f"{notice.shortened_reason}")
    table = [("Fee due", fmt_dollars(notice.amount))] if notice.amount else []
    return Paper(
        title=notice.get_kind_display().upper(), utility_name=utility.name,
        utility_header="\n".join([utility.office_address, utility.phone]).strip(), facts=facts,
        addressee=f"{account.owner.name}\n{account.owner.mailing_address}", paragraphs=paragraphs, table=table,
        warning="", footer=f"{utility.name}: backflow and cross-connection control, {notice.citation}.",
        created_at=notice.created_at)


def notice_pdf(notice: ComplianceNotice) -> bytes:
    return paper_pdf(notice_paper(notice))


def notice_pdf_store(*, notice_id: int) -> None:
    with transaction.atomic():
        notice = (ComplianceNotice.objects.select_for_update(of=("self",))
                  .select_related("account__premises", "account__owner", "device").get(pk=notice_id))
        if notice.pdf:
            return
        notice.pdf.save(f"backflow-{notice.kind}-{notice.pk}.pdf", ContentFile(notice_pdf(notice)), save=False)
        ComplianceNotice.objects.filter(pk=notice.pk).update(pdf=notice.pdf.name)
