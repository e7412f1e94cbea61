"""The guard and the shut-off: what keeps a shut-off order from issuing (``shutoff_refusals``, every reason with
its section), the order and its cancellation, the shut-off carried out (the account shut off, the disconnect charge
charged) and the restoration (the connect charge)."""

from datetime import date, time, timedelta

from django.db import transaction

from accounts.alerts import shutoff_alert_words
from accounts.models import Account
from accounts.services import account_service_set
from billing.services.charges import charge_add
from core.clock import refuse_future
from core.dates import fmt_day
from core.errors import ApplicationError, FieldError, refuse_any
from core.money import ZERO, fmt_dollars
from core.workflow import transition

from ..holds import shutoff_holds
from ..models import TerminationCase, WorkOrder
from ..policy import TerminationPolicy, termination_policy
from ..selectors import (
    case_deadlines,
    case_unpaid,
    current_notices,
    required_roles,
    restore_owed,
)
from ..signals import service_restored, service_shut_off
from .events import case_event, case_text

# --- The guard and the shut-off -----------------------------------------------------------------------------

def shutoff_refusals(case: TerminationCase, *, as_of: date,
                     policy: TerminationPolicy | None = None) -> list[FieldError]:
    """Every condition of the guard (docs/ordinances.md, Mineola Article II) the case does not meet on ``as_of``,
    each with its citation; an empty list means a shut-off order may issue."""
    policy = policy or termination_policy(as_of)
    out: list[FieldError] = []
    notices = current_notices(case)
    # (1) Each required recipient served, with a receipt date.
    for role in required_roles(case):
        notice = notices.get(role)
        if notice is None:
            out.append(FieldError("recipients", f"(1) the {role} has not been served with the notice "
                                                f"({policy.cite('notice')})"))
        elif notice.received_on is None:
            out.append(FieldError("recipients", f"(1) no receipt date is recorded for the notice to the {role} "
                                                f"({notice.name}) ({policy.cite('notice')})"))
    # (2) The hearing at least the preset's days after each service.
    for role, notice in notices.items():
        days = (notice.hearing_on - notice.served_on).days
        if days < policy.notice_min_days:
            out.append(FieldError("hearing_on", (
                f"(2) the notice to the {role} was served on {notice.served_on}, {days} "
                f"days before the hearing on {notice.hearing_on}; at least {policy.notice_min_days} days are "
                f"required ({policy.cite('notice')})")))
    # (3) A determination to terminate: after the hearing, or by default once no timely request came.
    deadlines = case_deadlines(case, policy=policy)
    if case.outcome != "terminate" or case.determined_on is None:
        out.append(FieldError("determination", "(3) the hearing officer has not recorded a determination to "
                                               f"terminate ({policy.cite('hearing')})"))
    else:
        timely = case.request_received_on is not None and not case.request_late
        if case.hearing_on is None or case.determined_on < case.hearing_on:
            out.append(FieldError("determination", (
                f"(3) the determination of {case.determined_on} came before the hearing date "
                f"{case.hearing_on} named in the notice ({policy.cite('hearing')})")))
        elif case.by_default and timely:
            out.append(FieldError("determination", (
                f"(3) a written request arrived in time on {case.request_received_on}: termination needs a "
                f"determination after the hearing, not by default ({policy.cite('request')})")))
        elif case.by_default and (deadlines.request_by is None or case.determined_on <= deadlines.request_by):
            out.append(FieldError("determination", (
                "(3) the determination by default was made before the request window closed"
                + (f" on {deadlines.request_by}" if deadlines.request_by else "") + f" ({policy.cite('request')})")))
    # (4) The determination mailed and the appeal window passed unappealed, or the appeal decided upholding it.
    if case.determination_mailed_on is None:
        out.append(FieldError("appeal", "(4) notice of the determination has not been mailed "
                                        f"({policy.cite('appeal')})"))
    elif case.appeal_filed_on is not None:
        if case.decision != "uphold":
            out.append(FieldError("appeal", (
                f"(4) the appeal filed on {case.appeal_filed_on} awaits the decision of {policy.appeal_body} "
                f"({policy.cite('appeal')})" if not case.decision else
                f"(4) {policy.appeal_body} reversed the termination ({policy.cite('appeal')})")))
    elif as_of <= deadlines.appeal_by:
        out.append(FieldError("appeal", (
            f"(4) the appeal window is open until {deadlines.appeal_by}: {policy.appeal_days} days after the "
            f"determination was mailed on {case.determination_mailed_on} ({policy.cite('appeal')}); the earliest "
            f"order is {deadlines.appeal_by + timedelta(days=1)}")))
    # (5) For nonpayment, still unpaid on the day of the order.
    if case.grounds == "nonpayment":
        unpaid = case_unpaid(case, as_of=as_of)
        if unpaid <= ZERO:
            out.append(FieldError("amount_delinquent", (
                f"(5) the delinquent amount of {fmt_dollars(case.amount_delinquent)} is paid on {as_of} "
                f"({policy.cite('grounds')})")))
    # (6) Nothing else holds it: a payment plan in good standing, an account alert (a medical certificate, the
    # supervisor's "do not shut off", a bankruptcy stay), …
    out += [FieldError("hold", f"(6) {words}") for words in [*shutoff_alert_words(case.account_id, as_of),
                                                            *shutoff_holds(case.account_id, as_of)]]
    return out


