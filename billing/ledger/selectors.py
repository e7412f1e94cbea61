"""Loading ledger entries for the pure allocation in ``billing.ledger``.

**A reversed payment.** A payment taken back (a returned check, a payment posted to the wrong account, one
entered in error) keeps its entry, and its reversal is an entry of its own (kind ``payment_reversal``,
``corrects`` = the payment's entry, posted on the day it was reversed). Read through a day on or after the
reversal, the account is replayed as if the payment had never been made: both entries are left out, so the
penalties the payment had kept away are owed on their own days. Read through a day before it, the payment
counts and the reversal is not there yet: the books as they stood.
"""

from collections import defaultdict
from datetime import date

from ..models import LedgerEntry
from ..ordinance import payment_order
from .allocation import DEPOSIT_KINDS, REVERSAL_KIND, AccountBalance, Entry, allocate


def entries_for_accounts(account_ids, *, through: date | None = None) -> dict[int, list[Entry]]:
    """Each account's entries of what is owed and paid through ``through`` (everything when None); deposits
    held are not among them, nor a payment reversed on or before ``through`` and its reversal."""
    rows = LedgerEntry.objects.filter(account_id__in=account_ids).exclude(kind__in=DEPOSIT_KINDS)
    if through is not None:
        rows = rows.filter(posted_on__lte=through)
    out: dict[int, list[Entry]] = defaultdict(list)
    loaded = list(rows.values_list("account_id", "id", "kind", "posted_on", "amount", "bill_id", "bill__bill_date",
                                   "created_at", "corrects_id").order_by("id"))
    # A reversal within the range takes itself and the payment it reverses out of the replay.
    reversed_ids = {row[8] for row in loaded if row[2] == REVERSAL_KIND}
    for account_id, entry_id, kind, posted_on, amount, bill_id, bill_date, created_at, _ in loaded:
        if kind == REVERSAL_KIND or entry_id in reversed_ids:
            continue
        out[account_id].append(Entry(kind=kind, posted_on=posted_on, amount=amount, entry_id=entry_id,
                                     bill_key=(bill_date, bill_id) if bill_id else None, recorded_at=created_at))
    return out


def account_balances(account_ids, *, through: date) -> dict[int, AccountBalance]:
    """Each account as it stands at the end of ``through``, under the preset's payment order."""
    order = payment_order()
    entries = entries_for_accounts(account_ids, through=through)
    return {account_id: allocate(entries.get(account_id, []), order=order) for account_id in account_ids}
