"""Opening balances from another system, checked: what each customer owes by open bill, read all or nothing.

Design overview:

* **The file** is the old system's open items, one row per charge or credit:
  ``account_no,bill_no,bill_date,due_date,kind,amount,description``, ``kind`` ∈ water, sewer, fee, fine,
  penalty, interest (the charges of an open bill, each with its bill's number and dates), credit (an unapplied
  credit) or deposit (a refundable deposit held); amounts are positive, the kind gives the direction.
* **A mapping** (TOML) turns another system's export into that file without hand editing: ``[columns]`` names
  the export's header for each of our columns, ``[kinds]`` its charge codes, ``[dates] format`` its date
  format (strftime, e.g. ``%m/%d/%Y``); its ``[accounts]`` tables read the account master the same way
  (``account_file``). ``fixtures/conversion/example_mapping.toml`` is a worked one.
* **Checked as every import is** (``core.csvimport``): every problem with its line and column, nothing saved —
  an unknown account, a bill number used by two accounts or with two different dates, a due date before its
  bill date, a date after the day of the check, a bill number already one of ours. A clean file gives its
  **control totals**: the accounts, the open bills, the amount owed by kind, the credits and the deposits held,
  which the reconciliation after posting compares with the books to the cent.
"""

import csv
import hashlib
import io
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

from accounts.models import Account
from billing.models import Bill
from core.csvimport import (
    TRIMMED,
    CsvLayout,
    ImportErrors,
    ImportFile,
    chunked,
    csv_rows,
    dollars,
    identifier,
    import_source_read,
    memoized,
    text,
)
from core.csvout import csv_writer
from core.dates import iso_date
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars
from ordinance.keys import Key, MapOf, Shape, Text, file_problems

from .account_file import ACCOUNTS_MAPPING, DATES, AccountsMapping, accounts_mapping_parse, column_of

OPENING_LAYOUT = CsvLayout(required=("account_no", "bill_no", "bill_date", "due_date", "kind", "amount",
                                     "description"), optional=("bill_total", "charged_on"))
BILL_KINDS = ("water", "sewer", "fee", "fine", "penalty", "interest")  # the charges of an open bill
LATE_KINDS = ("penalty", "interest")  # the late charges the old system charged: never recomputed
ACCOUNT_KINDS = ("credit", "deposit")  # of the account, on no bill
KINDS = BILL_KINDS + ACCOUNT_KINDS
# The mapping file, every table and key: checked by ``mapping_parse``, written out as docs/mapping.md.
MAPPING = Shape({
    "columns": Key("our column of the opening balances = the export's header (a column left out is looked for "
                   f"under our own name); ours: {', '.join(OPENING_LAYOUT.columns)}",
                   MapOf(Text(blank=False), "our column", column_of(OPENING_LAYOUT, "the opening balances"))),
    "kinds": Key("the export's charge code = our kind", MapOf(Text(KINDS), "the export's code")),
    "dates": Key("how the export writes a date", DATES),
    "accounts": Key("the account master (`convert accounts`)", ACCOUNTS_MAPPING)})


@dataclass(frozen=True)
class Mapping:
    """How another system's export reads as the opening-balances file."""

    columns: dict[str, str] = field(default_factory=dict)  # our column → the export's header
    kinds: dict[str, str] = field(default_factory=dict)  # the export's code → our kind
    date_format: str = ""  # strftime; blank: YYYY-MM-DD
    accounts: AccountsMapping = field(default_factory=AccountsMapping)  # the account master (``account_file``)