@transaction.atomic
def shutoff_order(*, case: TerminationCase, as_of: date, actor) -> WorkOrder:
    """Issue the shut-off order, or raise ``TransitionRefused`` naming every unmet condition with its citation.
    A second call for an order already issued returns it."""
    refuse_future(as_of, doing="ordered")
    policy = termination_policy(as_of)
    if case.status == "ordered":
        order = case.orders.filter(kind=WorkOrder.Kind.SHUT_OFF, status=WorkOrder.Status.ISSUED).first()
        if order is None:
            raise ApplicationError(f"case {case.number} is ordered but its shut-off order was cancelled; see the "
                                   "case's history", field="case")
        return order
    what = "Shut-off order issued: every condition of the guard holds"
    transition(case, to="ordered", actor=actor, note=what,
               guard=lambda locked: shutoff_refusals(locked, as_of=as_of, policy=policy))
    order = WorkOrder.objects.create(case=case, kind=WorkOrder.Kind.SHUT_OFF, issued_on=as_of,
                                     issued_by=actor if getattr(actor, "pk", None) else None)
    case_event(case, on=as_of, kind="ordered", what=f"{what} (work order {order.pk})", actor=actor)
    return order


def orders_cancel(*, case: TerminationCase, reason: str, actor) -> int:
    cancelled = 0
    for order in case.orders.filter(status=WorkOrder.Status.ISSUED):
        transition(order, to="cancelled", actor=actor, note=reason, changes={"cancel_reason": reason})
        cancelled += 1
    return cancelled


def carry_out_refusals(case: TerminationCase, *, done_on: date,
                       policy: TerminationPolicy | None = None) -> list[FieldError]:
    """Why the crew may not shut the service off on ``done_on``: no order issued, or any condition of the guard
    that no longer holds that day — the delinquent amount paid, a payment plan in good standing, an appeal filed,
    anything another app holds it for (``termination.holds``). Every reason, each with its citation."""
    order = case.orders.filter(kind=WorkOrder.Kind.SHUT_OFF, status=WorkOrder.Status.ISSUED).first()
    if order is None:
        return [FieldError("case", f"case {case.number} has no shut-off order issued")]
    out = []
    if done_on < order.issued_on:
        out.append(FieldError("done_on", f"{done_on} is before the order was issued on {order.issued_on}"))
    return out + shutoff_refusals(case, as_of=done_on, policy=policy)


