"""Each report as a table a person reads (the admin page, the PDF) and as data (CSV, JSON).

A report's data (``reports.selectors``) is first turned into a ``ReportView``: its title, the dates it is
for, notes (the section it rests on, warnings), a main table and the summary tables below it. Every
format is drawn from that one view, so the page, the PDF, the CSV and the JSON always agree:

* **CSV**: the main table — a header row, one row per line, and a totals row (first cell ``Total``).
* **JSON**: ``{"report", "title", "as_of", "parameters", "notes", "rows", "totals"}``; ``rows`` is the
  main table, ``totals`` its totals and the summary tables (by book, by kind and citation, by day…).
  Money is a string with two decimals (``"1234.50"``), dates ISO 8601.
* **PDF**: landscape US Letter with the utility's letterhead (``core.documents`` renders it). The tables
  flow from page to page and WeasyPrint repeats each table's header row on every page, so a report of
  thousands of accounts simply takes more pages.
"""

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from django.utils import timezone

from billing.models import BillLine
from core.clock import today
from core.csvout import csv_writer
from core.dates import fmt_day
from core.documents import PdfInfo, pdf_one_file
from core.money import ZERO, fmt_amount, fmt_dollars
from ordinance.selectors import installed_utility

from . import selectors as s
from .catalog import REPORTS

TEXT, MONEY, COUNT, DAY = "text", "money", "count", "date"


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str = TEXT
    labels: dict | None = None  # a code's words for people (a line kind, a payment source); data keeps the code
    blank_zero: bool = False  # people read a zero as an empty cell (an aging bucket); data keeps 0.00
    width: int = 0  # its share of a printed table's width, in characters; 0: by its kind

    @property
    def share(self) -> int:
        return self.width or {MONEY: 10, COUNT: 6, DAY: 11}.get(self.kind, 14)


@dataclass(frozen=True)
class Table:
    key: str  # its name in the JSON ("rows" for the main table, else a key of "totals")
    title: str
    columns: tuple[Column, ...]
    rows: list[dict]
    total: dict = field(default_factory=dict)  # the totals row: values by column key
    total_label: str = "Total"  # the totals row's first cell on the page and the PDF (the CSV's says "Total")
    counted: str = ""  # what a row is ("account"), for the totals row's count when the rows are filtered


@dataclass(frozen=True)
class ReportView:
    name: str
    title: str
    as_of: date
    parameters: list[tuple[str, str, date]]  # (key, words, day)
    notes: list[str]
    main: Table
    more: list[Table]
    totals: dict  # beyond the main table's totals row: counts for the JSON
    citation: str = ""  # the section the report rests on, where it rests on one

    @property
    def tables(self) -> list[Table]:
        return [self.main, *self.more]


# --- formatting ---------------------------------------------------------------------------------------------

def _data(column: Column, value):
    """A value as data: money ``1234.50``, a date ISO, a count a number."""
    if value is None or value == "":
        return "" if column.kind == TEXT else None
    if column.kind == MONEY:
        return fmt_amount(value)
    if column.kind == DAY:
        return value.isoformat()
    return value


def _people(column: Column, value) -> str:
    if value is None or value == "" or (column.blank_zero and not value):
        return ""
    if column.kind == MONEY:
        return fmt_dollars(value)
    if column.kind == DAY:
        return fmt_day(value)
    if column.kind == COUNT:
        return f"{value:,}"
    if column.labels:
        return column.labels.get(value, value)
    return str(value)


@dataclass(frozen=True)
class Cell:
    text: str
    numeric: bool
    span: int = 1


@dataclass(frozen=True)
class PrintedTable:
    """A table formatted for people: what the page and the PDF templates place."""

    title: str
    widths: list[str]  # each column's percentage of the table's width (the PDF's table layout is fixed)
    headers: list[Cell]
    rows: list[list[Cell]]
    total: list[Cell]