def mapping_load(path: str | Path) -> Mapping:
    """A mapping file, refused naming what is wrong in it."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ApplicationError(f"cannot read {path}: {exc.strerror}", field="mapping") from None
    return mapping_parse(raw, name=Path(path).name)


def mapping_parse(raw: bytes, *, name: str) -> Mapping:
    """A mapping's text (as uploaded, or read from a file), refused naming what is wrong in it."""
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ApplicationError(f"{name} is not valid TOML: {exc}", field="mapping") from None
    problems = file_problems(MAPPING, data, noun="a mapping")
    if problems:
        raise ApplicationError("; ".join(problems), field="mapping")
    columns, kinds = data.get("columns", {}), data.get("kinds", {})
    date_format = data.get("dates", {}).get("format", "")
    accounts = accounts_mapping_parse(data.get("accounts", {}), date_format=date_format)
    return Mapping(columns={str(k): str(v) for k, v in columns.items()},
                   kinds={str(k): str(v) for k, v in kinds.items()}, date_format=date_format, accounts=accounts)


def _mapped(file: ImportFile, mapping: Mapping) -> str:
    """The export rewritten as the opening-balances file: its columns renamed and put in our order, its codes
    and dates in ours. A value the mapping cannot read is left as it was, for the check to name."""
    rows = list(csv.reader(io.StringIO(file.text)))
    if not rows:
        return file.text
    header = [name.strip(TRIMMED) for name in rows[0]]
    source = {ours: mapping.columns.get(ours, ours) for ours in OPENING_LAYOUT.columns}
    # An optional column (the bill total) the mapping does not name and the export does not have is left off.
    source = {ours: theirs for ours, theirs in source.items()
              if ours in OPENING_LAYOUT.required or ours in mapping.columns or theirs in header}
    missing = [theirs for theirs in source.values() if theirs not in header]
    if missing:
        raise ApplicationError(f"the export has no column {', '.join(repr(m) for m in missing)} that the mapping "
                               f"names (its header: {', '.join(header)})", field="mapping")
    where = {ours: header.index(theirs) for ours, theirs in source.items()}
    out = io.StringIO()
    writer = csv_writer(out, lineterminator="\n")
    written = [ours for ours in OPENING_LAYOUT.columns if ours in where]  # as before, unless it has a bill total
    writer.writerow(written)
    for row in rows[1:]:
        if not any(value.strip() for value in row):
            writer.writerow([])
            continue
        values = {ours: row[index].strip(TRIMMED) if index < len(row) else "" for ours, index in where.items()}
        values["kind"] = mapping.kinds.get(values["kind"], values["kind"])
        if mapping.date_format:
            for column in ("bill_date", "due_date", "charged_on"):
                if values.get(column):
                    try:
                        values[column] = datetime.strptime(values[column], mapping.date_format).date().isoformat()
                    except ValueError:
                        pass  # left as written: the check names it
        writer.writerow([values[ours] for ours in written])
    return out.getvalue()


@dataclass
class BillTotals:
    """An export's bill total column, where it has one: the same on every row of a bill, and what the bill's rows
    add up to, to the cent (a bill cut short or a line lost on the way is refused, not posted)."""

    given: dict[str, tuple[Decimal, int]] = field(default_factory=dict)  # bill → (its total, the line it is on)
    added: dict[str, Decimal] = field(default_factory=lambda: defaultdict(Decimal))

    def row(self, *, bill: str, line: int, total: Decimal | None, amount: Decimal | None,
            errors: ImportErrors) -> None:
        if total is not None:
            seen = self.given.setdefault(bill, (total, line))
            if seen[0] != total:
                errors.add(line=line, field="bill_total", message=(
                    f"bill {bill} totals {fmt_dollars(seen[0])} on line {seen[1]}; every row of a bill gives its "
                    "same total"))
        if amount is not None:
            self.added[bill] += amount

    def check(self, errors: ImportErrors) -> None:
        for bill, (total, line) in self.given.items():
            added = self.added.get(bill, ZERO)
            if added != total:
                errors.add(line=line, field="bill_total", message=(
                    f"bill {bill}'s rows add up to {fmt_dollars(added)} but its total says {fmt_dollars(total)} (a "
                    f"difference of {fmt_dollars(total - added)}); the export's lines and its total must agree"))


