"""The one door to what an account owes: ``balances(account_ids, through=…)``.

Every page, list, notice and guard above billing asks here; how it is worked out is billing's own business. Each
account's ledger is replayed under the payment order (``billing.ledger``), or, where many accounts are asked at once
and the fast paths are on, read from the standings the nightly job keeps (``billing.ledger.standing``: the same
figures, a replay only for the accounts something happened to since). A few accounts are replayed outright: for a
page about one account that is one query of its entries, never the two a standing costs.

``AccountBalance``: ``balance`` (what is owed net of credit), ``credit``, and per bill (``bills``, keyed by
(bill date, bill id), or a lone charge's (day, None, entry id)) its ``BillBalance``: ``unpaid`` and ``charged`` by
category, ``unpaid_principal``, ``unpaid_interest``, ``unpaid_total``.
"""

from collections.abc import Iterable
from datetime import date
from decimal import Decimal

from core.db import collector_paused
from core.money import ZERO

from .fast_paths import fast_paths_on
from .ledger.allocation import DEPOSIT_KINDS, AccountBalance, BillBalance, allocate, key_bill_id, key_entry_id
from .ledger.selectors import accounts_that_may_owe, entries_for_accounts, fine_time_register, payment_order
from .ledger.standing import only_open, open_balances

__all__ = ["DEPOSIT_KINDS", "AccountBalance", "BillBalance", "accounts_that_may_owe", "balances", "bill_id_of",
           "entry_id_of", "fine_time_register", "paid_since"]

# Up to this many accounts are replayed outright; more are read from their standings where those hold.
REPLAY_AT_MOST = 50


def balances(account_ids: Iterable[int], *, through: date, order: str | None = None,
             paid_bills: bool = False) -> dict[int, AccountBalance]:
    """Each account as it stands at the end of ``through``, under ``order`` (the preset's payment order unless a
    page that has read the ordinance already gives it). Its bills with something unpaid, or with ``paid_bills``
    every bill (always a replay: standings keep only what is open). The same figures however they are found."""
    ids = list(account_ids)
    order = order or payment_order()
    if not paid_bills and len(ids) > REPLAY_AT_MOST and fast_paths_on():
        return open_balances(ids, through=through, order=order)
    with collector_paused():
        entries = entries_for_accounts(ids, through=through)
        replayed = {account_id: allocate(entries.get(account_id, []), order=order) for account_id in ids}
    return replayed if paid_bills else {account_id: only_open(state) for account_id, state in replayed.items()}


def bill_id_of(key: tuple) -> int | None:
    """The bill id of a ``bills`` key (None for a charge on no bill)."""
    return key_bill_id(key)


def entry_id_of(key: tuple) -> int | None:
    """The ledger entry of a ``bills`` key for a charge on no bill (None for a bill)."""
    return key_entry_id(key)


def paid_since(account_id: int, *, since: date, through: date) -> Decimal:
    """What the account has paid (payments and credits, a reversed payment never counted) from ``since`` through
    ``through``, as a positive amount."""
    entries = entries_for_accounts([account_id], through=through).get(account_id, [])
    return -sum((e.amount for e in entries if e.kind in ("payment", "credit") and e.posted_on >= since), ZERO)
