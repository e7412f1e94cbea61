"""History from another system, checked: its past bills and the payments made to it, read all or nothing.

Design overview:

* **Past bills** (``HISTORY_LAYOUT``): one row per charge kind of a bill (``water``, ``sewer``, ``fee``,
  ``fine``), each with its bill's number, dates, period and gallons (the same on every row of a bill). They
  become bills that say what was used — the usage chart, the high-usage average and the next bill's starting
  reading read them — with no ledger row: they were paid, or what is unpaid of them is in the opening balances
  under the same bill number, whose bill then takes the period and gallons from here.
* **Payments** (``PAYMENTS_LAYOUT``): what the customer paid the old system, shown beside the bills, never on
  our books.
* **A bill total column**, where the export has one (``bill_total``, optional, last): the same on every row of a
  bill and what its rows add up to, to the cent (``opening.BillTotals``; the opening balances take it too).
* **Checked as every import is** (``core.csvimport``): every problem with its line and column, nothing saved —
  an unknown account, a bill number used by two accounts or dated two ways, a period that ends before it starts,
  a date after the day before the cutover, a bill number already one of ours. A clean file gives its control
  totals for the reconciliation.
"""

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from billing.models import Bill
from core.csvimport import (
    CsvLayout,
    ImportErrors,
    chunked,
    csv_rows,
    dollars,
    identifier,
    import_source_read,
    memoized,
    text,
)
from core.dates import iso_date
from core.money import ZERO

from .opening import BillTotals, bill_total, unknown_accounts

HISTORY_LAYOUT = CsvLayout(required=("account_no", "bill_no", "bill_date", "due_date", "period_start", "period_end",
                                     "gallons", "kind", "amount"), optional=("bill_total",))
PAYMENTS_LAYOUT = CsvLayout(required=("account_no", "paid_on", "amount", "reference"))
HISTORY_KINDS = ("water", "sewer", "fee", "fine")
GALLONS_MAX = 10**12


@dataclass
class PastBill:
    line: int
    account_no: str
    bill_date: date
    due_date: date
    period: tuple[date, date]
    gallons: int
    charges: list[tuple[str, Decimal]] = field(default_factory=list)


@dataclass(frozen=True)
class PastPayment:
    line: int
    account_no: str
    paid_on: date
    amount: Decimal
    reference: str


@dataclass
class History:
    bills: dict[str, PastBill] = field(default_factory=dict)  # by bill number, in the file's order
    payments: list[PastPayment] = field(default_factory=list)
    devices: list = field(default_factory=list)  # backflow devices with their last tests (``devices.DeviceRow``)
    contacts: list = field(default_factory=list)  # owners' addresses and paperless choices (``contacts.ContactRow``)
    notes: list = field(default_factory=list)  # the accounts' notes (``notes.NoteRow``)
    plans: list = field(default_factory=list)  # the payment plans in force (``plans.PlanRows``)
    cases: list = field(default_factory=list)  # the termination cases in progress (``cases.CaseRow``)
    relevied: list = field(default_factory=list)  # the amounts already relevied (``relevied.RelevyRow``)

    @property
    def gallons(self) -> int:
        return sum(b.gallons for b in self.bills.values())

    @property
    def billed(self) -> Decimal:
        return sum((amount for b in self.bills.values() for _, amount in b.charges), ZERO)

    @property
    def paid(self) -> Decimal:
        return sum((p.amount for p in self.payments), ZERO)

    def control_totals(self) -> dict:
        return {"past_bills": len(self.bills), "gallons": self.gallons, "billed": f"{self.billed:.2f}",
                "payments": len(self.payments), "paid": f"{self.paid:.2f}", "devices": len(self.devices),
                "device_tests": sum(1 for d in self.devices if d.tested_on), "contacts": len(self.contacts),
                "emails": sum(1 for c in self.contacts if c.email),
                "paperless": sum(1 for c in self.contacts if c.paperless), "notes": len(self.notes),
                "plans": len(self.plans), "plans_total": f"{sum((p.total for p in self.plans), ZERO):.2f}",
                "cases": len(self.cases), "relevied": len(self.relevied),
                "relevied_total": f"{sum((r.amount for r in self.relevied), ZERO):.2f}"}


def _gallons(value: str) -> int:
    try:
        number = int(value.replace(",", ""))
    except ValueError:
        raise ValueError(f"'{value}' is not a whole number of gallons") from None
    if not 0 <= number <= GALLONS_MAX:
        raise ValueError(f"{number:,} is not a number of gallons a bill can have")
    return number


def _amount(value: str) -> Decimal:
    if value.strip().startswith(("-", "(")):
        raise ValueError(f"'{value}': amounts are positive")
    return dollars(value) if value.strip() not in ("0", "0.00") else Decimal("0.00")