def bill_total(value: str) -> Decimal | None:
    """A bill total column's value: blank (none given), or dollars and cents."""
    return None if not value else dollars(value) if value not in ("0", "0.00") else Decimal("0.00")


@dataclass(frozen=True)
class OpenItem:
    line: int
    account_no: str
    bill_no: str
    bill_date: date | None
    due_date: date | None
    kind: str
    amount: Decimal
    description: str
    charged_on: date | None = None  # a late charge's own day, where the export gives it


@dataclass
class OpeningBalances:
    """A checked file: its rows and its control totals."""

    items: list[OpenItem]
    accounts: int
    bills: int
    by_kind: dict[str, Decimal]
    name: str = ""  # the file's name as given
    digest: str = ""  # SHA-256 of the file as read (after its mapping): the same file posts once

    @property
    def charges(self) -> Decimal:
        return sum((self.by_kind.get(kind, ZERO) for kind in BILL_KINDS), ZERO)

    @property
    def owed(self) -> Decimal:
        """What the accounts owe together: the open bills' charges less the credits (deposits are held, not
        owed)."""
        return self.charges - self.by_kind.get("credit", ZERO)

    def subset(self, account_nos: set[str]) -> "OpeningBalances":
        """The file's rows of these accounts alone, with their own totals (a town's district)."""
        items = [item for item in self.items if item.account_no in account_nos]
        by_kind: dict[str, Decimal] = defaultdict(Decimal)
        for item in items:
            by_kind[item.kind] += item.amount
        return OpeningBalances(items=items, accounts=len({item.account_no for item in items}),
                               bills=len({item.bill_no for item in items if item.bill_no}), by_kind=dict(by_kind),
                               name=self.name)

    def control_totals(self) -> dict:
        return {"rows": len(self.items), "accounts": self.accounts, "open_bills": self.bills,
                "by_kind": {kind: f"{self.by_kind.get(kind, ZERO):.2f}" for kind in KINDS},
                "charges": f"{self.charges:.2f}", "owed": f"{self.owed:.2f}",
                "deposits_held": f"{self.by_kind.get('deposit', ZERO):.2f}"}


def opening_digest(source, *, mapping: Mapping | None = None) -> str:
    """SHA-256 of the file as read (after its mapping): the same file, however named, has the same digest."""
    file = import_source_read(source)
    return _digest(_mapped(file, mapping) if mapping else file.text)


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


