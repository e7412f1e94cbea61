"""Work orders made by the office and completed from the field; the crew's day sheet and the shut-off list, both in
route order (``accounts.selectors.route_key``).

* ``field_order_create``: refused for a closed account, a re-read or meter change without a meter in place, a
  shut-off of water already off, a turn-on of water already on; one open order of a kind per account (a key).
* ``field_order_complete`` does the work on the books: a re-read records the reading (``meters.services``, with
  every rule a reading keeps); a meter change records the old meter's final reading, removes it and installs the
  new one with its first reading; a shut-off marks the account shut off; a turn-on restores a shut-off case's
  service where one is open (refused while anything is owed, ``termination.services``) or marks the account
  active. Every refusal names its field and nothing changes.
* ``day_sheet``: the open orders due by a day with the termination cases' shut-off orders, in route order, each with
  the meter's previous reading and the range a reading that day is expected in (``previous_reads``).
* ``shutoff_list``: the termination cases whose shut-off is ordered, in route order, with what each owes.
"""

from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal

from django.db import transaction

from accounts.alerts import alerts_on
from accounts.models import Account
from accounts.selectors import route_key
from accounts.services import account_service_set
from core.clock import refuse_future
from core.errors import ApplicationError, FieldError
from core.workflow import transition
from meters.models import Installation, Reading
from meters.services import meter_change, reading_record
from termination.models import CLOSED, TerminationCase, WorkOrder
from termination.policy import termination_policy
from termination.selectors import case_unpaid
from termination.services.shutoff import carry_out_refusals, service_restore

from .models import FieldOrder

KIND = FieldOrder.Kind
NEEDS_METER = (KIND.REREAD, KIND.METER_CHANGE)
OFF_STATUSES = (Account.Status.SHUT_OFF, Account.Status.VACANT)


def _meter_in_place(account: Account) -> Installation | None:
    return (Installation.objects.filter(account=account, removed_on__isnull=True).select_related("meter")
            .order_by("-installed_on").first())


@transaction.atomic(durable=True)
def field_order_create(*, account: Account, kind: str, reason: str, scheduled_on: date, actor) -> FieldOrder:
    errors: list[FieldError] = []
    reason = (reason or "").strip()
    if kind not in KIND.values:
        raise ApplicationError(f"'{kind}' is not one of {', '.join(KIND.values)}", field="kind")
    if not reason:
        errors.append(FieldError(field="reason", message="say why, for the crew"))
    if account.status == Account.Status.CLOSED:
        errors.append(FieldError(field="account_no", message=f"account {account.account_no} is closed"))
    elif kind in NEEDS_METER and _meter_in_place(account) is None:
        errors.append(FieldError(field="kind", message=f"account {account.account_no} has no meter in place"))
    elif kind == KIND.SHUT_OFF and account.status in OFF_STATUSES:
        errors.append(FieldError(field="kind", message=f"the water at account {account.account_no} is off already "
                                                       f"({account.get_status_display().lower()})"))
    elif kind == KIND.TURN_ON and account.status == Account.Status.ACTIVE:
        errors.append(FieldError(field="kind", message=f"the water at account {account.account_no} is on already"))
    if kind == KIND.SHUT_OFF and TerminationCase.objects.filter(account=account).exclude(
            status__in=CLOSED).exists():
        errors.append(FieldError(field="kind", message=(
            f"account {account.account_no} has a termination case open: a shut-off for nonpayment is ordered on the "
            "case, only when the case allows it")))
    if FieldOrder.objects.filter(account=account, kind=kind, status=FieldOrder.Status.OPEN).exists():
        errors.append(FieldError(field="kind", message=f"account {account.account_no} already has an open order to "
                                                       f"{KIND(kind).label.lower()}"))
    if errors:
        raise ApplicationError(errors=errors)
    return FieldOrder.objects.create(account=account, kind=kind, reason=reason[:200], scheduled_on=scheduled_on,
                                     created_by=actor)


@transaction.atomic(durable=True)
def field_order_complete(*, order: FieldOrder, done_on: date, actor, result: str = "", value: int | None = None,
                         new_serial: str = "", new_size: str = "", start_value: int | None = None,
                         as_of: date | None = None) -> FieldOrder:
    """Complete an open order with what the crew found (``value``: the reading; for a meter change the old meter's
    final reading, and the new meter's serial, size and first reading)."""
    order = FieldOrder.objects.select_for_update().select_related("account").get(pk=order.pk)
    if order.status != FieldOrder.Status.OPEN:
        raise ApplicationError(f"{order.number} is {order.get_status_display().lower()} already", field="status")
    refuse_future(done_on, field="done_on", doing="recorded")
    account, result = order.account, (result or "").strip()
    if order.kind in NEEDS_METER:
        errors = []
        if value is None:
            errors.append(FieldError(field="value", message="the reading on the meter is needed"))
        if order.kind == KIND.METER_CHANGE and start_value is None:
            errors.append(FieldError(field="start_value", message="the new meter's first reading is needed"))
        installation = _meter_in_place(account)
        if installation is None:
            errors.append(FieldError(field="value", message=f"account {account.account_no} has no meter in place"))
        if errors:
            raise ApplicationError(errors=errors)
        if order.kind == KIND.REREAD:
            order.reading = reading_record(meter=installation.meter, read_on=done_on, value=value,
                                           read_type=Reading.ReadType.ACTUAL, as_of=as_of or done_on, actor=actor,
                                           note=f"re-read: {order.number}")
        else:
            change = meter_change(installation=installation, changed_on=done_on, final_value=value,
                                  new_serial=new_serial, new_size=new_size, start_value=start_value, actor=actor,
                                  as_of=as_of)
            order.reading, order.new_meter = change.final, change.new_meter
    elif order.kind == KIND.SHUT_OFF:
        account_service_set(account=account, status=Account.Status.SHUT_OFF, on=done_on, actor=actor,
                            reason=f"{order.number}: {order.reason}")
    else:
        case = TerminationCase.objects.filter(account=account, status="shut_off").order_by("-id").first()
        if case is not None:
            service_restore(case=case, as_of=done_on, actor=actor, note=f"turned on: {order.number}")
        else:
            account_service_set(account=account, status=Account.Status.ACTIVE, on=done_on, actor=actor,
                                reason=f"{order.number}: {order.reason}")
    order.save(update_fields=["reading", "new_meter"])
    return transition(order, to=FieldOrder.Status.DONE, actor=actor, note=result or "done",
                      changes={"done_on": done_on, "done_by": actor, "result": result})


