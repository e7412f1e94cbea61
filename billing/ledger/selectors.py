"""Loading ledger entries for the pure allocation in ``billing.ledger``.

**A reversed payment.** A payment taken back (a returned check, a payment posted to the wrong account, one
entered in error) keeps its entry, and its reversal is an entry of its own (kind ``payment_reversal``,
``corrects`` = the payment's entry, posted on the day it was reversed). Read through a day on or after the
reversal, the account is replayed as if the payment had never been made: both entries are left out, so the
penalties the payment had kept away are owed on their own days. Read through a day before it, the payment
counts and the reversal is not there yet: the books as they stood.
"""

from collections import defaultdict
from datetime import date, timedelta

from django.db.models import F, Min, Sum
from django.db.models.functions import Round

from core.db import collector_paused, values_rows
from ordinance.selectors import installed_utility, section

from ..models import Bill, LedgerEntry, PaymentOrder, PendingCharge
from .allocation import CATEGORY, DEPOSIT_KINDS, PRINCIPAL_CATEGORIES, REVERSAL_KIND, AccountBalance, Entry, allocate

# Charges of principal (water, fees, fines, debit memos): the kinds a charge below zero could leave a bill owing.
PRINCIPAL_KINDS = tuple(kind for kind, category in CATEGORY.items() if category in PRINCIPAL_CATEGORIES)
_new_entry = object.__new__
_set = object.__setattr__


def payment_order() -> str:
    """The installed preset's payment order (``[policy] payment_order``); the default where none is installed yet
    (a balance is still a balance before any preset is)."""
    utility = installed_utility()
    return section("policy", installed=utility).payment_order if utility else PaymentOrder.PRINCIPAL_FIRST


def replay_entry(kind: str, posted_on: date, amount, bill_key: tuple | None, entry_id: int,
                 recorded_at=None, due_on: date | None = None) -> Entry:
    """An ``Entry`` for the replay, its fields set at once: the frozen dataclass's own constructor sets each
    in turn, and a chunk's replay makes tens of thousands."""
    entry = _new_entry(Entry)
    _set(entry, "__dict__", {"kind": kind, "posted_on": posted_on, "amount": amount, "bill_key": bill_key,
                             "entry_id": entry_id, "recorded_at": recorded_at, "due_on": due_on})
    return entry


# The installed rules' time to pay a fine, in days after it is imposed, or None where a fine is due with its bill:
# registered by the part of the office that reads it (termination: Washingtonville § 169-26, "within 10 days").
_fine_time: list = []


def fine_time_register(days_to_pay) -> None:
    """``days_to_pay()`` gives the installed rules' time to pay a fine (None: due with its bill)."""
    _fine_time[:] = [days_to_pay]


def fine_dues(bill_ids) -> dict[int, date]:
    """The earliest own due date of the fines each of these bills carries: the day the fine was imposed and the
    installed rules' time to pay one (``fine_time_register``); a bill whose fines have none is left out."""
    days = _fine_time[0]() if _fine_time and bill_ids else None
    if days is None:
        return {}
    return {bill_id: first + timedelta(days=days) for bill_id, first in
            PendingCharge.objects.filter(bill_id__in=list(bill_ids), kind=PendingCharge.Kind.FINE,
                                         cancelled_at__isnull=True)
            .order_by().values("bill_id").annotate(first=Min("charged_on")).values_list("bill_id", "first")}


def charge_due(kind: str, bill_id: int | None, due_on: date | None, bill_dues: dict, fines: dict) -> date | None:
    """When a charge of ``kind`` falls due (``Entry.due_on``): on a bill, the bill's due date, or a fine's own when
    earlier; on no bill, its own due date (an invoice's), if any."""
    if bill_id is None:
        return due_on
    due = bill_dues.get(bill_id)
    if kind == "fine" and bill_id in fines:
        return min(fines[bill_id], due) if due is not None else fines[bill_id]
    return due


def _bill_keys(account_ids, bill_ids) -> tuple[dict[int, tuple], dict[int, date]]:
    """``(bill_date, bill_id)`` of each bill, the key that orders an account's bills oldest first (one tuple
    per bill, shared by its entries), and each bill's due date."""
    keys, dues = {}, {}
    for bill_id, bill_date, due_date in values_rows(
            Bill.objects.filter(account_id__any=account_ids).order_by().values_list("id", "bill_date", "due_date")):
        keys[bill_id], dues[bill_id] = (bill_date, bill_id), due_date
    missing = [bill_id for bill_id in bill_ids if bill_id not in keys]  # an entry on another account's bill
    if missing:
        for bill_id, bill_date, due_date in Bill.objects.filter(id__any=missing).order_by().values_list(
                "id", "bill_date", "due_date"):
            keys[bill_id], dues[bill_id] = (bill_date, bill_id), due_date
    return keys, dues


