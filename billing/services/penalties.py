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
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db import transaction
from django.db.models import Max

from accounts.models import Account
from core.clock import refuse_future
from core.money import ZERO

from ..ledger.posting import Posting, correction_source, late_charge_source, ledger_post_many
from ..ledger.selectors import entries_for_accounts
from ..models import Bill, LedgerEntry
from ..ordinance import ordinance_on
from ..penalties import BillTerms, penalties_owed

CHUNK = 500
# The late charges a scheme posts, and the kind of entry that corrects each.
LATE_CHARGE_KINDS = (LedgerEntry.Kind.PENALTY.value, LedgerEntry.Kind.INTEREST.value)
CORRECTION_OF = {LedgerEntry.Kind.PENALTY.value: LedgerEntry.Kind.PENALTY_CORRECTION.value,
                 LedgerEntry.Kind.INTEREST.value: LedgerEntry.Kind.INTEREST_CORRECTION.value}


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


def penalty_candidates(*, as_of: date) -> list[int]:
    """Accounts with a bill (live or voided) past its due date: any of them may owe a penalty or hold one
    the facts no longer support."""
    return list(Bill.objects.filter(due_date__lt=as_of).order_by("account_id")
                .values_list("account_id", flat=True).distinct())


def penalties_assess_due(*, as_of: date, progress=None) -> PenaltyResult:
    """``assess_penalties``: every penalty due on or before ``as_of``, exactly once, on the facts known."""
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
    what the facts make owed."""
    account_ids = sorted(through)
    list(Account.objects.select_for_update().filter(id__in=account_ids).order_by("id").values_list("id"))
    last_day = max(through.values())
    ordinance = ordinance_on(last_day)
    scheme, order = ordinance.penalties, ordinance.payment_order
    entries = entries_for_accounts(account_ids, through=last_day)
    bills: dict[int, list[BillTerms]] = defaultdict(list)
    numbers: dict[int, str] = {}
    for bill_id, account_id, bill_date, due_date, number, status in Bill.objects.filter(
            account_id__in=account_ids, due_date__lt=last_day).values_list(
            "id", "account_id", "bill_date", "due_date", "number", "status"):
        numbers[bill_id] = number
        if status != Bill.Status.VOID:
            bills[account_id].append(BillTerms(key=(bill_date, bill_id), bill_date=bill_date, due_date=due_date))
    # What is posted: per bill, day and kind, the late charge's row and its net amount after corrections.
    posted: dict[tuple[int, date, str], list] = {}
    by_id: dict[int, list] = {}
    corrections: list[tuple[int, Decimal]] = []
    corrected_times: dict[int, int] = defaultdict(int)
    for entry_id, account_id, bill_id, posted_on, kind, amount, corrects_id in LedgerEntry.objects.filter(
            account_id__in=account_ids, kind__in=[*LATE_CHARGE_KINDS, *CORRECTION_OF.values()],
            posted_on__lte=last_day).values_list("id", "account_id", "bill_id", "posted_on", "kind", "amount",
                                                 "corrects_id").order_by("id"):
        if kind in LATE_CHARGE_KINDS:
            posted[(bill_id, posted_on, kind)] = by_id[entry_id] = [entry_id, account_id, amount, kind]
        else:
            corrections.append((corrects_id, amount))
    for corrects_id, amount in corrections:
        by_id[corrects_id][2] += amount
        corrected_times[corrects_id] += 1

    new: list[Posting] = []
    for account_id in account_ids:
        owed = penalties_owed(entries=entries.get(account_id, []), bills=bills.get(account_id, []), scheme=scheme,
                              through=through[account_id], order=order)
        seen = set()
        for penalty in owed:
            bill_id, day, kind = penalty.bill_key[1], penalty.due.on, penalty.due.kind
            seen.add((bill_id, day, kind))
            row = posted.get((bill_id, day, kind))
            if row is None:
                new.append(Posting(account_id=account_id, bill_id=bill_id, kind=kind,
                                   posted_on=day, amount=penalty.amount, source=late_charge_source(bill_id, day),
                                   citation=penalty.due.citation,
                                   description=f"{penalty.due.description} on bill {numbers[bill_id]}"))
            elif row[2] != penalty.amount:
                new.append(_correction(row, penalty.amount, bill_id=bill_id, day=day, number=numbers[bill_id],
                                       times=corrected_times[row[0]]))
        for (bill_id, day, kind), row in posted.items():
            if row[1] == account_id and day <= through[account_id] and (bill_id, day, kind) not in seen and row[2]:
                new.append(_correction(row, ZERO, bill_id=bill_id, day=day, number=numbers[bill_id],
                                       times=corrected_times[row[0]]))
    ledger_post_many(new, fresh=True)  # compared with the books under the accounts' locks
    result = PenaltyResult(
        posted=sum(1 for e in new if e.kind in LATE_CHARGE_KINDS),
        corrected=sum(1 for e in new if e.kind not in LATE_CHARGE_KINDS),
        total=sum((e.amount for e in new), ZERO),
        accounts=len({e.account_id for e in new}))
    return result


def _correction(row: list, owed: Decimal, *, bill_id: int, day: date, number: str, times: int) -> Posting:
    """The correction that brings a posted late charge (corrected ``times`` times so far) to ``owed``."""
    entry_id, account_id, net, kind = row
    return Posting(account_id=account_id, bill_id=bill_id, kind=CORRECTION_OF[kind],
                   posted_on=day, amount=owed - net, corrects_id=entry_id,
                   source=correction_source(entry_id, times + 1, kind=kind),
                   description=f"{LedgerEntry.Kind(kind).label} of {day:%b} {day.day}, {day:%Y} on bill {number} "
                               f"corrected to ${owed:,.2f}")