@transaction.atomic
def shutoff_carry_out(*, case: TerminationCase, done_on: date, actor, at: time | None = None,
                      note: str = "") -> TerminationCase:
    """The crew shut the service off: every condition of the guard is checked again on the day (a plan signed, a
    payment or an appeal since the order holds it), then the account is shut off through the account service and
    the disconnect charge is charged (for the next bill), when the preset has one. The time and the crew's note
    (a curb valve locked, a tag left) go in the case's history with who recorded it."""
    refuse_future(done_on, field="done_on", doing="recorded")
    note = case_text(note, "note")
    policy = termination_policy(done_on)
    case = TerminationCase.objects.select_for_update().get(pk=case.pk)
    refuse_any(carry_out_refusals(case, done_on=done_on, policy=policy))
    order = case.orders.get(kind=WorkOrder.Kind.SHUT_OFF, status=WorkOrder.Status.ISSUED)
    transition(order, to="done", actor=actor, note="carried out", changes={"done_on": done_on})
    transition(case, to="shut_off", actor=actor, note=f"service shut off on {fmt_day(done_on)}")
    what = _service_set(case, Account.Status.SHUT_OFF, fee=policy.disconnect_fee, on=done_on, actor=actor,
                        what=f"Service shut off (work order {order.pk})" + (f" at {at:%-I:%M %p}" if at else ""))
    if note:
        what += f". {note}"
    case_event(case, on=done_on, kind="shut_off", what=what, actor=actor)
    transaction.on_commit(lambda: service_shut_off.send(sender=TerminationCase, case_id=case.pk))
    return case


def _service_set(case: TerminationCase, status: str, *, fee: str, on: date, actor, what: str) -> str:
    """The account's service shut off or restored through the account service (locked, a closed account refused,
    the change in the account's history), and the preset's charge for it (``fee``, when it has one) charged for the
    next bill; ``what`` with the charge's words added, for the case's history."""
    case.account = account_service_set(account=case.account, status=status, on=on, actor=actor,
                                       reason=f"termination case {case.number}")
    if fee:
        charge = charge_add(account=case.account, code=fee, as_of=on, actor=actor,
                            note=f"termination case {case.number}")
        what += f"; {charge.description.lower()} {fmt_dollars(charge.amount.amount)} charged ({charge.citation})"
    return what


def restore_refusals(case: TerminationCase, *, as_of: date) -> list[FieldError]:
    """What keeps service from being restored: for nonpayment, anything still owed on the day — the ledger's
    balance and the charges waiting for the next bill (the disconnect charge among them)."""
    policy = termination_policy(as_of)
    out = []
    if case.status != "shut_off":
        return out
    if case.grounds == "nonpayment":
        owed, waiting = restore_owed(case, as_of=as_of)
        if owed > ZERO:
            out.append(FieldError("balance", f"{fmt_dollars(owed)} is still owed on {as_of}"
                                             + (f" ({fmt_dollars(waiting)} of it charged for the next bill)"
                                                if waiting else "")
                                             + f"; {policy.restore_rule or 'everything owed is paid first'}"))
    return out


@transaction.atomic
def service_restore(*, case: TerminationCase, as_of: date, actor, note: str = "",
                    at: time | None = None) -> TerminationCase:
    """Restore service once the preset's conditions hold: the account is active again and the connect (or
    restoration) charge is charged for the next bill. The restoration work order is recorded as done."""
    refuse_future(as_of, doing="recorded")
    policy = termination_policy(as_of)
    note = case_text(note, "note")
    transition(case, to="restored", actor=actor, note=note or "service restored",
               guard=lambda locked: restore_refusals(locked, as_of=as_of), changes={"closed_on": as_of})
    order = WorkOrder.objects.create(case=case, kind=WorkOrder.Kind.RESTORE, issued_on=as_of,
                                     issued_by=actor if getattr(actor, "pk", None) else None)
    transition(order, to="done", actor=actor, note="restored", changes={"done_on": as_of})
    what = _service_set(case, Account.Status.ACTIVE, fee=policy.restore_fee, on=as_of, actor=actor,
                        what=f"Service restored (work order {order.pk})" + (f" at {at:%-I:%M %p}" if at else ""))
    if note:
        what += f". {note}"
    case_event(case, on=as_of, kind="restored", what=what, actor=actor)
    transaction.on_commit(lambda: service_restored.send(sender=TerminationCase, case_id=case.pk))
    return case
