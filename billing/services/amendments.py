"""An amendment installed after what it bears on was posted: what it would change, and billing it again.

``amendment_past`` is billing's guard on an install (``ordinance.install.past_guard_register``): the bills dated on
or after a new rate schedule's day but rated by an older one, and the late charges posted on or after an amended
``[penalty]``'s day, each listed. The install is refused with them unless asked to rebill; then
``amendment_rebill_request`` (the rebill step) records the bills for a supervisor, and ``amendment_rebill_decide``
voids and bills each again through ``bill_rebill`` once approved, one transaction each, recording what became of
each. The late charges are the assessment's: it corrects each on its own day to what the amended rule makes, the
correction naming that rule (``billing.penalties.plan``).
"""

from datetime import date

from django.db import transaction

from core.approval import approval_decide, approval_problems
from core.errors import ApplicationError
from ordinance.files import PresetFile
from ordinance.models import InstalledPreset
from ordinance.selectors import section_params

from ..models import AmendmentRebill, Bill, LedgerEntry, RateSchedule
from .rebill import bill_rebill

LISTED = 5  # bill numbers named in a refusal; the rest counted


def _new_schedule_days(file: PresetFile) -> list[date]:
    known = set(RateSchedule.objects.values_list("effective_on", flat=True))
    days = {date.fromisoformat(str(s["effective_on"])) for s in file.data.get("rate_schedule", [])}
    return sorted(days - known)


def _late_bills(file: PresetFile) -> dict[date, list[Bill]]:
    """For each rate schedule the file adds, the bills in force dated on or after its day rated by an older one."""
    out = {}
    for day in _new_schedule_days(file):
        bills = list(Bill.objects.exclude(status=Bill.Status.VOID)
                     .filter(bill_date__gte=day, rate_schedule__effective_on__lt=day).order_by("bill_date", "number"))
        if bills:
            out[day] = bills
    return out


def _listed(names: list[str], total: int) -> str:
    return ", ".join(names[:LISTED]) + (f" and {total - LISTED:,} more" if total > LISTED else "")


def amendment_past(file: PresetFile, effective_on: date | None) -> list[str]:
    """What is already posted that the file, taking effect on ``effective_on``, would have made otherwise."""
    found = [f"{len(bills):,} bill{'s' if len(bills) != 1 else ''} dated on or after {day} rated by an earlier rate "
             f"schedule (bill {_listed([b.number for b in bills], len(bills))})"
             for day, bills in _late_bills(file).items()]
    penalty = file.data.get("penalty")
    if effective_on is not None and penalty is not None and section_params("penalty", effective_on) != penalty:
        charges = (LedgerEntry.objects.filter(kind__in=(LedgerEntry.Kind.PENALTY, LedgerEntry.Kind.INTEREST),
                                              posted_on__gte=effective_on).order_by("posted_on", "id"))
        count = charges.count()
        if count:
            shown = [f"{bill} of {day}" for day, bill in charges.values_list("posted_on", "bill__number")[:LISTED]]
            found.append(f"{count:,} late charge{'s' if count != 1 else ''} posted on or after {effective_on} under "
                         f"the [penalty] it amends (on bill {_listed(shown, count)})")
    return found


def amendment_rebill_request(file: PresetFile, effective_on: date | None, install: InstalledPreset, actor) -> str:
    """The rebill step of an install asked to rebill: the bills to void and bill again, for a supervisor."""
    late = _late_bills(file)
    bills = sorted({b.pk: b for found in late.values() for b in found}.values(), key=lambda b: b.pk)
    if not bills:
        return "late charges: corrected by the assessment on their own days, each stating the rate that makes it"
    request = AmendmentRebill.objects.create(
        installed=install, effective_on=min(late), requested_by=actor,
        reason="; ".join(f"rate schedule in force from {day}: {len(found):,} bill{'s' if len(found) != 1 else ''} "
                         "rated by an earlier one" for day, found in late.items()))
    request.bills.set(bills)
    return (f"{len(bills):,} bill{'s' if len(bills) != 1 else ''} to void and bill again, waiting for a supervisor "
            f"(rebilling request {request.pk})")


def amendment_rebill_decide(*, request: AmendmentRebill, approve: bool, note: str, actor, as_of: date) -> str:
    """A supervisor (not the one who installed the amendment) approves or refuses the rebilling. Approved, each
    bill still in force is voided and billed again under the rules of its bill date, each in its own transaction
    (a bill that cannot be is left as it was, and the outcome says why); refused, nothing changes but the
    request. Returns the outcome in words."""
    with transaction.atomic(durable=True):
        request = AmendmentRebill.objects.select_for_update().get(pk=request.pk)
        problems = approval_problems(request, approve=approve, note=note, actor=actor)
        if problems:
            raise ApplicationError(errors=problems)
        request = approval_decide(request, approve=approve, note=note, actor=actor)
    if not approve:
        return f"Rebilling request {request.pk} refused: the bills stand as issued."
    reason = f"The amended rates in force from {request.effective_on} (preset version {request.installed.version})"
    outcome = []
    for bill in request.bills.order_by("bill_date", "number"):
        if bill.status == Bill.Status.VOID:
            outcome.append(f"{bill.number}: already void")
            continue
        try:
            done = bill_rebill(bill=bill, reason=reason, as_of=as_of, actor=actor)
        except ApplicationError as exc:
            outcome.append(f"{bill.number}: not billed again: {exc}")
        else:
            outcome.append(done.words)
    AmendmentRebill.objects.filter(pk=request.pk).update(outcome="\n".join(outcome))
    return f"Rebilling request {request.pk} approved: " + " ".join(outcome)