def opening_balances_read(source, *, as_of: date, mapping: Mapping | None = None) -> OpeningBalances:
    """The opening balances checked, all or nothing (``ImportRejected`` lists every problem with its line and
    column); nothing is saved either way."""
    file = import_source_read(source)
    body = _mapped(file, mapping) if mapping else file.text
    errors = ImportErrors(columns=OPENING_LAYOUT.columns)
    account_no, bill_no, words = memoized(identifier(max_length=20)), \
        memoized(identifier(max_length=40, required=False)), memoized(text(max_length=200, required=False))
    items: list[OpenItem] = []
    bills: dict[str, tuple[str, date | None, date | None, int]] = {}
    totals = BillTotals()
    for row in csv_rows(text=body, layout=OPENING_LAYOUT, errors=errors):
        number = errors.parse(row, "account_no", account_no)
        bill = errors.parse(row, "bill_no", bill_no) or ""
        kind = row["kind"]
        if kind not in KINDS:
            errors.add(line=row.line, field="kind", message=f"'{kind}' is not a kind; use {', '.join(KINDS)}"
                                                            + (" (or map it in the mapping's [kinds])" if kind else ""))
        on_bill = kind in BILL_KINDS
        bill_date = due_date = None
        if on_bill or row["bill_date"] or row["due_date"]:
            bill_date = errors.parse(row, "bill_date", iso_date)
            due_date = errors.parse(row, "due_date", iso_date)
        for column, day in (("bill_date", bill_date), ("due_date", due_date)):
            if day is not None and day > as_of and not (column == "due_date" and bill_date and bill_date <= as_of):
                errors.add(line=row.line, field=column, message=f"{day} is after {as_of}: an open item is dated "
                                                                "before the cutover")
        if bill_date and due_date and due_date < bill_date:
            errors.add(line=row.line, field="due_date", message=f"{due_date} is before the bill date {bill_date}")
        if on_bill and not bill:
            errors.add(line=row.line, field="bill_no", message=f"is required: a {kind} charge belongs to an open bill")
        amount = errors.parse(row, "amount", _positive)
        description = errors.parse(row, "description", words) or ""
        total = errors.parse(row, "bill_total", bill_total)
        if total is not None and not on_bill:
            errors.add(line=row.line, field="bill_total", message=f"a {kind} is on no bill: leave its bill total "
                                                                  "blank")
        elif on_bill and bill:
            totals.row(bill=bill, line=row.line, total=total, amount=amount if kind in KINDS else None, errors=errors)
        charged_on = errors.parse(row, "charged_on", iso_date) if row["charged_on"] else None
        if charged_on is not None:
            if kind not in LATE_KINDS:
                errors.add(line=row.line, field="charged_on", message=(
                    f"only a late charge ({', '.join(LATE_KINDS)}) has a day of its own; leave it blank for a {kind}"))
            elif bill_date is not None and charged_on < bill_date:
                errors.add(line=row.line, field="charged_on", message=(
                    f"{charged_on} is before the bill's date {bill_date}: a late charge follows its bill"))
            elif charged_on > as_of:
                errors.add(line=row.line, field="charged_on", message=(
                    f"{charged_on} is after {as_of}: the old system charged it before the cutover"))
        if on_bill and bill and number is not None:
            seen = bills.get(bill)
            if seen is None:
                bills[bill] = (number, bill_date, due_date, row.line)
            elif seen[0] != number:
                errors.add(line=row.line, field="bill_no", message=(
                    f"bill {bill} is account {seen[0]}'s (line {seen[3]}); a bill belongs to one account"))
            elif (seen[1], seen[2]) != (bill_date, due_date):
                errors.add(line=row.line, field="bill_date", message=(
                    f"bill {bill} is dated {seen[1]}, due {seen[2]} on line {seen[3]}; every row of a bill has its "
                    "dates"))
        if number is not None and amount is not None and kind in KINDS:
            items.append(OpenItem(line=row.line, account_no=number, bill_no=bill, bill_date=bill_date,
                                  due_date=due_date, kind=kind, amount=amount, description=description,
                                  charged_on=charged_on))
    totals.check(errors)
    first_line = {}
    for item in items:
        first_line.setdefault(item.account_no, item.line)
    unknown_accounts(errors, first_line)
    for chunk in chunked(sorted(bills), 20_000):
        for number in Bill.objects.filter(number__any=list(chunk)).values_list("number", flat=True):
            errors.add(line=bills[number][3], field="bill_no", message=f"bill {number} is already one of ours")
    errors.raise_if_any()
    by_kind: dict[str, Decimal] = defaultdict(Decimal)
    for item in items:
        by_kind[item.kind] += item.amount
    return OpeningBalances(items=items, accounts=len(first_line), bills=len(bills), by_kind=dict(by_kind),
                           name=file.name, digest=_digest(body))


def unknown_accounts(errors: ImportErrors, first_line: dict[str, int]) -> None:
    """Name each account number the books do not know, on the first line it is on."""
    for chunk in chunked(sorted(first_line), 20_000):
        known = set(Account.objects.filter(account_no__any=list(chunk)).values_list("account_no", flat=True))
        for number in chunk:
            if number not in known:
                errors.add(line=first_line[number], field="account_no", message=f"unknown account '{number}'")


def _positive(value: str) -> Decimal:
    if value.strip().startswith("-") or value.strip().startswith("(") or value.strip().startswith("$-"):
        raise ValueError(f"'{value}': amounts are positive; the kind says a credit or a deposit")
    return dollars(value)
