"""The termination papers, printed with the bill's look (``core.documents`` renders them): the notice of the
grounds and the hearing for each recipient, the notice of the determination (or of the Commission's final
decision), and the field crew's work order. Each view is formatted here, so the template only places text.

A notice and a determination notice are rendered once and stored (``notice_pdf_store``,
``determination_pdf_store``); a work order is printed on demand.
"""

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils.translation import get_language, gettext_noop
from django.utils.translation import gettext as _

from core.dates import fmt_day, fmt_time
from core.i18n import customer_language
from core.money import fmt_dollars
from core.papers import Paper, paper_pdf

from .models import Notice, TerminationCase, WorkOrder
from .policy import METHOD_WORDS, termination_policy
from .selectors import case_bills, case_deadlines

# The recipient's role and the hearing officer's outcome, in words a paper translates.
ROLE_WORDS = {"owner": gettext_noop("owner"), "occupant": gettext_noop("occupant")}
OUTCOME_WORDS = {"terminate": gettext_noop("Terminate service"), "arrangement": gettext_noop("Payment arrangement"),
                 "other": gettext_noop("Other appropriate action"), "dismiss": gettext_noop("Dismiss")}


def _header(policy) -> str:
    return "\n".join([policy.office_address, policy.phone]).strip()


def notice_paper(notice: Notice) -> Paper:
    """The notice, in the language of the account it is served for."""
    with customer_language(notice.case.account):
        return _notice_paper(notice)


def _notice_paper(notice: Notice) -> Paper:
    case, policy = notice.case, termination_policy(notice.served_on)
    account = case.account
    deadlines = case_deadlines(case, policy=policy)
    hearing = fmt_day(notice.hearing_on) + (" " + _("at %(time)s") % {"time": fmt_time(case.hearing_time)}
                                            if case.hearing_time else "")
    if case.grounds == "nonpayment" and not get_language().startswith("en"):
        # The office words the grounds in English when it opens the case; in another language the notice names
        # them from the bills, which the table below lists one by one.
        grounds = _("Nonpayment of the bills listed below. The amount delinquent is %(amount)s.") % {
            "amount": fmt_dollars(case.amount_delinquent)}
    elif case.grounds == "nonpayment":
        grounds = _("Nonpayment: %(detail)s. The amount delinquent is %(amount)s.") % {
            "detail": case.grounds_detail, "amount": fmt_dollars(case.amount_delinquent)}
    else:
        grounds = _("A violation of %(section)s: %(detail)s.") % {"section": case.section,
                                                                   "detail": case.grounds_detail or case.section}
    request_by = (fmt_day(deadlines.request_by) if notice.received_on and deadlines.request_by
                  else _("%(days)s days after you receive this notice") % {"days": policy.request_days})
    values = {"utility": policy.utility_name, "section": case.section, "officer": policy.hearing_officer,
              "hearing": hearing, "place": case.hearing_place or policy.hearing_place, "clerk": policy.issued_by,
              "portal": f"{settings.SITE_URL.rstrip('/')}/portal/", "request_by": request_by,
              "body": policy.appeal_body, "days": policy.appeal_days, "citation": policy.cite("appeal")}
    paragraphs = [
        _("TAKE NOTICE that the %(utility)s intends to terminate water service to the premises named above on the "
          "following grounds (%(section)s):") % values,
        grounds,
        _("A hearing will be held before %(officer)s on %(hearing)s at %(place)s, where you may appear, be heard "
          "and present proof.") % values,
        _("To ask for the hearing, write to the %(clerk)s at the address above, or make the request online at "
          "%(portal)s with your account number. Your written request must be made by %(request_by)s.") % values,
        _("If service is terminated after the hearing, you may appeal to %(body)s within %(days)s days after "
          "notice of the determination is mailed, with a written statement of your grounds (%(citation)s). Paying "
          "the amount delinquent in full before service is shut off closes this matter.") % values,
    ]
    table = [(_("Bill %(number)s dated %(day)s, due %(due)s") % {
                "number": cb.bill.number, "day": fmt_day(cb.bill.bill_date), "due": fmt_day(cb.bill.due_date)},
              fmt_dollars(cb.amount)) for cb in case_bills(case)]
    if table:
        # Named as the portal, the case page and the counter name it: what stops the shut-off when served.
        table.append((_("To stop the shut-off, pay"), fmt_dollars(case.amount_delinquent)))
    served = _("%(day)s by %(method)s") % {"day": fmt_day(notice.served_on), "method": _(METHOD_WORDS[notice.method])}
    if notice.article_number:
        served += ", " + _("article %(number)s") % {"number": notice.article_number}
    footer = _("Issued by the %(clerk)s under %(citation)s") % {"clerk": policy.issued_by,
                                                                "citation": policy.citation}
    if policy.is_policy:
        footer += " " + _("(periods applied as office policy: the local law sets none)")
    footer += (". " + _("Questions: %(phone)s.") % {"phone": policy.phone}) if policy.phone else "."
    return Paper(
        title=_("NOTICE OF HEARING AND TERMINATION OF WATER SERVICE"),
        utility_name=policy.utility_name, utility_header=_header(policy),
        facts=[(_("Case"), case.number), (_("Account number"), account.account_no),
               (_("Service address"), account.premises.service_address),
               (_("Served on"), served),
               (_("To"), f"{notice.name}, {_(ROLE_WORDS[notice.role])}"),
               (_("Hearing"), hearing)],
        addressee=f"{notice.name}\n{notice.address}", paragraphs=paragraphs, table=table,
        warning=policy.request_warning() + f" ({policy.cite('request')})", footer=footer,
        created_at=notice.created_at, lang=account.language)