def printed(table: Table) -> PrintedTable:
    columns = [(c, c.kind in (MONEY, COUNT)) for c in table.columns]
    total = [Cell(_people(c, table.total.get(c.key)), numeric) for c, numeric in columns]
    # The totals row's label spans the columns before the first total, so "Total: 1,802 accounts" fits.
    leading = next((i for i, c in enumerate(table.columns) if c.key in table.total), len(table.columns))
    if table.total and leading:
        total = [Cell(table.total_label, False, span=leading), *total[leading:]]
    shares = sum(c.share for c in table.columns)
    return PrintedTable(
        title=table.title, widths=[f"{100 * c.share / shares:.2f}" for c in table.columns],
        headers=[Cell(c.label, numeric) for c, numeric in columns],
        rows=[[Cell(_people(c, row.get(c.key)), numeric) for c, numeric in columns] for row in table.rows],
        total=total if table.total else [])


def as_csv(view: ReportView) -> str:
    """The main table: a header row, one row per line, a totals row."""
    out = io.StringIO()
    writer = csv_writer(out)
    columns = view.main.columns
    writer.writerow([c.label for c in columns])
    for row in view.main.rows:
        writer.writerow([_csv(c, row.get(c.key)) for c in columns])
    if view.main.total:
        cells = [_csv(c, view.main.total.get(c.key)) for c in columns]
        cells[0] = cells[0] or "Total"
        writer.writerow(cells)
    return out.getvalue()


def _csv(column: Column, value) -> str:
    data = _data(column, value)
    return "" if data is None else str(data)


def as_json(view: ReportView) -> dict:
    main = view.main
    totals = {c.key: _data(c, main.total[c.key]) for c in main.columns if c.key in main.total}
    totals.update(view.totals)
    for table in view.more:
        totals[table.key] = [{c.key: _data(c, row.get(c.key)) for c in table.columns} for row in table.rows]
    return {"report": view.name, "title": view.title, "as_of": view.as_of.isoformat(), "citation": view.citation,
            "parameters": {key: day.isoformat() for key, _, day in view.parameters},
            "notes": view.notes,
            "rows": [{c.key: _data(c, row.get(c.key)) for c in main.columns} for row in main.rows],
            "totals": totals}


@dataclass(frozen=True)
class PrintedReport:
    """The PDF's one document: the letterhead, the title and dates, the notes and the tables."""

    utility_name: str
    utility_header: str
    title: str
    subtitle: str
    notes: list[str]
    tables: list[PrintedTable]
    printed_on: str


def subtitle(view: ReportView) -> str:
    """The report's dates in words: "As of May 10, 2026", "From Feb 1, 2026 to Feb 28, 2026"."""
    return " ".join(f"{words} {fmt_day(day)}" for _, words, day in view.parameters)


def as_pdf(view: ReportView) -> bytes:
    utility = installed_utility()
    name = utility.name if utility else "waterbilling"
    header = "  ·  ".join(part for part in [*(utility.office_address.splitlines() if utility else []),
                                            utility.phone if utility else ""] if part)
    report = PrintedReport(utility_name=name, utility_header=header, title=view.title, subtitle=subtitle(view),
                           notes=view.notes, tables=[printed(t) for t in view.tables], printed_on=fmt_day(today()))
    return pdf_one_file(template="reports/report.html", stylesheet="reports/report.css", context_name="reports",
                        documents=[report], batch=1,
                        info=PdfInfo(title=f"{view.title}, {subtitle(view)}", author=name, created=timezone.now()))


# --- each report's view ---------------------------------------------------------------------------------------