@transaction.atomic(durable=True)
def field_order_cancel(*, order: FieldOrder, reason: str, actor) -> FieldOrder:
    order = FieldOrder.objects.select_for_update().get(pk=order.pk)
    if order.status != FieldOrder.Status.OPEN:
        raise ApplicationError(f"{order.number} is {order.get_status_display().lower()} already", field="status")
    if not (reason or "").strip():
        raise ApplicationError("say why it is cancelled", field="reason")
    return transition(order, to=FieldOrder.Status.CANCELLED, actor=actor, note=reason.strip(),
                      changes={"result": f"Cancelled: {reason.strip()}", "done_by": actor})


@dataclass(frozen=True)
class Stop:
    """One stop of the crew's round."""

    key: tuple
    what: str
    account: Account
    meter: str
    reason: str
    owed: Decimal | None  # for a shut-off for nonpayment: what the case is for, still unpaid
    field_order: FieldOrder | None = None
    work_order: WorkOrder | None = None
    held: tuple[str, ...] = ()  # why the shut-off may not be carried out today (a plan, a payment, an appeal…)
    alerts: tuple[str, ...] = ()  # the account's alerts in force (a dog, a meter inside, a medical certificate)
    last_read: str = ""  # the meter's previous reading and its day
    expected: str = ""  # the range a reading today is expected in (the route file's rule)


def _meters(accounts) -> dict[int, str]:
    out: dict[int, list[str]] = {}
    for i in Installation.objects.filter(account__in=accounts, removed_on__isnull=True).select_related("meter"):
        out.setdefault(i.account_id, []).append(f'{i.meter.serial} ({i.meter.size}")')
    return {k: ", ".join(v) for k, v in out.items()}


def previous_reads(accounts, *, on: date) -> dict[int, tuple[str, str]]:
    """Each account's meter in place: its previous reading with its day, and the range a reading ``on`` is expected in
    (``meters.rules.expected_range``, as the handheld's route file has it)."""
    from core.dates import fmt_day
    from meters.readfiles.registers import history_of
    from meters.rules import expected_range
    from ordinance.selectors import installed_utility

    utility = installed_utility()
    factor = utility.high_usage_factor if utility else Decimal(3)
    installations = list(Installation.objects.filter(account__in=accounts, removed_on__isnull=True))
    history = history_of({i.meter_id for i in installations}, before=on)
    out = {}
    for installation in installations:
        earlier = history.get(installation.meter_id, [])
        if not earlier:
            out[installation.account_id] = ("no reading yet", "")
            continue
        last_on, last = earlier[-1]
        span = expected_range(earlier, on, factor=factor)
        expected = "" if span is None else (f"{span[0]:,} to {span[1]:,}" if span[1] is not None
                                            else f"{span[0]:,} or more")
        out[installation.account_id] = (f"{last:,} on {fmt_day(last_on)}", expected)
    return out


def shutoff_list(*, as_of: date) -> list[Stop]:
    """Every termination case whose shut-off is ordered, in route order, with what it still owes on ``as_of`` and,
    for a stop the guard holds that day (a plan signed, a payment, an appeal since the order), every reason why."""
    orders = list(WorkOrder.objects.filter(kind=WorkOrder.Kind.SHUT_OFF, status=WorkOrder.Status.ISSUED)
                  .select_related("case__account__premises", "case__account__owner", "case__account__occupant"))
    meters = _meters([o.case.account for o in orders])
    policy = termination_policy()
    stops = [Stop(key=route_key(o.case.account), what=f"Shut off for nonpayment (case {o.case.number})",
                  account=o.case.account, meter=meters.get(o.case.account_id, "—"),
                  reason=f"Shut-off ordered {o.issued_on}", owed=case_unpaid(o.case, as_of=as_of), work_order=o,
                  held=tuple(e.message for e in carry_out_refusals(o.case, done_on=as_of, policy=policy)))
             for o in orders]
    return sorted(stops, key=lambda s: s.key)


def day_sheet(*, on: date) -> list[Stop]:
    """The crew's round for a day: open work orders scheduled on or before it, and the shut-offs ordered on
    termination cases, in route order."""
    orders = list(FieldOrder.objects.filter(status=FieldOrder.Status.OPEN, scheduled_on__lte=on)
                  .select_related("account__premises", "account__owner", "account__occupant"))
    meters = _meters([o.account for o in orders])
    stops = [Stop(key=route_key(o.account), what=o.get_kind_display(), account=o.account,
                  meter=meters.get(o.account_id, "—"), reason=o.reason, owed=None, field_order=o) for o in orders]
    stops += shutoff_list(as_of=on)
    alerts = alerts_on({s.account.pk for s in stops}, on=on)
    reads = previous_reads([s.account for s in stops], on=on)
    return sorted((replace(s, alerts=tuple(a.words for a in alerts.get(s.account.pk, [])),
                           **dict(zip(("last_read", "expected"), reads.get(s.account.pk, ("", "")), strict=True)))
                   for s in stops), key=lambda s: s.key)
