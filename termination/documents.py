"""The termination papers, printed with the bill's look (``core.documents`` renders them): the notice of the
grounds and the hearing for each recipient, the notice of the determination (or of the Commission's final
decision), and the field crew's work order. Each view is formatted here, so the template only places text.

A notice and a determination notice are rendered once and stored (``notice_pdf_store``,
``determination_pdf_store``); a work order is printed on demand.
"""

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction

from core.dates import fmt_day
from core.money import fmt_dollars
from core.papers import Paper, paper_pdf

from .models import Notice, TerminationCase, WorkOrder
from .policy import METHOD_WORDS, termination_policy
from .selectors import case_bills, case_deadlines


def _header(policy) -> str:
    return "\n".join([policy.office_address, policy.phone]).strip()


def notice_paper(notice: Notice) -> Paper:
    case, policy = notice.case, termination_policy()
    account = case.account
    deadlines = case_deadlines(case, policy=policy)
    hearing = fmt_day(notice.hearing_on) + (f" at {notice.case.hearing_time:%-I:%M %p}" if case.hearing_time else "")
    if case.grounds == "nonpayment":
        grounds = f"Nonpayment: {case.grounds_detail}. The amount delinquent is {fmt_dollars(case.amount_delinquent)}."
    else:
        grounds = f"A violation of {case.section}: {case.grounds_detail or case.section}."
    request_by = (fmt_day(deadlines.request_by) if notice.received_on and deadlines.request_by
                  else f"{policy.request_days} days after you receive this notice")
    paragraphs = [
        f"TAKE NOTICE that the {policy.utility_name} intends to terminate water service to the premises named "
        f"above on the following grounds ({case.section}):",
        grounds,
        (f"A hearing will be held before {policy.hearing_officer} on {hearing} at "
         f"{case.hearing_place or policy.hearing_place}, where you may appear, be heard and present proof."),
        (f"To ask for the hearing, write to the {policy.issued_by} at the address above, or make the request "
         f"online at {settings.SITE_URL.rstrip('/')}/portal/ with your account number. Your written request "
         f"must be made by {request_by}."),
        (f"If service is terminated after the hearing, you may appeal to {policy.appeal_body} within "
         f"{policy.appeal_days} days after notice of the determination is mailed, with a written statement of "
         f"your grounds ({policy.cite('appeal')}). Paying the amount delinquent in full before service is "
         "shut off closes this matter."),
    ]
    table = [(f"Bill {cb.bill.number} dated {fmt_day(cb.bill.bill_date)}, due {fmt_day(cb.bill.due_date)}",
              fmt_dollars(cb.amount)) for cb in case_bills(case)]
    if table:
        table.append(("Amount delinquent", fmt_dollars(case.amount_delinquent)))
    return Paper(
        title="NOTICE OF HEARING AND TERMINATION OF WATER SERVICE",
        utility_name=policy.utility_name, utility_header=_header(policy),
        facts=[("Case", case.number), ("Account number", account.account_no),
               ("Service address", account.premises.service_address),
               ("Served on", f"{fmt_day(notice.served_on)} by {METHOD_WORDS[notice.method]}"
                + (f", article {notice.article_number}" if notice.article_number else "")),
               ("To", f"{notice.name}, {notice.get_role_display().lower()}"),
               ("Hearing", hearing)],
        addressee=f"{notice.name}\n{notice.address}", paragraphs=paragraphs, table=table,
        warning=policy.request_warning() + f" ({policy.cite('request')})",
        footer=f"Issued by the {policy.issued_by} under {policy.citation}"
               + (" (periods applied as office policy: the local law sets none)" if policy.is_policy else "")
               + (f". Questions: {policy.phone}." if policy.phone else "."),
        created_at=notice.created_at)


def determination_paper(case: TerminationCase) -> Paper:
    policy = termination_policy()
    account = case.account
    deadlines = case_deadlines(case, policy=policy)
    if case.decided_on:
        title = "NOTICE OF FINAL DECISION ON APPEAL"
        body = [f"{policy.appeal_body[0].upper()}{policy.appeal_body[1:]} heard your appeal on "
                f"{fmt_day(case.appeal_hearing_on)} and {'upheld' if case.decision == 'uphold' else 'reversed'} "
                f"the determination to terminate water service. Its decision is final ({policy.cite('appeal')})."]
        when = case.decided_on
    else:
        title = "NOTICE OF DETERMINATION"
        outcome = case.get_outcome_display()
        default = " (made by default: no timely written request for a hearing was received)"
        body = [f"Determination of {policy.hearing_officer}" + (default if case.by_default else "")
                + f": {outcome}." + (f" {case.outcome_notes}" if case.outcome_notes else "")]
        if case.outcome == "terminate":
            body.append(f"You may appeal to {policy.appeal_body} within {policy.appeal_days} days after this "
                        f"notice is mailed, that is by {fmt_day(deadlines.appeal_by)}, with a written statement of "
                        f"your grounds ({policy.cite('appeal')}). Paying the amount delinquent in full before "
                        "service is shut off closes this matter.")
        when = case.determination_mailed_on
    return Paper(
        title=title, utility_name=policy.utility_name, utility_header=_header(policy),
        facts=[("Case", case.number), ("Account number", account.account_no),
               ("Service address", account.premises.service_address), ("Mailed on", fmt_day(when))],
        addressee=f"{account.owner.name}\n{account.owner.mailing_address}", paragraphs=body, table=[],
        warning="", footer=f"{policy.utility_name}, {policy.citation}.", created_at=case.created_at)


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
