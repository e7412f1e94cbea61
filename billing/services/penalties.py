"""Assessing penalties and interest: posting what the facts make owed, and nothing else.

``billing.penalties.rules.penalties_owed`` says, from the charges, payments and credits alone, which penalties
are owed on each day up to a date. Assessment compares that with what the books already hold and posts
the difference: a penalty not yet posted is posted on its own day; a penalty the facts no longer support
(a payment dated before it was recorded after it, a bill voided) gets a correction on the same day and
bill, referring to it. So assessing day by day, once in catch-up, or before or after a late payment file
all end with the same books (``tests/billing/test_any_order.py``).

``assess_penalties`` looks at every account with a live bill past its due date: a bill paid in full the day
after its due date still owes the first penalty, although the account's balance is zero by the time anyone
assesses. The nightly job looks only at the accounts its last night left something to do on
(``penalties_assess_due(since_last_night=True)``), carrying the unchanged ones forward from their books.
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
from multiprocessing import get_context
from multiprocessing.util import Finalize

from django.db import connection, connections, transaction
from django.db.models import Max

from accounts.models import Account
from core.clock import refuse_future
from core.db import is_postgres, lock_in_order
from core.money import ZERO

from ..ledger.posting import ledger_post_many
from ..ledger.standing import accounts_where
from ..models import LedgerEntry
from ..penalties.plan import CHUNK, CORRECTION_OF, LATE_CHARGE_KINDS, penalties_plan, penalty_candidates
from ..penalties.shortcuts import CandidatesSince, changed_since, penalties_carried, penalty_candidates_split

__all__ = ["CHUNK", "CORRECTION_OF", "LATE_CHARGE_KINDS", "PenaltyResult", "penalties_assess_due",
           "penalties_carry", "penalties_correct_posted", "penalties_reconcile", "penalty_candidates"]


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


def penalties_assess_due(*, as_of: date, progress=None, since_last_night: bool = False,
                         workers: int = 1) -> PenaltyResult:
    """``assess_penalties``: every penalty due on or before ``as_of``, exactly once, on the facts known.

    Every candidate is reconciled, whatever ran before, unless ``since_last_night`` (the nightly job): then,
    after a nightly assessment of an earlier day L, only the accounts whose plan can be non-empty are looked
    at (``penalty_candidates_split``, the shortcut the penalties preview takes): those whose facts changed
    since are reconciled in full, and the others' charges of the days after L are carried forward from what
    their books leave open at the end of L (``penalties_carry``). With no such night to rely on, every
    candidate is reconciled. ``assess_penalties`` run by hand reconciles every candidate.

    ``workers`` above one shares the chunks to reconcile among that many forked processes (a catch-up of
    months on every account), each with a connection of its own, on PostgreSQL; inside a transaction they
    are reconciled here, as the processes could not see what it has written."""
    refuse_future(as_of, doing="assessed")
    result = PenaltyResult()
    split = penalty_candidates_split(as_of=as_of) if since_last_night else None
    if split is None:
        ids, carried = penalty_candidates(as_of=as_of), []
    else:
        ids, carried = sorted(split.changed), sorted(split.carried)
    chunks = [ids[start:start + CHUNK] for start in range(0, len(ids), CHUNK)]
    if workers > 1 and len(chunks) > 1 and is_postgres() and not connection.in_atomic_block:
        done = _reconciled_in_processes(chunks, as_of=as_of, workers=workers)
    else:
        done = (penalties_reconcile(through=dict.fromkeys(part, as_of)) for part in chunks)
    for part, reconciled in zip(chunks, done, strict=True):
        result.add(reconciled)
        if progress:
            progress(len(part))
    for start in range(0, len(carried), CHUNK):
        part = carried[start:start + CHUNK]
        result.add(penalties_carry(part, since=split, through=as_of))
        if progress:
            progress(len(part))
    return result


def _reconciled_in_processes(chunks: list[list[int]], *, as_of: date, workers: int):
    """``penalties_reconcile`` of each chunk through ``as_of`` in a pool of ``workers`` forked processes, the
    results in the chunks' order as each is done. The connections are closed first: each process opens its
    own."""
    connections.close_all()
    pool = get_context("fork").Pool(workers, initializer=_close_connections_at_exit)
    try:
        yield from pool.imap(_reconcile_chunk, [(part, as_of) for part in chunks])
    except BaseException:
        pool.terminate()
        raise
    pool.close()
    pool.join()


def _close_connections_at_exit() -> None:
    """In a pool process: close its database connections when it exits, telling the server so."""
    Finalize(None, connections.close_all, exitpriority=0)


def _reconcile_chunk(job: tuple[list[int], date]) -> PenaltyResult:
    part, as_of = job
    return penalties_reconcile(through=dict.fromkeys(part, as_of))


@transaction.atomic
def penalties_carry(account_ids: list[int], *, since: CandidatesSince, through: date) -> PenaltyResult:
    """Post the late charges of the days after the last nightly assessment (``since.assessed``) through
    ``through`` on accounts nothing has happened to since (``billing.penalties.shortcuts.penalties_carried``),
    under the accounts' locks; an account something was recorded on since the accounts were chosen, or one
    the carrying leaves to the full plan, is reconciled in full."""
    _lock(account_ids)
    changed = changed_since(assessed=since.assessed, since=since.since, account_ids=account_ids)
    new: list = []
    left = penalties_carried([a for a in account_ids if a not in changed], assessed=since.assessed,
                             through=through, postings=new)
    full = sorted(changed.union(left))
    if full:
        new.extend(penalties_plan(through=dict.fromkeys(full, through)))
    ledger_post_many(new, fresh=True)  # compared with the books under the accounts' locks
    return _result(new)


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
    what the facts make owed: lock the accounts, plan (``billing.penalties.plan.penalties_plan``, which
    the preview runs alone) and post the plan."""
    account_ids = sorted(through)
    _lock(account_ids)
    new = penalties_plan(through=through)
    ledger_post_many(new, fresh=True)  # compared with the books under the accounts' locks
    return _result(new)


def _lock(account_ids: list[int]) -> None:
    """Lock these accounts, in id order; read as a range of ids where they fill a good part of one."""
    lock_in_order(Account.objects.filter(accounts_where(account_ids, field="id"), id__in=account_ids), "id")


def _result(new) -> PenaltyResult:
    return PenaltyResult(
        posted=sum(1 for e in new if e.kind in LATE_CHARGE_KINDS),
        corrected=sum(1 for e in new if e.kind not in LATE_CHARGE_KINDS),
        total=sum((e.amount for e in new), ZERO),
        accounts=len({e.account_id for e in new}))