def determination_paper(case: TerminationCase) -> Paper:
    """The notice of the determination (or of the final decision on appeal), in the account's language."""
    with customer_language(case.account):
        return _determination_paper(case)


def _determination_paper(case: TerminationCase) -> Paper:
    policy = termination_policy()
    account = case.account
    deadlines = case_deadlines(case, policy=policy)
    if case.decided_on:
        title = _("NOTICE OF FINAL DECISION ON APPEAL")
        values = {"body": policy.appeal_body[0].upper() + policy.appeal_body[1:],
                  "day": fmt_day(case.appeal_hearing_on), "citation": policy.cite("appeal")}
        body = [(_("%(body)s heard your appeal on %(day)s and upheld the determination to terminate water service. "
                   "Its decision is final (%(citation)s).") if case.decision == "uphold" else
                 _("%(body)s heard your appeal on %(day)s and reversed the determination to terminate water "
                   "service. Its decision is final (%(citation)s).")) % values]
        when = case.decided_on
    else:
        title = _("NOTICE OF DETERMINATION")
        values = {"officer": policy.hearing_officer, "outcome": _(OUTCOME_WORDS[case.outcome])}
        body = [(_("Determination of %(officer)s (made by default: no timely written request for a hearing was "
                   "received): %(outcome)s.") if case.by_default else
                 _("Determination of %(officer)s: %(outcome)s.")) % values
                + (f" {case.outcome_notes}" if case.outcome_notes else "")]
        if case.outcome == "terminate":
            body.append(_("You may appeal to %(body)s within %(days)s days after this notice is mailed, that is by "
                          "%(day)s, with a written statement of your grounds (%(citation)s). Paying the amount "
                          "delinquent in full before service is shut off closes this matter.") % {
                "body": policy.appeal_body, "days": policy.appeal_days, "day": fmt_day(deadlines.appeal_by),
                "citation": policy.cite("appeal")})
        when = case.determination_mailed_on
    return Paper(
        title=title, utility_name=policy.utility_name, utility_header=_header(policy),
        facts=[(_("Case"), case.number), (_("Account number"), account.account_no),
               (_("Service address"), account.premises.service_address), (_("Mailed on"), fmt_day(when))],
        addressee=f"{account.owner.name}\n{account.owner.mailing_address}", paragraphs=body, table=[],
        warning="", footer=f"{policy.utility_name}, {policy.citation}.", created_at=case.created_at,
        lang=account.language)


def work_order_paper(order: WorkOrder) -> Paper:
    case, policy = order.case, termination_policy()
    account = case.account
    meters = ", ".join(f"{i.meter.serial} ({i.meter.size}\")" for i in account.installations.filter(
        removed_on__isnull=True).select_related("meter"))
    action = "SHUT OFF" if order.kind == WorkOrder.Kind.SHUT_OFF else "RESTORE"
    return Paper(
        title=f"WORK ORDER: {action} WATER SERVICE",
        utility_name=policy.utility_name, utility_header=_header(policy),
        facts=[("Work order", str(order.pk)), ("Case", case.number), ("Account number", account.account_no),
               ("Service address", account.premises.service_address),
               ("Occupant" if account.occupant_id else "Owner", (account.occupant or account.owner).name),
               ("Meter", meters or "—"),
               ("Issued on", fmt_day(order.issued_on))],
        addressee=f"Field crew\n{account.premises.service_address}",
        paragraphs=[f"{action.capitalize()} water service at the curb stop of the premises above.",
                    (f"Before shutting off, call the office: a payment in full cancels this order. Do not shut off "
                     f"if the occupant shows a receipt dated on or after {fmt_day(order.issued_on)}."
                     if order.kind == WorkOrder.Kind.SHUT_OFF else "Restore service and check the meter registers."),
                    "Done on: ____________   Time: ________   Curb stop position: ____________",
                    "Crew: ______________________________   Meter reading: ______________"],
        table=[], warning="", footer=f"{policy.utility_name}, case {case.number}.", created_at=order.created_at)


def notice_pdf(notice: Notice) -> bytes:
    return paper_pdf(notice_paper(notice))


def notice_pdf_store(*, notice_id: int) -> None:
    with transaction.atomic():
        notice = Notice.objects.select_for_update().select_related("case__account__premises").get(pk=notice_id)
        if notice.pdf:
            return
        notice.pdf.save(f"{notice.case.number}-{notice.role}-{notice.pk}.pdf", ContentFile(notice_pdf(notice)),
                        save=False)
        Notice.objects.filter(pk=notice.pk).update(pdf=notice.pdf.name)


def determination_pdf_store(*, case_id: int) -> None:
    with transaction.atomic():
        case = TerminationCase.objects.select_for_update().select_related("account__premises",
                                                                          "account__owner").get(pk=case_id)
        name = f"{case.number}-{'decision' if case.decided_on else 'determination'}.pdf"
        case.determination_pdf.save(name, ContentFile(paper_pdf(determination_paper(case))), save=False)
        TerminationCase.objects.filter(pk=case.pk).update(determination_pdf=case.determination_pdf.name)


def notices_render_pending() -> int:
    """Render and store every notice whose PDF is not stored yet (a crash between service and rendering)."""
    ids = list(Notice.objects.filter(pdf="").values_list("id", flat=True))
    for notice_id in ids:
        notice_pdf_store(notice_id=notice_id)
    return len(ids)
