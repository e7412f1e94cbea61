"""Assessing penalties and interest: posting what the facts make owed, and nothing else.

``billing.penalties.penalties_owed`` says, from the charges, payments and credits alone, which penalties
are owed on each day up to a date. Assessment compares that with what the books already hold and posts
the difference: a penalty not yet posted is posted on its own day; a penalty the facts no longer support
(a payment dated before it was recorded after it, a bill voided) gets a correction on the same day and
bill, referring to it. So assessing day by day, once in catch-up, or before or after a late payment file
all end with the same books (``tests/billing/test_any_order.py``).

Every account with a live bill past its due date is looked at: a bill paid in full the day after its due
date still owes the first penalty, although the account's balance is zero by the time anyone assesses.
Late charges are posted as the scheme's due names them (kind ``penalty`` or ``interest``), each corrected
by an entry of its own kind (``penalty_correction``, ``interest_correction``). Chunks of accounts are locked
in id order, so concurrent assessments and payment posts queue instead of posting twice; the database also
forbids a second penalty, or a second interest charge, for one bill and date.

An approved penalty waiver is one of the facts: the charge it waives is owed as nothing, so it is corrected
to zero on its own day ("… waived: <reason>") and never posted again (``billing.services.waivers``).
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db import transaction
from django.db.models import Max

from accounts.models import Account
from core.clock import refuse_future
from core.money import ZERO

from ..ledger.posting import ledger_post_many
from ..models import LedgerEntry
from ..penalty_selectors import CHUNK, CORRECTION_OF, LATE_CHARGE_KINDS, penalties_plan, penalty_candidates

__all__ = ["CHUNK", "CORRECTION_OF", "LATE_CHARGE_KINDS", "PenaltyResult", "penalties_assess_due",
           "penalties_correct_posted", "penalties_reconcile", "penalty_candidates"]


@dataclass
class PenaltyResult:
    posted: int = 0
    corrected: int = 0
    total: Decimal = ZERO  # net change: penalties posted less corrections
    accounts: int = 0

    def add(self, other: "PenaltyResult") -> None:
        self.posted += other.posted
        self.corrected += other.corrected
        self.total += other.total
        self.accounts += other.accounts


def penalties_assess_due(*, as_of: date, progress=None) -> PenaltyResult:
    """``assess_penalties``: every penalty due on or before ``as_of``, exactly once, on the facts known.

    Every candidate is reconciled, whatever ran before: the nightly job's correctness rests on nothing else.
    The accounts ``billing.penalty_selectors.penalty_candidates_since`` names (those whose plan can be
    non-empty since the last nightly assessment, which the preview plans alone) could speed it later."""
    refuse_future(as_of, doing="assessed")
    result = PenaltyResult()
    ids = penalty_candidates(as_of=as_of)
    for start in range(0, len(ids), CHUNK):
        part = ids[start:start + CHUNK]
        result.add(penalties_reconcile(through=dict.fromkeys(part, as_of)))
        if progress:
            progress(len(part))
    return result


def penalties_correct_posted(*, account_ids, after: dict[int, date] | None = None) -> PenaltyResult:
    """Payments or credits were recorded, or a bill voided: correct the penalties already posted on these
    accounts that the facts no longer support (up to each account's latest posted penalty or interest charge;
    later days are the next assessment's). ``after`` (account id → the earliest date of what was recorded) skips an
    account with no penalty posted after that date: a penalty on day D reads only what was dated before D,
    so nothing it was computed from has changed — a payment file of today's payments costs no replay."""
    latest = dict(LedgerEntry.objects.filter(account_id__in=list(account_ids), kind__in=LATE_CHARGE_KINDS)
                  .values("account_id").annotate(last=Max("posted_on")).values_list("account_id", "last"))
    if after is not None:
        latest = {account_id: last for account_id, last in latest.items() if last > after[account_id]}
    return penalties_reconcile(through=latest) if latest else PenaltyResult()


@transaction.atomic
def penalties_reconcile(*, through: dict[int, date]) -> PenaltyResult:
    """Bring the posted penalties of these accounts (account id → the last day to look at) in line with
    what the facts make owed: lock the accounts, plan (``billing.penalty_selectors.penalties_plan``, which
    the preview runs alone) and post the plan."""
    account_ids = sorted(through)
    list(Account.objects.select_for_update().filter(id__in=account_ids).order_by("id").values_list("id"))
    new = penalties_plan(through=through)
    ledger_post_many(new, fresh=True)  # compared with the books under the accounts' locks
    return PenaltyResult(
        posted=sum(1 for e in new if e.kind in LATE_CHARGE_KINDS),
        corrected=sum(1 for e in new if e.kind not in LATE_CHARGE_KINDS),
        total=sum((e.amount for e in new), ZERO),
        accounts=len({e.account_id for e in new}))
