"""Termination cases from opening to restoration, each step refused with every reason and its section.

The steps follow the due process of Mineola Article II (§§ 45.31–45.35) with the installed preset's periods
(``termination.policy``): open → serve the notice on every recipient → a written request (or none) → the
hearing officer's determination and its mailed notice → the appeal window, or the appeal and the
Commission's decision → the shut-off order, issued only when ``shutoff_refusals`` finds nothing → carried
out (the account is shut off and the disconnect charge is charged) → restored (the connect charge). Payment
in full before the shut-off closes the case (``cases_close_paid``, on every ``payment_posted``).

Every step is a ``core.workflow.transition`` (locked, audited with the actor) and a ``CaseEvent`` dated the
day it happened. Dates are checked against today (nothing is recorded in the future) and against the
ordinance's windows; a late hearing request or appeal is accepted and flagged, never dropped.
"""

from datetime import date, time

from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from billing.models import Bill
from core.clock import after_errors, refuse_future, today
from core.csvimport import chunked
from core.dates import fmt_day
from core.errors import ApplicationError, FieldError, refuse_any
from core.models import StatusChange
from core.money import ZERO, fmt_dollars
from core.workflow import transition

from ..documents import determination_pdf_store, notice_pdf_store
from ..models import ACTIVE, CLOSED, CaseBill, Interruption, Notice, TerminationCase
from ..policy import METHOD_WORDS, TerminationPolicy, termination_policy
from ..selectors import (
    case_deadlines,
    case_unpaid,
    current_notices,
    delinquencies,
    list_floor,
    received_on_for,
)
from ..signals import case_reopened, notice_served
from .events import case_event, case_text
from .shutoff import orders_cancel

# --- Opening ------------------------------------------------------------------------------------------------

@transaction.atomic
def case_open(*, account: Account, grounds: str, as_of: date, actor, section: str = "", detail: str = "",
              policy: TerminationPolicy | None = None) -> TerminationCase:
    """Open a case for the account. Nonpayment needs an amount delinquent on ``as_of`` under the preset's rule
    (the case keeps each delinquent bill and what it owed); a violation needs the section violated."""
    refuse_future(as_of, doing="recorded")
    policy = policy or termination_policy(as_of)
    errors = []
    if grounds not in TerminationCase.Grounds.values:
        errors.append(FieldError("grounds", f"'{grounds}' is not a ground; use nonpayment or violation "
                                            f"({policy.cite('grounds')})"))
    if account.status == Account.Status.CLOSED:
        errors.append(FieldError("account_no", f"account {account.account_no} is closed"))
    section = case_text(section, "section")
    detail = case_text(detail, "grounds_detail")
    if grounds == "violation" and not section:
        errors.append(FieldError("section", "a violation names the section violated "
                                            f"({policy.cite('grounds')})"))
    existing = TerminationCase.objects.filter(account=account, status__in=[*ACTIVE, "shut_off"]).first()
    if existing:
        errors.append(FieldError("account_no", f"account {account.account_no} already has case {existing.number} "
                                               f"({existing.get_status_display().lower()})"))
    found = None
    if grounds == "nonpayment" and not policy.nonpayment:
        errors.append(FieldError("grounds", policy.no_nonpayment))
    elif grounds == "nonpayment" and not errors:
        found = next(iter(delinquencies(as_of=as_of, account_ids=[account.pk], policy=policy, floor=ZERO)), None)
        floor = list_floor()
        if found is None:
            errors.append(FieldError("grounds", (
                f"account {account.account_no} has nothing delinquent on {as_of} under {policy.trigger.citation} "
                f"({policy.trigger.words}); nonpayment needs an amount delinquent")))
        elif found.amount < floor:
            errors.append(FieldError("amount_delinquent", (
                f"account {account.account_no} owes {fmt_dollars(found.amount)} that a shut-off may be for, below the "
                f"office's floor of {fmt_dollars(floor)} under shut-off lists (office policy, not the ordinance: "
                "the Utility page sets it)")))
    refuse_any(errors)
    if grounds == "nonpayment":
        section = section or policy.trigger.citation
        detail = detail or ("Failure to pay " + "; ".join(
            f"bill {b.number} dated {fmt_day(b.bill_date)}, due {fmt_day(b.due_date)}: " + "; ".join(b.parts)
            for b in found.bills))
    case = TerminationCase.objects.create(
        account=account, grounds=grounds, section=section, grounds_detail=detail,
        amount_delinquent=found.amount if found else ZERO, opened_on=as_of,
        opened_by=actor if getattr(actor, "pk", None) else None, hearing_place=policy.hearing_place)
    case.number = f"T-{as_of.year}-{case.pk:05d}"
    case.save(update_fields=["number"])
    if found:
        CaseBill.objects.bulk_create([CaseBill(case=case, bill_id=b.bill_id, amount=b.amount,
                                               delinquent_from=b.delinquent_from) for b in found.bills])
    what = (f"Case opened for nonpayment of {fmt_dollars(case.amount_delinquent)} ({section})" if found
            else f"Case opened for a violation of {section}")
    case_event(case, on=as_of, kind="opened", what=what, actor=actor)
    return case


