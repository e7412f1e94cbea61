"""Backflow compliance notices and the annual summary, printed with the bill's look (``core.papers``)."""

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from core.dates import fmt_day
from core.i18n import customer_language
from core.money import fmt_dollars
from core.papers import Paper, paper_pdf
from ordinance.selectors import utility_required

from .models import ComplianceNotice
from .policy import backflow_policy

# How a notice was served, in words a paper translates.
METHOD_WORDS = {
    "first_class_mail": gettext_noop("first-class mail"), "personal": gettext_noop("personal delivery"),
    "certified_mail": gettext_noop("certified mail"),
    "registered_mail": gettext_noop("registered mail, return receipt requested"),
    "suitable_age_and_mail": gettext_noop("delivery to a person of suitable age and discretion, and first-class "
                                          "mail"),
}


def notice_paper(notice: ComplianceNotice) -> Paper:
    """The notice, in the language of the account it is served for; the ordinance's own words (the rule's) stay
    as written."""
    with customer_language(notice.account):
        return _notice_paper(notice)


def _notice_paper(notice: ComplianceNotice) -> Paper:
    utility = utility_required()
    rule = backflow_policy(notice.served_on).notices[notice.kind]
    account = notice.account
    served = _("%(day)s by %(method)s") % {"day": fmt_day(notice.served_on),
                                           "method": _(METHOD_WORDS.get(notice.method, notice.method))}
    if notice.article_number:
        served += ", " + _("article %(number)s") % {"number": notice.article_number}
    facts = [(_("Account number"), account.account_no), (_("Service address"), account.premises.service_address),
             (_("Served on"), served)]
    if notice.device_id:
        facts.append((_("Device"), f"{notice.device.type} {notice.device.serial}, {notice.device.size}\""))
    if notice.deadline:
        facts.append((_("Act by"), fmt_day(notice.deadline)))
    paragraphs = [rule.words]
    if notice.due_for and notice.kind in ("test_due", "overdue"):
        paragraphs.append(_("The test was due on %(day)s. Have it tested by a New York State certified backflow "
                            "tester, who files the report with us.") % {"day": fmt_day(notice.due_for)})
    if notice.per_day:
        paragraphs.append(_("A fine of %(amount)s is imposed for each day the violation continues after this notice "
                            "(%(citation)s).") % {"amount": fmt_dollars(notice.per_day), "citation": notice.citation})
    if notice.largest_pipe_inches:
        inches = f"{notice.largest_pipe_inches.normalize():f}"
        paragraphs.append(_("Failure to deliver the certification makes the owner subject to a fine of up to $25 per "
                            "day beyond the 180th day after this notice, multiplied by the %(inches)s inches of the "
                            "largest pipe supplying the premises (§ 141-11 B).") % {"inches": inches})
    if notice.shortened_to:
        paragraphs.append(_("The period is shortened to %(day)s by %(by)s: %(reason)s") % {
            "day": fmt_day(notice.shortened_to), "by": notice.shortened_by, "reason": notice.shortened_reason})
    table = [(_("Fee due"), fmt_dollars(notice.amount))] if notice.amount else []
    return Paper(
        title=str(notice.get_kind_display()).upper(), utility_name=utility.name,
        utility_header="\n".join([utility.office_address, utility.phone]).strip(), facts=facts,
        addressee=f"{account.owner.name}\n{account.owner.mailing_address}", paragraphs=paragraphs, table=table,
        warning="", footer=_("%(utility)s: backflow and cross-connection control, %(citation)s.") % {
            "utility": utility.name, "citation": notice.citation},
        created_at=notice.created_at, lang=account.language)


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
