"""Loading ledger entries for the pure allocation in ``billing.ledger``."""

from collections import defaultdict
from datetime import date

from ..models import LedgerEntry
from ..ordinance import payment_order
from .allocation import DEPOSIT_KINDS, AccountBalance, Entry, allocate


def entries_for_accounts(account_ids, *, through: date | None = None) -> dict[int, list[Entry]]:
    """Each account's entries of what is owed and paid; deposits held are not among them."""
    rows = LedgerEntry.objects.filter(account_id__in=account_ids).exclude(kind__in=DEPOSIT_KINDS)
    if through is not None:
        rows = rows.filter(posted_on__lte=through)
    out: dict[int, list[Entry]] = defaultdict(list)
    for account_id, entry_id, kind, posted_on, amount, bill_id, bill_date, created_at in rows.values_list(
            "account_id", "id", "kind", "posted_on", "amount", "bill_id", "bill__bill_date", "created_at",
    ).order_by("id"):
        out[account_id].append(Entry(kind=kind, posted_on=posted_on, amount=amount, entry_id=entry_id,
                                     bill_key=(bill_date, bill_id) if bill_id else None, recorded_at=created_at))
    return out


def account_balances(account_ids, *, through: date) -> dict[int, AccountBalance]:
    """Each account as it stands at the end of ``through``, under the preset's payment order."""
    order = payment_order()
    entries = entries_for_accounts(account_ids, through=through)
    return {account_id: allocate(entries.get(account_id, []), order=order) for account_id in account_ids}
