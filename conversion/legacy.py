"""A generated legacy export: what a village's old system would hand over for the accounts installed here — its
open items on the cutover and two years of its bills and payments (``convert post``), and its bills of a period
(``convert parallel``). The demo, the tests and the bench convert it; a village sees in it the shape of the files
its own system must give.

The books are made up, repeatably (``seed``), in the proportions of a village's: every account billed on its
book's dates under the installed calendar for the two years before the cutover (period, gallons, water charge,
now and then a fee) and paying each bill by its due date, but about half of them, whose latest bill or two are
still open — with the old system's late penalty on a bill past due — a few with an unapplied credit or a
deposit held, one in fifty with a backflow device and its last test, and one in four with the owner's e-mail
address, most of those choosing paperless bills. Accounts that already have books here
are left out (their books are ours): the export converts cleanly on the village as installed.
"""

import csv
import io
import random
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

from accounts.models import Account
from billing.ordinance import ordinance_on
from billing.services.opening import accounts_with_books
from core.csvout import csv_writer
from core.dates import add_months
from meters.models import Installation

from .contacts import CONTACTS_LAYOUT
from .devices import DEVICES_LAYOUT
from .history import HISTORY_LAYOUT, PAYMENTS_LAYOUT
from .opening import OPENING_LAYOUT

CENT = Decimal("0.01")
YEARS = 2
SMALLEST_METER = "5/8"


@dataclass(frozen=True)
class LegacyExport:
    opening: str  # opening balances: account_no,bill_no,bill_date,due_date,kind,amount,description
    history: str  # past bills: account_no,bill_no,bill_date,due_date,period_start,period_end,gallons,kind,amount
    payments: str  # account_no,paid_on,amount,reference
    devices: str  # backflow devices with their last tests (``devices.DEVICES_LAYOUT``)
    contacts: str  # owners' e-mail addresses and paperless choices: account_no,email,paperless


def _writer(columns) -> tuple[io.StringIO, "csv._writer"]:
    out = io.StringIO()
    writer = csv_writer(out, lineterminator="\n")
    writer.writerow(columns)
    return out, writer


def _water(gallons: int) -> Decimal:
    """A water charge as a village's old system would have billed it: a minimum with 20,000 gal, then a block."""
    return (Decimal("45.00") + max(gallons - 20_000, 0) * Decimal("0.0031")).quantize(CENT, ROUND_HALF_UP)


def legacy_export(*, cutover: date, seed: int = 45) -> LegacyExport:
    """The old system's open items at the close of the day before ``cutover``, with its two years of bills and
    payments before it."""
    rng, reach = random.Random(seed), random.Random(seed + 1)
    calendar = ordinance_on(cutover).calendar
    accounts = list(Account.objects.order_by("account_no").values_list("id", "account_no", "book"))
    skip = accounts_with_books([account_id for account_id, _, _ in accounts])
    owners = dict(Account.objects.values_list("id", "owner_id"))
    addresses = dict(Account.objects.exclude(owner__email="").values_list("id", "owner__email"))
    sizes = dict(Installation.objects.filter(removed_on__isnull=True).order_by("installed_on")
                 .values_list("account_id", "meter__size"))
    eve = cutover - timedelta(days=1)
    months = [add_months(cutover.replace(day=1), -k) for k in range(YEARS * 12, 0, -1)]
    opening, open_rows = _writer(OPENING_LAYOUT.required)
    history, past_rows = _writer(HISTORY_LAYOUT.required)
    payments, paid_rows = _writer(PAYMENTS_LAYOUT.columns)
    devices, device_rows = _writer(DEVICES_LAYOUT.columns)
    contacts, contact_rows = _writer(CONTACTS_LAYOUT.columns)
    for account_id, number, book in accounts:
        if account_id in skip:
            continue
        frequency = calendar.frequency_for(sizes.get(account_id) or SMALLEST_METER)
        bill_dates = [day for day in months if day <= eve and calendar.is_due(book=book, frequency=frequency, on=day)]
        draw = rng.random()
        still_open = 0 if draw < 0.55 else 1 if draw < 0.9 else 2
        period_end = None
        for n, bill_date in enumerate(bill_dates):
            read_on = bill_date - timedelta(days=20)
            period_start = period_end or add_months(read_on, -(12 // max(len(bill_dates) // YEARS, 1)))
            period_end = read_on
            gallons = rng.randint(2_000, 4_000) * max((period_end - period_start).days, 1) // 30
            water = _water(gallons)
            fee = Decimal("25.00") if rng.random() < 0.02 else None
            due_date = calendar.due_date(bill_date)
            bill_no = f"L{number}-{bill_date:%Y%m}"
            head = [number, bill_no, bill_date.isoformat(), due_date.isoformat()]
            span = [period_start.isoformat(), period_end.isoformat(), gallons]
            past_rows.writerow([*head, *span, "water", f"{water:.2f}"])
            if fee:
                past_rows.writerow([*head, *span, "fee", f"{fee:.2f}"])
            if n >= len(bill_dates) - still_open:
                open_rows.writerow([*head, "water", f"{water:.2f}", "Water"])
                if fee:
                    open_rows.writerow([*head, "fee", f"{fee:.2f}", "Meter test"])
                if due_date < eve and rng.random() < 0.7:
                    penalty = ((water + (fee or 0)) * Decimal("0.05")).quantize(CENT, ROUND_HALF_UP)
                    open_rows.writerow([*head, "penalty", f"{penalty:.2f}", "Late penalty"])
            else:
                paid_on = min(due_date - timedelta(days=rng.randint(0, 20)), eve)
                paid_rows.writerow([number, max(paid_on, bill_date).isoformat(), f"{water + (fee or 0):.2f}",
                                    f"OLD-{bill_no}"])
        if rng.random() < 0.04:
            open_rows.writerow([number, "", "", "", "credit", f"{Decimal(rng.randint(500, 6000)) / 100:.2f}",
                                "Overpayment"])
        if rng.random() < 0.01:
            open_rows.writerow([number, "", "", "", "deposit", "250.00", "Hydrant meter deposit"])
        if rng.random() < 0.02:  # a backflow device, tested within the last year but now and then never
            installed = date(2015 + rng.randrange(10), 1 + rng.randrange(12), 1)
            tested = eve - timedelta(days=rng.randrange(20, 330)) if rng.random() < 0.9 else None
            test = [tested.isoformat(), "pass", "NYS-10001", "A. Certified Tester",
                    eve.replace(year=eve.year + 1).isoformat()] if tested else ["", "", "", "", ""]
            device_rows.writerow([number, f"BF-{number}", rng.choice(("RPZ", "DCA", "PVB")),
                                  rng.choice(("3/4", "1", "2")), "Watts", "", "", installed.isoformat(), *test])
        if reach.random() < 0.25:  # the owner's address (the one on file here, if any); most chose paperless
            email = addresses.get(account_id) or f"owner{owners[account_id]}@example.org"
            contact_rows.writerow([number, email, "Y" if reach.random() < 0.6 else "N"])
    return LegacyExport(opening=opening.getvalue(), history=history.getvalue(), payments=payments.getvalue(),
                        devices=devices.getvalue(), contacts=contacts.getvalue())
