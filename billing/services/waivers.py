"""Waiving a penalty or interest charge: a clerk asks, with a reason; the office's limit says who decides.

A charge of at most the preset's ``[penalty] waiver_approval_above`` (office policy, not the ordinance) is
waived at once by the clerk who asks; a larger one waits for a supervisor (``billing.change_penaltywaiver``,
the Supervisor group), who approves or refuses it with a note — never the clerk who asked.

An approved waiver is a fact the assessment reads (``billing.penalties.plan.penalties_plan``): the charge
is owed as nothing, so it is corrected to zero on its own day and bill and never posted again. The account
is reconciled in the same transaction as the approval, so the correction is on the books at once. A waiver
waits or is refused without changing the books.
"""

from datetime import date
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone
from djmoney.money import Money

from accounts.models import Account
from core.approval import approval_decide, approval_problems
from core.clock import refuse_future
from core.db import lock_in_order
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars

from ..models import LedgerEntry, PenaltyWaiver
from ..ordinance import ordinance_on
from ..penalties.plan import LATE_CHARGE_KINDS
from .penalties import penalties_correct_posted

SUPERVISOR_PERMISSION = PenaltyWaiver.approval.permission
LIVE = (PenaltyWaiver.Status.PENDING, PenaltyWaiver.Status.APPROVED)


def late_charge_net(entry: LedgerEntry) -> Decimal:
    """A posted penalty or interest charge as it stands after its corrections."""
    corrections = LedgerEntry.objects.filter(corrects_id=entry.pk).values_list("amount", flat=True)
    return entry.amount.amount + sum(corrections, ZERO)


def waiver_limit_words(limit: Decimal) -> str:
    return (f"the office's limit of {fmt_dollars(limit)} (office policy, [penalty] waiver_approval_above in the "
            "preset)")


@transaction.atomic(durable=True)
def penalty_waiver_request(*, entry: LedgerEntry, reason: str, actor, as_of: date) -> PenaltyWaiver:
    """Ask to waive a posted penalty or interest charge. At or below the office's limit it is waived at once
    (decided by the clerk who asks) and corrected to zero on the books; above it, it waits for a supervisor."""
    reason = (reason or "").strip()
    if not reason:
        raise ApplicationError("a waiver needs a reason (kept for the audit)", field="reason")
    refuse_future(as_of, field="as_of", doing="waived")
    lock_in_order(Account.objects.filter(id=entry.account_id), "id")
    entry = LedgerEntry.objects.select_related("bill").get(pk=entry.pk)
    if entry.kind not in LATE_CHARGE_KINDS:
        raise ApplicationError(f"the entry is a {entry.get_kind_display().lower()}, not a penalty or interest charge; "
                               "only a late charge is waived (a bill's charges are corrected by a credit memo or "
                               "a void)", field="entry")
    if entry.posted_on > as_of:
        raise ApplicationError(f"the charge is posted on {entry.posted_on}, after {as_of}", field="entry")
    net = late_charge_net(entry)
    if net <= ZERO:
        raise ApplicationError(f"the {entry.get_kind_display().lower()} of {entry.posted_on} on bill "
                               f"{entry.bill.number} is already corrected to {fmt_dollars(net)}; nothing is left "
                               "to waive", field="entry")
    if PenaltyWaiver.objects.filter(entry=entry, status__in=LIVE).exists():
        raise ApplicationError(_live_refusal(entry), field="entry")
    limit = ordinance_on(as_of).waiver_approval_above
    at_once = net <= limit
    now = timezone.now()
    try:
        with transaction.atomic():
            waiver = PenaltyWaiver.objects.create(
                entry=entry, account_id=entry.account_id, bill_id=entry.bill_id, amount=Money(net, "USD"),
                reason=reason, requested_by=actor,
                status=PenaltyWaiver.Status.APPROVED if at_once else PenaltyWaiver.Status.PENDING,
                decided_by=actor if at_once else None, decided_at=now if at_once else None,
                decision_note=f"Waived at once: {fmt_dollars(net)} is at or below {waiver_limit_words(limit)}."
                if at_once else "")
    except IntegrityError:  # another waiver of the charge was asked for at the same moment
        raise ApplicationError(_live_refusal(entry), field="entry") from None
    if at_once:
        penalties_correct_posted(account_ids=[entry.account_id])
    return waiver


def _live_refusal(entry: LedgerEntry) -> str:
    return (f"the {entry.get_kind_display().lower()} of {entry.posted_on} on bill {entry.bill.number} already has "
            "a waiver waiting for a supervisor or granted")


@transaction.atomic(durable=True)
def penalty_waiver_decide(*, waiver: PenaltyWaiver, approve: bool, note: str, actor) -> PenaltyWaiver:
    """A supervisor approves or refuses a waiting waiver, with a note (required to refuse). An approval
    corrects the charge to zero on the books at once; a refusal changes nothing but the waiver."""
    waiver = PenaltyWaiver.objects.select_for_update().get(pk=waiver.pk)
    problems = approval_problems(waiver, approve=approve, note=note, actor=actor)
    if problems:
        raise ApplicationError(errors=problems)
    lock_in_order(Account.objects.filter(id=waiver.account_id), "id")
    waiver = approval_decide(waiver, approve=approve, note=note, actor=actor)
    if approve:
        penalties_correct_posted(account_ids=[waiver.account_id])
    return waiver
