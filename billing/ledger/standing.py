"""What each account's ledger leaves open, kept between reads (``billing.models.AccountStanding``).

The aging, the delinquency list and the relevy list read every account that may owe, and replaying every
ledger is most of their time. An account's open bills and credit are a function of its entries and the
payment order, and the ledger is append-only: an account whose latest entry is the one its standing was
worked from has the same entries, so the standing holds for any day on or after its latest entry's date.
``open_balances`` uses the standings that hold and replays the others (without writing: a read never
waits on a write); ``refresh_standings`` rewrites those that no longer hold, which the nightly job does
after the night's bills and late charges are posted, so the next day's pages replay only the accounts
something has happened to since.

``open_balances`` gives each account's ``AccountBalance`` with only its bills that have something unpaid
(the paid ones are left out): the balance, the credit and every unpaid amount are those of
``account_balances``.
"""

from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from functools import lru_cache

from django.db.models import Max, Q

from core.db import collector_paused
from core.money import ZERO

from ..fast_paths import fast_paths_on
from ..models import AccountStanding, LedgerEntry
from .allocation import DEPOSIT_KINDS, AccountBalance, BillBalance, allocate
from .selectors import entries_for_accounts, payment_order

CHUNK = 2000


def open_balances(account_ids: Iterable[int], *, through: date, order: str | None = None
                  ) -> dict[int, AccountBalance]:
    """Each account's open bills and credit at the end of ``through`` (``account_balances`` without the
    bills paid in full), from its standing where that holds."""
    ids = list(account_ids)
    order = order or payment_order()
    fast = fast_paths_on()  # off: every account replayed, its standing not read
    out: dict[int, AccountBalance] = {}
    with collector_paused():
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            latest = _latest_entries(chunk)
            kept = _standing_rows(chunk) if fast else {}
            stale = []
            for account_id in chunk:
                last = latest.get(account_id)
                if last is None:
                    out[account_id] = AccountBalance(bills={}, credit=ZERO)
                    continue
                standing = kept.get(account_id)
                if (standing is not None and standing[0] == last[0] and standing[2] == order
                        and last[1] <= through):
                    out[account_id] = decode(standing[3])
                else:
                    stale.append(account_id)
            if stale:
                entries = entries_for_accounts(stale, through=through)
                for account_id in stale:
                    out[account_id] = only_open(allocate(entries.get(account_id, []), order=order))
    return out


def refresh_standings(account_ids: Iterable[int] | None = None) -> int:
    """Rewrite the standings (of ``account_ids``, or of every account on the ledger) that no longer hold;
    return how many were written."""
    order = payment_order()
    if account_ids is None:
        account_ids = list(LedgerEntry.objects.exclude(kind__in=DEPOSIT_KINDS).order_by()
                           .values_list("account_id", flat=True).distinct())
    ids = sorted(set(account_ids))
    written = 0
    with collector_paused():
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            latest = _latest_entries(chunk)
            kept = _standing_rows(chunk)
            stale = [account_id for account_id in chunk if account_id in latest and (
                kept.get(account_id) is None or kept[account_id][0] != latest[account_id][0]
                or kept[account_id][2] != order)]
            if not stale:
                continue
            entries = entries_for_accounts(stale)
            rows = []
            for account_id in stale:
                state = only_open(allocate(entries.get(account_id, []), order=order))
                last_entry_id, last_posted_on = latest[account_id]
                rows.append(AccountStanding(account_id=account_id, last_entry_id=last_entry_id,
                                            last_posted_on=last_posted_on, payment_order=order,
                                            state=encode(state)))
            AccountStanding.objects.bulk_create(
                rows, update_conflicts=True, unique_fields=["account"],
                update_fields=["last_entry_id", "last_posted_on", "payment_order", "state", "refreshed_at"])
            written += len(rows)
    return written