def entries_for_accounts(account_ids, *, through: date | None = None,
                         recorded_at: bool = False) -> dict[int, list[Entry]]:
    """Each account's entries of what is owed and paid through ``through`` (everything when None); deposits
    held are not among them, nor a payment reversed on or before ``through`` and its reversal.

    ``recorded_at``: give each entry the moment it was written (``Entry.recorded_at``), which only what a
    bill knew at its issue needs; without it the entries' ``recorded_at`` is None (reading and converting
    the timestamps is a good part of the load on SQLite)."""
    with collector_paused():
        return _entries_for_accounts(list(account_ids), through=through, recorded_at=recorded_at)


def _entries_for_accounts(account_ids: list, *, through: date | None, recorded_at: bool) -> dict[int, list[Entry]]:
    rows = LedgerEntry.objects.filter(account_id__any=account_ids).exclude(kind__in=DEPOSIT_KINDS)
    if through is not None:
        rows = rows.filter(posted_on__lte=through)
    columns = ["account_id", "id", "kind", "posted_on", "amount", "bill_id", "corrects_id", "due_on"]
    loaded = values_rows(rows.values_list(*columns, *(["created_at"] if recorded_at else [])).order_by("id"))
    bill_keys, bill_dues = _bill_keys(account_ids, {row[5] for row in loaded if row[5] is not None})
    fines = fine_dues({row[5] for row in loaded if row[2] == "fine" and row[5] is not None})
    # A reversal within the range takes itself and the payment it reverses out of the replay.
    reversed_ids = {row[6] for row in loaded if row[2] == REVERSAL_KIND}
    out: dict[int, list[Entry]] = defaultdict(list)
    for row in loaded:
        kind, entry_id, bill_id = row[2], row[1], row[5]
        if kind == REVERSAL_KIND or entry_id in reversed_ids:
            continue
        out[row[0]].append(replay_entry(kind, row[3], row[4], bill_keys[bill_id] if bill_id is not None else None,
                                        entry_id, row[8] if recorded_at else None,
                                        charge_due(kind, bill_id, row[7], bill_dues, fines)))
    return out


def accounts_that_may_owe(*, through: date, account_ids=None) -> list[int]:
    """The accounts (of ``account_ids``, or every one) that may have a balance or a bill unpaid at the end of
    ``through``, by id: those whose entries of what is owed and paid on or before then do not net to zero, and
    any with a principal charge below zero.

    An account's balance in the allocation is exactly the sum of its entries: a charge adds its amount, a
    credit takes its amount off a bill or into the credit, and settling moves money from the credit to the
    charges, which changes neither; a payment reversed within the range and its reversal (left out of the
    replay together) cancel. So an account netting to zero has a zero balance; and when no charge is below
    zero (a late charge's correction sits on the charge's own day and bill, and never takes it below zero),
    no bill of it is unpaid either: a credit left over pays whatever is unpaid, so a bill owing and a credit
    cannot stand side by side. Its entries need not be loaded and replayed. The sum is taken in whole cents,
    each entry rounded to its cent first: exact on SQLite (whose sums are floating point, exact for whole
    numbers) as on PostgreSQL."""
    rows = LedgerEntry.objects.filter(posted_on__lte=through).exclude(kind__in=DEPOSIT_KINDS)
    if account_ids is not None:
        rows = rows.filter(account_id__any=list(account_ids))
    listed = {account_id for account_id, cents in rows.values("account_id").annotate(
        cents=Sum(Round(F("amount") * 100))).order_by("account_id").values_list("account_id", "cents") if cents}
    listed.update(rows.filter(kind__in=PRINCIPAL_KINDS, amount__lt=0).values_list("account_id", flat=True))
    return sorted(listed)


def account_balances(account_ids, *, through: date) -> dict[int, AccountBalance]:
    """Each account as it stands at the end of ``through``, under the preset's payment order."""
    order = payment_order()
    with collector_paused():
        entries = entries_for_accounts(account_ids, through=through)
        return {account_id: allocate(entries.get(account_id, []), order=order) for account_id in account_ids}