def cases_open_delinquent(*, as_of: date, actor, account_nos: list[str] | None = None) -> list[TerminationCase]:
    """Open a nonpayment case for every account delinquent on ``as_of`` that has none (or those named)."""
    refuse_future(as_of, doing="recorded")
    policy = termination_policy(as_of)
    if not policy.nonpayment:
        raise ApplicationError(policy.no_nonpayment, field="grounds")
    ids = None
    if account_nos is not None:
        ids = list(Account.objects.filter(account_no__in=account_nos).values_list("id", flat=True))
    opened = []
    for d in delinquencies(as_of=as_of, account_ids=ids, policy=policy):
        if d.case_number:
            continue
        opened.append(case_open(account=Account.objects.get(pk=d.account_id), grounds="nonpayment", as_of=as_of,
                                actor=actor, policy=policy))
    return opened


# --- Notices ------------------------------------------------------------------------------------------------

def _recipient(case: TerminationCase, role: str):
    account = case.account
    if role == "owner":
        return account.owner
    if role == "occupant":
        return account.occupant if account.occupant_id else None
    return None


@transaction.atomic
def notice_serve(*, case: TerminationCase, role: str, method: str, served_on: date, hearing_on: date, actor,
                 received_on: date | None = None, article_number: str = "", hearing_time: time | None = None,
                 hearing_place: str = "", as_of: date | None = None, render: bool = True) -> Notice:
    """Record service of the notice on one recipient (owner or occupant) and render its PDF.

    Refused, naming the section, when the method is not one the preset allows, when the hearing date is too
    close to service (the earliest lawful date is named), when a mailed notice names no article number, or
    when a date is in the future."""
    policy = termination_policy(served_on)
    as_of = as_of or today()
    errors = after_errors(as_of, "service is recorded when it has happened", served_on=served_on,
                          received_on=received_on)
    if case.status not in ("open", "noticed", "no_request", "requested"):
        errors.append(FieldError("case", f"case {case.number} is {case.get_status_display().lower()}; notices are "
                                         "served before the determination"))
    recipient = _recipient(case, role)
    if role not in Notice.Role.values:
        errors.append(FieldError("to", f"'{role}' is not a recipient; use owner or occupant"))
    elif recipient is None:
        errors.append(FieldError("to", f"account {case.account.account_no} has no occupant of record; the owner "
                                       "is the recipient"))
    if method not in policy.methods:
        errors.append(FieldError("method", (
            f"'{method}' is not a way of serving this notice under {policy.cite('notice')}; use "
            + " or ".join(f"{m} ({METHOD_WORDS[m]})" for m in policy.methods))))
    article_number = case_text(article_number, "article_number")
    earliest = policy.hearing_earliest(served_on)
    if hearing_on < earliest:
        errors.append(FieldError("hearing_on", (
            f"{hearing_on} is {(hearing_on - served_on).days} days after service on {served_on}; "
            f"{policy.cite('notice')} requires the notice to be served at least {policy.notice_min_days} days "
            f"before the hearing: the earliest lawful hearing date is {earliest}")))
    if received_on is not None and received_on < served_on:
        errors.append(FieldError("received_on", f"{received_on} is before service on {served_on}"))
    refuse_any(errors)
    received_on = received_on_for(method, served_on=served_on, received_on=received_on)
    notice = Notice.objects.create(
        case=case, role=role, recipient=recipient, name=recipient.name, address=recipient.mailing_address,
        method=method, article_number=article_number, served_on=served_on, received_on=received_on,
        hearing_on=hearing_on, amount=case.amount_delinquent, served_by=actor if getattr(actor, "pk", None) else None)
    case.hearing_on = max(n.hearing_on for n in current_notices(case).values())
    if hearing_time is not None:
        case.hearing_time = hearing_time
    if hearing_place:
        case.hearing_place = case_text(hearing_place, "hearing_place")
    case.save(update_fields=["hearing_on", "hearing_time", "hearing_place"])
    what = (f"Notice served on the {role} ({recipient.name}) by {METHOD_WORDS[method]}"
            + (f", article {article_number}" if article_number else "")
            + f"; hearing {fmt_day(hearing_on)}"
            + (f"; received {fmt_day(received_on)}" if received_on else "; receipt not yet recorded"))
    case_event(case, on=served_on, kind="served", what=what, actor=actor)
    if case.status == "open":
        transition(case, to="noticed", actor=actor, note=what)
    if render:
        transaction.on_commit(lambda: notice_pdf_store(notice_id=notice.pk))
    transaction.on_commit(lambda: notice_served.send(sender=Notice, case_id=case.pk, notice_id=notice.pk))
    return notice