def history_read(bills_source=None, payments_source=None, *, as_of: date) -> History:
    """The past bills and payments checked, all or nothing (``ImportRejected``, every problem with its file,
    line and column); nothing is saved either way."""
    history = History()
    if bills_source is not None:
        file = import_source_read(bills_source)
        errors = ImportErrors(columns=HISTORY_LAYOUT.columns)
        account_no, bill_no = memoized(identifier(max_length=20)), memoized(identifier(max_length=40))
        gallons_of, amount_of = memoized(_gallons), memoized(_amount)
        first_line: dict[str, int] = {}
        totals = BillTotals()
        for row in csv_rows(text=file.text, layout=HISTORY_LAYOUT, errors=errors):
            number = errors.parse(row, "account_no", account_no)
            bill = errors.parse(row, "bill_no", bill_no)
            days = {name: errors.parse(row, name, iso_date) for name in ("bill_date", "due_date", "period_start",
                                                                         "period_end")}
            for name, day in days.items():
                if day is not None and day > as_of and name != "due_date":
                    errors.add(line=row.line, field=name, message=f"{day} is after {as_of}: history is before the "
                                                                  "cutover")
            if days["bill_date"] and days["due_date"] and days["due_date"] < days["bill_date"]:
                errors.add(line=row.line, field="due_date", message=f"{days['due_date']} is before the bill date "
                                                                    f"{days['bill_date']}")
            if days["period_start"] and days["period_end"] and days["period_end"] <= days["period_start"]:
                errors.add(line=row.line, field="period_end", message=f"{days['period_end']} is not after the "
                                                                      f"period's start {days['period_start']}")
            gallons = errors.parse(row, "gallons", gallons_of)
            kind = row["kind"]
            if kind not in HISTORY_KINDS:
                errors.add(line=row.line, field="kind", message=f"'{kind}' is not a kind of a past bill's charge; "
                                                                f"use {', '.join(HISTORY_KINDS)}")
            amount = errors.parse(row, "amount", amount_of)
            if bill is not None:
                totals.row(bill=bill, line=row.line, total=errors.parse(row, "bill_total", bill_total),
                           amount=amount, errors=errors)
            if number is None or bill is None or None in days.values() or gallons is None or amount is None \
                    or kind not in HISTORY_KINDS:
                continue
            first_line.setdefault(number, row.line)
            period = (days["period_start"], days["period_end"])
            seen = history.bills.get(bill)
            if seen is None:
                history.bills[bill] = PastBill(line=row.line, account_no=number, bill_date=days["bill_date"],
                                               due_date=days["due_date"], period=period, gallons=gallons,
                                               charges=[(kind, amount)])
            elif seen.account_no != number:
                errors.add(line=row.line, field="bill_no", message=f"bill {bill} is account {seen.account_no}'s "
                                                                   f"(line {seen.line}); a bill belongs to one account")
            elif (seen.bill_date, seen.due_date, seen.period, seen.gallons) != (days["bill_date"], days["due_date"],
                                                                               period, gallons):
                errors.add(line=row.line, field="bill_date", message=(
                    f"bill {bill} has other dates, period or gallons on line {seen.line}; every row of a bill has "
                    "the same"))
            else:
                seen.charges.append((kind, amount))
        totals.check(errors)
        unknown_accounts(errors, first_line)
        for chunk in chunked(sorted(history.bills), 20_000):
            for number in Bill.objects.filter(number__any=list(chunk)).values_list("number", flat=True):
                errors.add(line=history.bills[number].line, field="bill_no", message=f"bill {number} is already one "
                                                                                     "of ours")
        errors.raise_if_any(file="history")
    if payments_source is not None:
        file = import_source_read(payments_source)
        errors = ImportErrors(columns=PAYMENTS_LAYOUT.columns)
        account_no, reference = memoized(identifier(max_length=20)), text(max_length=80, required=False)
        amount_of = memoized(_amount)
        first_line = {}
        for row in csv_rows(text=file.text, layout=PAYMENTS_LAYOUT, errors=errors):
            number = errors.parse(row, "account_no", account_no)
            paid_on = errors.parse(row, "paid_on", iso_date)
            if paid_on is not None and paid_on > as_of:
                errors.add(line=row.line, field="paid_on", message=f"{paid_on} is after {as_of}: history is before "
                                                                   "the cutover")
            amount = errors.parse(row, "amount", amount_of)
            words = errors.parse(row, "reference", reference) or ""
            if number is not None and paid_on is not None and amount is not None:
                first_line.setdefault(number, row.line)
                history.payments.append(PastPayment(row.line, number, paid_on, amount, words))
        unknown_accounts(errors, first_line)
        errors.raise_if_any(file="payments")
    return history


