"""A generated legacy export: what a village's old system would hand over for the accounts installed here — its
open items on the cutover (``convert post``) and its bills of a period (``convert parallel``). The demo and the
tests convert it; a village sees in it the shape of the files its own system must give.

The open items are made up, repeatably (``seed``), in the proportions of a village's books: most accounts owe
nothing, some one or two open bills (water, now and then a fee, the old system's late penalty on a bill past
due), a few an unapplied credit or a deposit held. Bills are dated on the first of a month before the cutover,
due as the installed calendar dues them. Accounts that already have books here are left out (their books are
ours): the export converts cleanly on the village as installed.
"""

import csv
import io
import random
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

from accounts.models import Account
from billing.models import Bill, LedgerEntry
from billing.ordinance import ordinance_on
from core.csvimport import chunked

from .opening import OPENING_LAYOUT

CENT = Decimal("0.01")


def _first_of_month_before(day: date, months: int) -> date:
    month = day.year * 12 + day.month - 1 - months
    return date(month // 12, month % 12 + 1, 1)


def _with_books(account_ids: list[int]) -> set[int]:
    found: set[int] = set()
    for chunk in chunked(account_ids, 5000):
        ids = list(chunk)
        found.update(LedgerEntry.objects.filter(account_id__in=ids).values_list("account_id", flat=True).distinct()
                     .order_by())
        found.update(Bill.objects.filter(account_id__in=ids).values_list("account_id", flat=True).distinct()
                     .order_by())
    return found


def legacy_open_items_csv(*, cutover: date, seed: int = 45) -> str:
    """The old system's open items at the close of the day before ``cutover``, as an opening-balances file."""
    rng = random.Random(seed)
    calendar = ordinance_on(cutover).calendar
    accounts = list(Account.objects.order_by("account_no").values_list("id", "account_no"))
    skip = _with_books([account_id for account_id, _ in accounts])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(OPENING_LAYOUT.columns)
    eve = cutover - timedelta(days=1)
    for account_id, number in accounts:
        if account_id in skip:
            continue
        draw = rng.random()
        if draw < 0.55:
            continue
        bills = 1 if draw < 0.9 else 2
        for months in sorted(rng.sample(range(1, 9), bills), reverse=True):
            bill_date = _first_of_month_before(cutover, months)
            due_date = calendar.due_date(bill_date)
            if due_date > eve + timedelta(days=60):
                due_date = bill_date + timedelta(days=30)
            bill_no = f"L{number}-{bill_date:%Y%m}"
            water = (Decimal(rng.randint(4500, 40000)) / 100).quantize(CENT)
            row = [number, bill_no, bill_date.isoformat(), due_date.isoformat()]
            writer.writerow([*row, "water", f"{water:.2f}", "Water"])
            fee = Decimal("25.00") if rng.random() < 0.05 else None
            if fee:
                writer.writerow([*row, "fee", f"{fee:.2f}", "Meter test"])
            if due_date < eve and rng.random() < 0.7:
                penalty = ((water + (fee or 0)) * Decimal("0.05")).quantize(CENT, ROUND_HALF_UP)
                writer.writerow([*row, "penalty", f"{penalty:.2f}", "Late penalty"])
        if rng.random() < 0.04:
            writer.writerow([number, "", "", "", "credit", f"{Decimal(rng.randint(500, 6000)) / 100:.2f}",
                             "Overpayment"])
        if rng.random() < 0.01:
            writer.writerow([number, "", "", "", "deposit", "250.00", "Hydrant meter deposit"])
    return out.getvalue()