@transaction.atomic(durable=True)
def notice_received(*, notice: Notice, received_on: date, actor, as_of: date | None = None) -> Notice:
    """Record the day a mailed notice was received (the return receipt)."""
    as_of = as_of or today()
    errors = after_errors(as_of, received_on=received_on)
    if received_on < notice.served_on:
        errors.append(FieldError("received_on", f"{received_on} is before service on {notice.served_on}"))
    refuse_any(errors)
    notice.received_on = received_on
    notice.save(update_fields=["received_on"])
    case_event(notice.case, on=received_on, kind="received",
           what=f"Notice to the {notice.role} ({notice.name}) received", actor=actor)
    return notice


# --- The hearing request ------------------------------------------------------------------------------------

@transaction.atomic
def hearing_request(*, case: TerminationCase, received_on: date, actor, via: str = "clerk", text: str = "",
                    as_of: date | None = None, by: str = "") -> TerminationCase:
    """Record a written request for the hearing. One received after the window closed is accepted and
    flagged for the hearing officer, never dropped."""
    policy = termination_policy(received_on)
    as_of = as_of or today()
    text = case_text(text, "text")
    errors = after_errors(as_of, "a request is recorded once it has arrived", received_on=received_on)
    if case.is_closed:
        errors.append(FieldError("case", f"case {case.number} is {case.get_status_display().lower()}"))
    if case.status == "open":
        errors.append(FieldError("case", f"case {case.number} has no notice served yet"))
    if case.request_received_on is not None:
        errors.append(FieldError("case", f"a request was already recorded on {case.request_received_on}"))
    refuse_any(errors)
    deadline = case_deadlines(case, policy=policy).request_by
    late = deadline is not None and received_on > deadline
    case.request_received_on, case.request_late, case.request_via = received_on, late, via
    case.request_text, case.request_recorded_at = text, timezone.now()
    case.save(update_fields=["request_received_on", "request_late", "request_via", "request_text",
                             "request_recorded_at"])
    what = ("Written request for the hearing received" + (" online" if via == "portal" else "")
            + (f", after the window closed on {fmt_day(deadline)} ({policy.cite('request')}): accepted and "
               "flagged for the hearing officer" if late else ""))
    case_event(case, on=received_on, kind="requested", what=what, actor=actor, by=by, flagged=late)
    if case.status in ("noticed", "no_request"):
        transition(case, to="requested", actor=actor, note=what)
    return case