def count_words(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def report_view(report) -> ReportView:
    return VIEWS[type(report)](report)


def _register(r: s.Register) -> ReportView:
    kinds = dict(BillLine.Kind.choices)
    return ReportView(
        name="register", title=REPORTS["register"].title, as_of=r.bill_date,
        parameters=[("bill_date", "Bills dated", r.bill_date)],
        notes=["Live bills of the bill date (a voided bill is left out; the bill that replaced it is in). Every "
               "bill's total is the sum of its lines."],
        main=Table("rows", "Bills by book", (
            Column("book", "Book", COUNT, width=5), Column("account_no", "Account", width=10),
            Column("owner", "Owner", width=30), Column("number", "Bill number", width=16),
            Column("gallons", "Gallons", COUNT, width=10), Column("total", "Total", MONEY)),
            [vars(b) for b in r.bills], {"gallons": r.gallons, "total": r.total},
            total_label=f"Total: {count_words(len(r.bills), 'bill')}", counted="bill"),
        more=[
            Table("by_book", "Totals by book", (
                Column("book", "Book", COUNT), Column("bills", "Bills", COUNT), Column("gallons", "Gallons", COUNT),
                Column("total", "Total", MONEY)),
                [vars(b) for b in r.books], {"bills": len(r.bills), "gallons": r.gallons, "total": r.total}),
            Table("by_line", "Lines by kind and citation", (
                Column("kind", "Kind", labels=kinds), Column("citation", "Citation"), Column("count", "Lines", COUNT),
                Column("amount", "Amount", MONEY)),
                [vars(line) for line in r.lines],
                {"count": sum(line.count for line in r.lines), "amount": sum((x.amount for x in r.lines), ZERO)}),
        ],
        totals={"bills": len(r.bills)})


def _aging(r: s.Aging) -> ReportView:
    buckets = [Column(key, label, MONEY, blank_zero=True) for key, label in s.AGING_BUCKETS]
    rows = [{"account_no": row.account_no, "owner": row.owner, "service_address": row.service_address,
             "book": row.book, "status": row.status,
             **{key: amount for (key, _), amount in zip(s.AGING_BUCKETS, row.buckets, strict=True)},
             "balance": row.balance} for row in r.rows]
    totals = {key: amount for (key, _), amount in zip(s.AGING_BUCKETS, r.totals, strict=True)}
    return ReportView(
        name="aging", title=REPORTS["aging"].title, as_of=r.as_of, parameters=[("date", "As of", r.as_of)],
        notes=["Every account whose balance is not zero. An amount ages from the due date of the bill it is on "
               "(its penalties and interest with it); a charge on no bill from the day it was posted. A credit is "
               "shown as a negative current amount, so each row adds up to the account's balance."],
        main=Table("rows", "Balances by days past due", (
            Column("account_no", "Account", width=9), Column("owner", "Owner", width=18),
            Column("service_address", "Service address", width=18), Column("book", "Book", COUNT, width=5), *buckets,
            Column("balance", "Balance", MONEY)),
            rows, {**totals, "balance": r.total}, total_label=f"Total: {count_words(len(rows), 'account')}",
            counted="account"),
        more=[], totals={"accounts": len(rows)})


def _floor_note(floor, count: int, what: str) -> str:
    return (f"Office policy, not the ordinance: accounts owing less than {fmt_dollars(floor)} are not {what} "
            f"({count_words(count, 'account')} left off); the Utility page sets the floor.")


def _delinquency_notes(r: s.DelinquencyList) -> list[str]:
    if r.why_empty:
        return [f"No account is listed: {r.why_empty}"]
    return [f"Accounts delinquent under {r.citation}: what of each delinquent bill a shut-off may be for (the "
            "amounts the section's ground covers, each from the day it became eligible), as the ledger allocates "
            "payments. An account with an active termination case names it.",
            _floor_note(r.floor, r.below_floor, "proposed for a shut-off case")]


def _delinquency(r: s.DelinquencyList) -> ReportView:
    return ReportView(
        name="delinquency", title=REPORTS["delinquency"].title, as_of=r.as_of,
        parameters=[("date", "As of", r.as_of)],
        notes=_delinquency_notes(r),
        main=Table("rows", "Termination candidates", (
            Column("account_no", "Account", width=9), Column("owner", "Owner", width=20),
            Column("service_address", "Service address", width=20), Column("bills", "Delinquent bills", width=22),
            Column("delinquent_from", "Delinquent since", DAY), Column("amount", "Amount", MONEY),
            Column("case_number", "Case", width=12)),
            [vars(row) for row in r.rows], {"amount": r.total},
            total_label=f"Total: {count_words(len(r.rows), 'account')}", counted="account"),
        more=[], totals={"accounts": len(r.rows), "with_case": r.with_case}, citation=r.citation)


def _relevy(r: s.Relevy) -> ReportView:
    lien = r.lien
    notes = [f"{lien.words}" + (f" For {lien.list_for}." if lien.list_for else ""),
             f"Unpaid charges past due on {fmt_day(r.levy_on)}: water charges, fees and fines, with the penalties "
             f"and interest on them through the levy date shown apart."]
    notes.append(_floor_note(r.floor, r.below_floor, "put on the relevy list")
                 + (f" Together they owe {fmt_dollars(r.below_floor_amount)}." if r.below_floor else ""))
    if r.without_sbl:
        notes.append(f"{r.without_sbl} account{'s have' if r.without_sbl != 1 else ' has'} no SBL: add it on the "
                     "premises before the list is sent.")
    if r.late_charges_not_posted:
        notes.append(f"Penalties and interest owed through the levy date differ from those posted by "
                     f"{fmt_dollars(r.late_charges_not_posted)}: run assess_penalties --date {r.levy_on} first.")
    whose = f", {r.district.name}" if r.district else ""
    return ReportView(
        name="relevy", title=REPORTS["relevy"].title + f"{whose} ({lien.citation})", as_of=r.levy_on,
        parameters=[("levy_date", "Levy date", r.levy_on)], notes=notes,
        main=Table("rows", "Accounts by SBL", (
            Column("sbl", "SBL", width=9), Column("owner", "Owner", width=18),
            Column("owner_address", "Owner's mailing address", width=28),
            Column("service_address", "Service address", width=18), Column("account_no", "Account", width=9),
            Column("charges", "Unpaid charges", MONEY), Column("late_charges", "Penalties and interest", MONEY),
            Column("total", "Total", MONEY)),
            [{**vars(row), "total": row.total} for row in r.rows],
            {"charges": r.charges, "late_charges": r.late_charges, "total": r.total},
            total_label=f"Total: {count_words(len(r.rows), 'account')}", counted="account"),
        more=[], totals={"accounts": len(r.rows)}, citation=lien.citation)


def _receipts(r: s.Receipts) -> ReportView:
    sources = s.PAYMENT_SOURCES
    one_day = r.start == r.end
    return ReportView(
        name="receipts", title=REPORTS["receipts"].title, as_of=r.end,
        parameters=[("start", "From", r.start), ("end", "to", r.end)],
        notes=[f"Payments dated {fmt_day(r.start)}" + ("" if one_day else f" to {fmt_day(r.end)}")
               + ", by the day paid and where they came in, and by how they were paid (tender)."],
        main=Table("rows", "By day and source", (
            Column("day", "Day", DAY), Column("source", "Source", labels=sources), Column("count", "Payments", COUNT),
            Column("total", "Total", MONEY)),
            [vars(line) for line in r.lines], {"count": r.count, "total": r.total}),
        more=[
            Table("by_day", "By day", (Column("day", "Day", DAY), Column("count", "Payments", COUNT),
                                       Column("total", "Total", MONEY)),
                  [vars(line) for line in r.days], {"count": r.count, "total": r.total}),
            Table("by_source", "By source", (Column("source", "Source", labels=sources),
                                             Column("count", "Payments", COUNT), Column("total", "Total", MONEY)),
                  [vars(line) for line in r.sources], {"count": r.count, "total": r.total}),
            Table("by_day_and_tender", "By day and tender", (
                Column("day", "Day", DAY), Column("tender", "Tender", labels=s.PAYMENT_TENDERS),
                Column("count", "Payments", COUNT), Column("total", "Total", MONEY)),
                [vars(line) for line in r.day_tenders], {"count": r.count, "total": r.total}),
            Table("by_tender", "By tender", (Column("tender", "Tender", labels=s.PAYMENT_TENDERS),
                                             Column("count", "Payments", COUNT), Column("total", "Total", MONEY)),
                  [vars(line) for line in r.tenders], {"count": r.count, "total": r.total}),
        ],
        totals={})


VIEWS: dict[type, Callable[..., ReportView]] = {
    s.Register: _register, s.Aging: _aging, s.DelinquencyList: _delinquency, s.Relevy: _relevy,
    s.Receipts: _receipts,
}