def standings_sample_check(*, sample: int = 200) -> dict:
    """Replay the ledgers of ``sample`` accounts, picked at random among those whose standing holds, and compare
    each with its kept standing; a standing that differs is dropped (the pages replay that account until the
    next refresh writes it anew) and reported: ``{"standings_checked", "standings_differing",
    "standings_differing_accounts"}`` (at most 20 account ids)."""
    order = payment_order()
    picked = list(AccountStanding.objects.filter(payment_order=order).order_by("?")
                  .values_list("account_id", flat=True)[:sample])
    differing: list[int] = []
    checked = 0
    with collector_paused():
        latest = _latest_entries(picked)
        kept = _standing_rows(picked)
        holding = [a for a in picked if a in latest and a in kept and kept[a][0] == latest[a][0]]
        entries = entries_for_accounts(holding)
        for account_id in holding:
            checked += 1
            replayed = encode(only_open(allocate(entries.get(account_id, []), order=order)))
            if replayed != kept[account_id][3]:
                differing.append(account_id)
    if differing:
        AccountStanding.objects.filter(account_id__in=differing).delete()
    return {"standings_checked": checked, "standings_differing": len(differing),
            "standings_differing_accounts": differing[:20]}


def accounts_where(account_ids: list[int], *, field: str = "account_id") -> Q:
    """The accounts as a range of ``field`` when they fill a good part of it (a chunk of accounts in id
    order), else as a list. A range is read by an index range scan whatever the planner knows
    of the tables; a list of hundreds of ids on a table not analysed since a large load is read by scanning
    the whole table, in every chunk. Rows of other accounts in the range are for the caller to leave out."""
    if len(account_ids) > 50:
        first, last = min(account_ids), max(account_ids)
        if last - first < 4 * len(account_ids):
            return Q(**{f"{field}__gte": first, f"{field}__lte": last})
    return Q(**{f"{field}__in": account_ids})


def _latest_entries(account_ids: list[int]) -> dict[int, tuple[int, date]]:
    """Each account's latest entry (its id) and the latest day any of its entries is posted on, deposits
    left out (they are not part of what is owed)."""
    rows = (LedgerEntry.objects.filter(accounts_where(account_ids)).exclude(kind__in=DEPOSIT_KINDS)
            .values("account_id").annotate(last_id=Max("id"), last_on=Max("posted_on")).order_by()
            .values_list("account_id", "last_id", "last_on"))
    wanted = set(account_ids)
    return {account_id: (last_id, last_on) for account_id, last_id, last_on in rows if account_id in wanted}


def _standing_rows(account_ids: list[int]) -> dict[int, tuple]:
    wanted = set(account_ids)
    return {row[0]: row[1:] for row in AccountStanding.objects.filter(accounts_where(account_ids)).values_list(
        "account_id", "last_entry_id", "last_posted_on", "payment_order", "state") if row[0] in wanted}


def only_open(state: AccountBalance) -> AccountBalance:
    """The state with only the bills that have something unpaid."""
    return AccountBalance(bills={key: bill for key, bill in state.bills.items() if any(bill.unpaid.values())},
                          credit=state.credit)


def encode(state: AccountBalance) -> dict:
    """An open state as JSON: each bill's key (its bill date or a lone charge's day as ISO text), and its
    categories that are not zero, as strings of dollars and cents."""
    return {"credit": str(state.credit), "bills": [
        [[key[0].isoformat(), *key[1:]],
         {cat: str(amount) for cat, amount in bill.unpaid.items() if amount},
         {cat: str(amount) for cat, amount in bill.charged.items() if amount}]
        for key, bill in state.bills.items()]}


def decode(data: dict) -> AccountBalance:
    bills = {}
    for key, unpaid, charged in data["bills"]:
        day = _day(key[0])
        bill = BillBalance()
        bill.unpaid.update((cat, _amount(text)) for cat, text in unpaid.items())
        bill.charged.update((cat, _amount(text)) for cat, text in charged.items())
        bills[(day, *key[1:])] = bill
    return AccountBalance(bills=bills, credit=_amount(data["credit"]))


# A village's bills share a few days and many amounts: each converted once.
_day = lru_cache(maxsize=4096)(date.fromisoformat)
_amount = lru_cache(maxsize=65536)(Decimal)