# --- The hearing and the determination ----------------------------------------------------------------------

HEARD = ("noticed", "no_request", "requested")  # the stages at which the hearing is held and the determination made


def hearing_day_errors(case: TerminationCase, day: date, *, policy, field: str = "date",
                       by_default: bool = False) -> list[FieldError]:
    """The one date rule of the hearing and of the determination made at its close: not before the hearing date the
    notice named (itself no earlier than the law's minimum after service, ``case_deadlines``), and a case at the
    stage of its hearing. Empty when ``day`` will do."""
    errors = []
    if case.status not in HEARD:
        errors.append(FieldError("case", f"case {case.number} is {case.get_status_display().lower()}; the hearing "
                                         "and its determination follow the notice and the hearing date"))
    if case.hearing_on is None:
        errors.append(FieldError("case", "no notice naming a hearing date has been served"))
    elif day < case.hearing_on:
        errors.append(FieldError(field, (
            f"the hearing is on {case.hearing_on}; {policy.cite('hearing')}: the hearing officer determines at "
            f"the close of the hearing" + (", and by default only on or after the hearing date named in the "
                                             f"notice ({policy.cite('request')})" if by_default else ""))))
    return errors


def _hearing_file(case: TerminationCase, *, attendance: str, evidence_notes: str, actor, held_on: date) -> None:
    refuse_future(held_on, field="held_on", doing="recorded")
    refuse_any(hearing_day_errors(case, held_on, policy=termination_policy(held_on), field="held_on"))
    case.attendance = case_text(attendance, "attendance")
    case.evidence_notes = case_text(evidence_notes, "evidence_notes")
    case.save(update_fields=["attendance", "evidence_notes"])
    case_event(case, on=held_on, kind="hearing", what="Hearing held" + (f"; appeared: {case.attendance}"
                                                                     if case.attendance else ""), actor=actor)


@transaction.atomic(durable=True)
def hearing_record(*, case: TerminationCase, attendance: str, evidence_notes: str, actor,
                   held_on: date) -> TerminationCase:
    """The hearing file: who appeared and the proof heard (§§ 45.33–45.34), held on or after the hearing date the
    notice named (``hearing_day_errors``, the determination's own rule)."""
    _hearing_file(case, attendance=attendance, evidence_notes=evidence_notes, actor=actor, held_on=held_on)
    return case


@transaction.atomic(durable=True)
def hearing_determine(*, case: TerminationCase, held_on: date, attendance: str, evidence_notes: str, outcome: str,
                      mailed_on: date, actor, notes: str = "") -> TerminationCase:
    """The hearing officer's day on one page: the hearing file and the determination made at its close, on the same
    day under the same date rule (``hearing_day_errors``), both or neither."""
    _hearing_file(case, attendance=attendance, evidence_notes=evidence_notes, actor=actor, held_on=held_on)
    return determination_record(case=case, outcome=outcome, mailed_on=mailed_on, actor=actor, as_of=held_on,
                                notes=notes)


OUTCOME_STATUS = {"terminate": "determined", "arrangement": "resolved", "other": "resolved", "dismiss": "dismissed"}


