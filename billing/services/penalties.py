"""Assessing penalties and interest due on or before a date.

For every account with a past-due bill and a positive balance, the scheme lists the days a charge falls
due on each bill; the ledger is replayed as it stood at the start of each such day (penalties posted the
same day are independent of each other), and the charge is posted on its own day. Catch-up safe: three
missed months post three penalties, each dated on its day and each on the principal then unpaid.
Idempotent: the database forbids a second penalty for one bill and date.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from djmoney.money import Money

from waterbilling.errors import ApplicationError

from ..ledger import Entry, allocate
from ..models import Bill, LedgerEntry
from ..money import ZERO
from ..utility import installed_utility
from .ledger import entries_for_accounts

CHUNK = 500


@dataclass
class PenaltyResult:
    posted: int = 0
    total: Decimal = ZERO
    accounts: int = 0


def penalty_candidates(*, as_of: date) -> list[int]:
    """Accounts with a live bill past its due date whose ledger is not settled (filter only; the exact
    figures come from the replay)."""
    past_due = Bill.objects.filter(due_date__lt=as_of).exclude(status=Bill.Status.VOID)
    ids = past_due.values_list("account_id", flat=True).distinct()
    balances = defaultdict(lambda: ZERO)
    for account_id, amount in LedgerEntry.objects.filter(account_id__in=ids, posted_on__lte=as_of).values_list(
            "account_id", "amount").iterator(chunk_size=20000):
        balances[account_id] += amount
    return sorted(a for a, b in balances.items() if b > ZERO)


def penalties_assess_due(*, as_of: date, progress=None) -> PenaltyResult:
    if as_of > timezone.localdate():
        raise ApplicationError(f"{as_of} is after today; nothing is assessed in the future", field="date")
    scheme = installed_utility().penalties
    result = PenaltyResult()
    ids = penalty_candidates(as_of=as_of)
    for start in range(0, len(ids), CHUNK):
        part = ids[start:start + CHUNK]
        with transaction.atomic():
            new = _assess_accounts(part, as_of=as_of, scheme=scheme)
            LedgerEntry.objects.bulk_create(new, ignore_conflicts=True, batch_size=5000)
        result.posted += len(new)
        result.total += sum((e.amount.amount for e in new), ZERO)
        result.accounts += len({e.account_id for e in new})
        if progress:
            progress(len(part))
    return result


def _assess_accounts(account_ids: list[int], *, as_of: date, scheme) -> list[LedgerEntry]:
    entries = entries_for_accounts(account_ids, through=as_of)
    posted = set(LedgerEntry.objects.filter(account_id__in=account_ids, kind=LedgerEntry.Kind.PENALTY)
                 .values_list("bill_id", "posted_on"))
    bills = defaultdict(list)
    for bill in Bill.objects.filter(Q(account_id__in=account_ids), due_date__lt=as_of).exclude(
            status=Bill.Status.VOID).values("id", "account_id", "bill_date", "due_date", "number"):
        bills[bill["account_id"]].append(bill)
    new: list[LedgerEntry] = []
    for account_id, account_bills in bills.items():
        pending = sorted(((due, bill) for bill in account_bills
                          for due in scheme.dates(bill_date=bill["bill_date"], due_date=bill["due_date"],
                                                  through=as_of)
                          if (bill["id"], due.on) not in posted), key=lambda pair: (pair[0].on, pair[1]["id"]))
        ledger = list(entries.get(account_id, []))
        for due, bill in pending:
            state = allocate([e for e in ledger if e.posted_on < due.on])
            key = (bill["bill_date"], bill["id"])
            balance = state.bills.get(key)
            if balance is None:
                continue
            amount = scheme.amount(due, unpaid_principal=balance.unpaid_principal, unpaid_total=balance.unpaid_total)
            if amount <= ZERO:
                continue
            ledger.append(Entry(kind="penalty", posted_on=due.on, amount=amount, bill_key=key))
            new.append(LedgerEntry(account_id=account_id, bill_id=bill["id"], kind=LedgerEntry.Kind.PENALTY,
                                   posted_on=due.on, amount=Money(amount, "USD"), citation=due.citation,
                                   description=f"{due.description} on bill {bill['number']}"))
    return new
