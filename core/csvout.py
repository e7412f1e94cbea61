"""The one CSV writer of every CSV the product makes (reports, exports, registers, journals, conversion files).

A cell that a spreadsheet would run as a formula — text beginning with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return (OWASP's CSV injection rule) — is written with an apostrophe before it, so an owner named
``=HYPERLINK(...)`` reads as text in the treasurer's spreadsheet. Numbers, and text that is a plain number
(``-12.50``, ``+1``), are written as they are, so money columns still add up.
"""

import csv
import re

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?[0-9][0-9,]*(\.[0-9]+)?")


def neutralised(value):
    """The cell as written: a text that would start a formula gets an apostrophe before it."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


class CsvWriter:
    """``csv.writer`` whose every row's cells are ``neutralised``; ``writerow`` returns what the file object's
    ``write`` returned (for streaming through an echo object, as the admin's exports do)."""

    def __init__(self, out, **kwargs):
        self._writer = csv.writer(out, **kwargs)

    def writerow(self, row):
        return self._writer.writerow([neutralised(cell) for cell in row])

    def writerows(self, rows) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(out, **kwargs) -> CsvWriter:
    return CsvWriter(out, **kwargs)


def csv_dict_rows(out, *, columns: list[str], rows, **kwargs) -> None:
    """A header of ``columns`` and each row (a dict) by them, through the one writer."""
    writer = csv_writer(out, **kwargs)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([row.get(name, "") for name in columns])