@transaction.atomic
def determination_record(*, case: TerminationCase, outcome: str, mailed_on: date, actor, as_of: date,
                         notes: str = "") -> TerminationCase:
    """The hearing officer's determination and the day its notice was mailed. After a hearing it needs the
    hearing date to have come; without a timely request it is made by default on or after the hearing date
    named in the notice, once the request window has closed."""
    refuse_future(as_of, doing="recorded")
    policy = termination_policy(mailed_on)
    notes = case_text(notes, "notes")
    deadlines = case_deadlines(case, policy=policy)
    errors = []
    if outcome not in OUTCOME_STATUS:
        errors.append(FieldError("outcome", f"'{outcome}' is not an outcome; use "
                                            + ", ".join(OUTCOME_STATUS)))
    timely_request = case.request_received_on is not None and not case.request_late
    by_default = not timely_request
    errors += hearing_day_errors(case, as_of, policy=policy, by_default=by_default)
    if by_default and outcome == "terminate" and case.request_received_on is None:
        if deadlines.request_by is None:
            errors.append(FieldError("case", "the receipt of the notice is not recorded, so the request window "
                                             f"cannot have closed ({policy.cite('request')})"))
        elif as_of <= deadlines.request_by:
            errors.append(FieldError("date", f"the request window is open until {deadlines.request_by} "
                                             f"({policy.cite('request')})"))
    errors += after_errors(as_of, "record the mailing once done", mailed_on=mailed_on)
    if case.hearing_on and mailed_on < case.hearing_on:
        errors.append(FieldError("mailed_on", f"{mailed_on} is before the hearing on {case.hearing_on}"))
    refuse_any(errors)
    to = OUTCOME_STATUS[outcome]
    label = TerminationCase.Outcome(outcome).label.lower()
    what = (f"Determination: {label}" + (" (by default: no timely written request)" if by_default else "")
            + f"; notice of the determination mailed {fmt_day(mailed_on)}")
    changes = {"outcome": outcome, "outcome_notes": notes, "by_default": by_default, "determined_on": as_of,
               "determined_by": actor if getattr(actor, "pk", None) else None, "determination_mailed_on": mailed_on}
    if to != "determined":
        changes["closed_on"] = as_of
    transition(case, to=to, actor=actor, note=what, changes=changes)
    case_event(case, on=as_of, kind="determined", what=what, actor=actor)
    if to != "determined":
        orders_cancel(case=case, reason=f"determination: {label}", actor=actor)
    transaction.on_commit(lambda: determination_pdf_store(case_id=case.pk))
    return case


# --- The appeal ---------------------------------------------------------------------------------------------

@transaction.atomic(durable=True)
def appeal_file(*, case: TerminationCase, filed_on: date, grounds: str, actor, as_of: date | None = None,
                by: str = "") -> TerminationCase:
    """The appeal to the Commission, with its written statement of grounds. One filed after the window is
    accepted and flagged (the Commission decides whether to hear it); the shut-off waits for the decision."""
    policy = termination_policy(filed_on)
    as_of = as_of or today()
    grounds = case_text(grounds, "grounds", required=True)
    errors = after_errors(as_of, filed_on=filed_on)
    if case.outcome != "terminate" or case.status not in ("determined", "final", "ordered"):
        errors.append(FieldError("case", f"case {case.number} is {case.get_status_display().lower()}; only a "
                                         "determination to terminate is appealed"))
    elif filed_on < case.determination_mailed_on:
        errors.append(FieldError("filed_on", f"{filed_on} is before the determination was mailed "
                                             f"({case.determination_mailed_on})"))
    if case.appeal_filed_on:
        errors.append(FieldError("case", f"an appeal was already filed on {case.appeal_filed_on}"))
    refuse_any(errors)
    appeal_by = policy.appeal_by(case.determination_mailed_on)
    late = filed_on > appeal_by
    what = (f"Appeal filed with {policy.appeal_body}"
            + (f", after the window closed on {fmt_day(appeal_by)} ({policy.cite('appeal')}): accepted and "
               "flagged" if late else ""))
    transition(case, to="appealed", actor=actor, note=what,
               changes={"appeal_filed_on": filed_on, "appeal_grounds": grounds, "appeal_late": late})
    case_event(case, on=filed_on, kind="appealed", what=what, actor=actor, by=by, flagged=late)
    orders_cancel(case=case, reason="appeal filed", actor=actor)
    return case


