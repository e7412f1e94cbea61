"""What the clerk narrows a report to on the Reports page: a book, a least amount, the accounts' status, an order,
and the totals alone. Applied to the report's view (``reports.render``), so the page, the CSV and the PDF show the
same rows; the totals row is the rows', and a note says what was left out."""

from collections import defaultdict
from dataclasses import dataclass, replace
from decimal import Decimal

from accounts.models import Account
from core.money import ZERO, fmt_dollars

from .render import COUNT, MONEY, Column, ReportView, Table, count_words

# What "at least" is measured on, by report; the reports listed here are the ones a filter applies to.
AMOUNT_COLUMN = {"aging": "balance", "delinquency": "amount", "relevy": "total"}


@dataclass(frozen=True)
class ReportFilter:
    book: int | None = None
    minimum: Decimal | None = None
    status: str = ""
    sort: str = ""  # a column's key
    descending: bool = False
    totals_only: bool = False

    @property
    def narrows(self) -> bool:
        return self.book is not None or self.minimum is not None or bool(self.status)

    def words(self) -> str:
        parts = []
        if self.book is not None:
            parts.append(f"book {self.book}")
        if self.minimum is not None:
            parts.append(f"owing at least {fmt_dollars(self.minimum)}")
        if self.status:
            parts.append(f"{Account.Status(self.status).label.lower()} accounts")
        return ", ".join(parts)


def _sum(rows: list[dict], column: Column):
    return sum((row[column.key] for row in rows if row.get(column.key) is not None),
               ZERO if column.kind == MONEY else 0)


def _by_book(main: Table) -> Table:
    """The main table's totals by book, with each book's count of rows."""
    groups: dict = defaultdict(list)
    for row in main.rows:
        groups[row.get("book")].append(row)
    money = [c for c in main.columns if c.key in main.total and c.kind in (MONEY, COUNT)]
    noun = main.counted or "row"
    return Table("by_book", "Totals by book", (
        Column("book", "Book", COUNT), Column("rows", f"{noun.capitalize()}s", COUNT), *money),
        [{"book": book, "rows": len(rows), **{c.key: _sum(rows, c) for c in money}}
         for book, rows in sorted(groups.items(), key=lambda item: (item[0] is None, item[0] or 0))],
        {"rows": len(main.rows), **{c.key: main.total[c.key] for c in money}})


def sortable(view: ReportView) -> set[str]:
    return {column.key for column in view.main.columns}


def view_filtered(view: ReportView, chosen: ReportFilter) -> ReportView:
    """``view`` narrowed and ordered as ``chosen`` says; with ``totals_only``, no rows: the totals and the totals by
    book."""
    main = view.main
    rows = main.rows
    if view.name in AMOUNT_COLUMN and chosen.narrows:
        if chosen.book is not None:
            rows = [row for row in rows if row.get("book") == chosen.book]
        if chosen.minimum is not None:
            rows = [row for row in rows if row[AMOUNT_COLUMN[view.name]] >= chosen.minimum]
        if chosen.status:
            rows = [row for row in rows if row.get("status") == chosen.status]
        total = {c.key: _sum(rows, c) for c in main.columns if c.key in main.total}
        main = replace(main, rows=rows, total=total,
                       total_label=f"Total: {count_words(len(rows), main.counted)}" if main.counted else "Total")
        view = replace(view, main=main, notes=[
            *view.notes, f"Only {chosen.words()}: {count_words(len(rows), main.counted or 'row')} of "
                         f"{len(view.main.rows):,}."],
                       totals={**view.totals, **({"accounts": len(rows)} if "accounts" in view.totals else {})})
    if chosen.sort in sortable(view):
        key = chosen.sort
        present = [row for row in main.rows if row.get(key) not in (None, "")]
        missing = [row for row in main.rows if row.get(key) in (None, "")]
        main = replace(main, rows=sorted(present, key=lambda row: row[key], reverse=chosen.descending) + missing)
        view = replace(view, main=main)
    if chosen.totals_only:
        by_book = [_by_book(main)] if any("book" in row for row in main.rows[:1]) else []
        view = replace(view, main=replace(main, rows=[]), more=[*by_book, *view.more])
    return view
