"""What the old system had already relevied to the tax roll, checked all or nothing and brought over as history
(``billing.PriorRelevy``): collected with the property taxes, so no longer owed on the water account — it is not in
the opening balances, and nothing relevies it again — but shown on the statement and in the portal, and counted by
the reconciliation.

The file (``RELEVIED_LAYOUT``), one row per amount relevied: ``account_no,relevied_on,tax_roll,amount``
(``tax_roll`` as the old system named the roll: "2025-26 village tax roll"). Every problem is named with its line
and column, nothing saved: an unknown account, a day after the day before the cutover, an amount not positive.
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from core.csvimport import CsvLayout, ImportErrors, csv_rows, dollars, identifier, import_source_read, text
from core.dates import iso_date

from .opening import unknown_accounts

RELEVIED_LAYOUT = CsvLayout(required=("account_no", "relevied_on", "tax_roll", "amount"))


@dataclass(frozen=True)
class RelevyRow:
    line: int
    account_no: str
    relevied_on: date
    tax_roll: str
    amount: Decimal



def relevied_read(source, *, as_of: date) -> list[RelevyRow]:
    """The amounts relevied, checked all or nothing (``ImportRejected``, each problem naming ``relevied.<column>``)."""
    file = import_source_read(source)
    errors = ImportErrors(columns=RELEVIED_LAYOUT.columns)
    number, roll = identifier(max_length=20), text(max_length=80)
    rows: list[RelevyRow] = []
    first_line: dict[str, int] = {}
    for row in csv_rows(text=file.text, layout=RELEVIED_LAYOUT, errors=errors):
        account_no = errors.parse(row, "account_no", number)
        relevied_on = errors.parse(row, "relevied_on", iso_date)
        if relevied_on is not None and relevied_on > as_of:
            errors.add(line=row.line, field="relevied_on", message=f"{relevied_on} is after {as_of}: the old system "
                                                                   "relevied it before the cutover")
            relevied_on = None
        tax_roll, amount = errors.parse(row, "tax_roll", roll), errors.parse(row, "amount", dollars)
        if account_no is not None:
            first_line.setdefault(account_no, row.line)
        if None not in (account_no, relevied_on, tax_roll, amount):
            rows.append(RelevyRow(row.line, account_no, relevied_on, tax_roll, amount))
    unknown_accounts(errors, first_line)
    errors.raise_if_any(file="relevied")
    return rows