@transaction.atomic(durable=True)
def appeal_decide(*, case: TerminationCase, outcome: str, hearing_on: date, notice_mailed_on: date, actor,
                  as_of: date) -> TerminationCase:
    """The Commission's final decision, heard on ``hearing_on`` after notice mailed at least the preset's days
    before (§ 45.35)."""
    refuse_future(as_of, doing="recorded")
    policy = termination_policy(notice_mailed_on)
    errors = []
    if outcome not in TerminationCase.Decision.values:
        errors.append(FieldError("outcome", f"'{outcome}' is not a decision; use uphold or reverse"))
    if case.status != "appealed":
        errors.append(FieldError("case", f"case {case.number} is {case.get_status_display().lower()}; there is "
                                         "no appeal to decide"))
    earliest = policy.appeal_hearing_earliest(notice_mailed_on)
    if hearing_on < earliest:
        errors.append(FieldError("hearing_on", (
            f"{hearing_on} is {(hearing_on - notice_mailed_on).days} days after the notice was mailed on "
            f"{notice_mailed_on}; {policy.cite('appeal')} requires notice at least {policy.appeal_notice_min_days} "
            f"days before the appeal hearing: the earliest lawful date is {earliest}")))
    if as_of < hearing_on:
        errors.append(FieldError("date", f"the appeal hearing is on {hearing_on}; the decision follows it"))
    if case.appeal_filed_on and notice_mailed_on < case.appeal_filed_on:
        errors.append(FieldError("notice_mailed_on", f"{notice_mailed_on} is before the appeal was filed "
                                                     f"({case.appeal_filed_on})"))
    refuse_any(errors)
    to = "final" if outcome == "uphold" else "dismissed"
    what = (f"{policy.appeal_body[0].upper()}{policy.appeal_body[1:]} "
            f"{'upheld' if outcome == 'uphold' else 'reversed'} the termination after its hearing on "
            f"{fmt_day(hearing_on)} (notice mailed {fmt_day(notice_mailed_on)}); its decision is final")
    changes = {"decision": outcome, "appeal_hearing_on": hearing_on, "appeal_notice_mailed_on": notice_mailed_on,
               "decided_on": as_of}
    if to == "dismissed":
        changes["closed_on"] = as_of
    transition(case, to=to, actor=actor, note=what, changes=changes)
    case_event(case, on=as_of, kind="decided", what=what, actor=actor)
    transaction.on_commit(lambda: determination_pdf_store(case_id=case.pk))
    return case



# --- Payment in full, dismissal and emergencies -------------------------------------------------------------

def cases_close_paid(*, account_ids, as_of: date | None = None) -> list[TerminationCase]:
    """Close every nonpayment case of these accounts whose delinquent bills are paid in full, before the
    shut-off: pending orders are cancelled. Called on every ``payment_posted``."""
    as_of = as_of or today()
    closed = []
    cases = [case for chunk in chunked(sorted(account_ids))  # a lockbox file may pay 100,000 accounts at once
             for case in TerminationCase.objects.filter(account_id__in=chunk, grounds="nonpayment",
                                                        status__in=ACTIVE).select_related("account")]
    for case in cases:
        if case_unpaid(case, as_of=as_of) > ZERO:
            continue
        with transaction.atomic():
            what = f"Paid in full on or before {fmt_day(as_of)}: case closed"
            transition(case, to="paid", actor=None, note=what, changes={"closed_on": as_of})
            cancelled = orders_cancel(case=case, reason="paid in full", actor=None)
            if cancelled:
                what += f"; {cancelled} shut-off order cancelled"
            case_event(case, on=as_of, kind="paid", what=what, by="payment posted")
        closed.append(case)
    return closed


def _reopened_status(case: TerminationCase) -> str:
    """Where a case paid in full left off: the status it was paid from, or, when the payment cancelled its
    shut-off order, the status before the order (a new order must pass the guard again)."""
    changes = list(StatusChange.objects.filter(content_type=ContentType.objects.get_for_model(TerminationCase),
                                               object_id=case.pk, field="status").order_by("-at", "-id"))
    paid = next((c for c in changes if c.to_status == "paid"), None)
    back = paid.from_status if paid else "open"
    if back == "ordered":
        ordered = next((c for c in changes if c.to_status == "ordered"), None)
        back = ordered.from_status if ordered else "final"
    return back


def cases_reopen_unpaid(*, account_id: int, why: str, as_of: date | None = None) -> list[TerminationCase]:
    """Reopen each nonpayment case of the account closed as paid whose delinquent amount is owed again (the payment
    that paid it was reversed): back where it left off (``_reopened_status``), with ``why`` in its history. Called
    on every ``payment_reversed``."""
    as_of = as_of or today()
    reopened = []
    closed = Account.objects.filter(pk=account_id, status=Account.Status.CLOSED).exists()
    for case in TerminationCase.objects.filter(account_id=account_id, grounds="nonpayment", status="paid"):
        unpaid = case_unpaid(case, as_of=as_of)
        if unpaid <= ZERO:
            continue
        if closed:
            # A closed account has no service to shut off: what is owed again stays on its final balance, and the
            # relevy takes it where it is unpaid (docs/architecture.md, event table). The case stays closed.
            case_event(case, on=as_of, kind="closed_owed", by="payment reversed", flagged=True,
                       what=(f"{why} on {fmt_day(as_of)}, after the account closed: {fmt_dollars(unpaid)} of the "
                             "delinquent amount is owed again on the closed account's final balance (the relevy "
                             "takes it if it stays unpaid); the case is not reopened, there is no service to shut "
                             "off"))
            continue
        back = _reopened_status(case)
        with transaction.atomic():
            what = (f"Reopened on {fmt_day(as_of)}: {why}; {fmt_dollars(unpaid)} of the delinquent amount is owed "
                    f"again")
            transition(case, to=back, actor=None, note=what, changes={"closed_on": None})
            event = case_event(case, on=as_of, kind="reopened", what=what, by="payment reversed", flagged=True)
            facts = {"case_id": case.pk, "event_id": event.pk}
            transaction.on_commit(lambda facts=facts: case_reopened.send(sender=TerminationCase, **facts))
        reopened.append(case)
    return reopened


def cases_withdraw_voided(*, bill_id: int, as_of: date | None = None) -> list[TerminationCase]:
    """A bill was voided: each nonpayment case for it that nothing else now grounds is withdrawn (its pending
    shut-off orders cancelled); a case still grounded by its other bills goes on for what they owe. Either way the
    clerk sees it flagged. A case whose water is already off stays as it is, flagged: the clerk restores service
    (the ordinance gives no shut-off for a bill that is not owed). Called on every ``bill_voided``.

    Office policy (no seed speaks of a voided bill): a corrected bill issued in its place is a new bill, with its
    own due date, and starts its own due process; the old case never carries over to it."""
    as_of = as_of or today()
    touched = []
    cases = TerminationCase.objects.filter(grounds="nonpayment", bills__bill_id=bill_id).exclude(
        status__in=CLOSED).select_related("account").distinct()
    number = Bill.objects.filter(pk=bill_id).values_list("number", flat=True).first() or bill_id
    for case in cases:
        unpaid = case_unpaid(case, as_of=as_of)
        kind = "bill_voided"
        with transaction.atomic():
            if case.status == "shut_off":
                what = (f"Bill {number} voided on {fmt_day(as_of)} while the water is off for this case: restore "
                        "service unless another bill grounds the shut-off")
            elif unpaid <= ZERO:
                what = f"Bill {number} voided on {fmt_day(as_of)}: nothing the case was for is owed; case withdrawn"
                kind = "withdrawn"
                transition(case, to="withdrawn", actor=None, note=what, changes={"closed_on": as_of})
                cancelled = orders_cancel(case=case, reason=f"bill {number} voided", actor=None)
                if cancelled:
                    what += f"; {cancelled} shut-off order cancelled"
            else:
                what = (f"Bill {number} voided on {fmt_day(as_of)}: the case goes on for {fmt_dollars(unpaid)} "
                        "owed on its other bills")
            case_event(case, on=as_of, kind=kind, what=what, by="bill voided", flagged=True)
        touched.append(case)
    return touched


def cases_of_closed_account(*, account_id: int, as_of: date) -> list[TerminationCase]:
    """The account closed (its final bill issued): there is no service left to shut off, so each active case is
    withdrawn and its issued orders cancelled, flagged for the clerk; what is owed stays owed and goes to the
    relevy as any unpaid balance (office policy: no seed speaks of a case on a closed account). A case whose water
    is off already stays as it is (the account is closed; nothing is restored)."""
    touched = []
    for case in TerminationCase.objects.filter(account_id=account_id, status__in=ACTIVE):
        with transaction.atomic():
            what = f"Account closed on {fmt_day(as_of)}: no service left to shut off; case withdrawn"
            transition(case, to="withdrawn", actor=None, note=what, changes={"closed_on": as_of})
            cancelled = orders_cancel(case=case, reason=f"account closed on {fmt_day(as_of)}", actor=None)
            if cancelled:
                what += f"; {cancelled} shut-off order cancelled"
            case_event(case, on=as_of, kind="account_closed", what=what + "; what is owed goes to the relevy",
                       by="account closed", flagged=True)
        touched.append(case)
    return touched


@transaction.atomic(durable=True)
def case_dismiss(*, case: TerminationCase, reason: str, as_of: date, actor) -> TerminationCase:
    """Withdraw a case before the shut-off (opened in error, the violation cured), with the reason."""
    reason = case_text(reason, "reason", required=True)
    transition(case, to="dismissed", actor=actor, note=reason, changes={"closed_on": as_of})
    orders_cancel(case=case, reason=f"case dismissed: {reason}", actor=actor)
    case_event(case, on=as_of, kind="dismissed", what=f"Case dismissed: {reason}", actor=actor)
    return case


@transaction.atomic
def interruption_log(*, account: Account, kind: str, started_on: date, reason: str, actor,
                     ended_on: date | None = None) -> Interruption:
    """Log an interruption the ordinance allows without the hearing procedure (emergency, repairs,
    shortage; a health hazard). It is never a shut-off order and never touches a case."""
    policy = termination_policy(started_on)
    reason = case_text(reason, "reason", required=True)
    errors = []
    if kind not in policy.emergency_kinds:
        errors.append(FieldError("kind", f"'{kind}' is not an interruption {policy.emergency_citation} allows "
                                         f"without a hearing; use {', '.join(policy.emergency_kinds)}"))
    errors += after_errors(today(), started_on=started_on, ended_on=ended_on)
    if ended_on is not None and ended_on < started_on:
        errors.append(FieldError("ended_on", f"{ended_on} is before the start on {started_on}"))
    refuse_any(errors)
    return Interruption.objects.create(account=account, kind=kind, citation=policy.emergency_citation,
                                       started_on=started_on, ended_on=ended_on, reason=reason,
                                       actor=actor if getattr(actor, "pk", None) else None)


def cases_remove(case_ids: list[int]) -> None:
    """Cases a conversion brought over, removed whole by its rollback (in its transaction): their timelines,
    notices and status history with them. Only cases at a stage before any shut-off order are brought over."""
    if not case_ids:
        return
    StatusChange.objects.filter(content_type=ContentType.objects.get_for_model(TerminationCase),
                                object_id__in=case_ids).delete()
    TerminationCase.objects.filter(pk__in=case_ids).delete()  # its bills, notices and events go with it
