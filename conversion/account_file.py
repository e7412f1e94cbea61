"""The accounts themselves from another system: its account master export read as ``import_accounts``' file
through the mapping's ``[accounts]`` tables, then imported by the accounts import (all or nothing, every problem
with its line and column).

Design overview:

* **The mapping** (the conversion's one TOML file) reads the export without hand editing:
  ``[accounts.columns]`` names the export's header for each of ``import_accounts``' columns (and ``status``);
  ``[accounts.categories]``, ``[accounts.meter_sizes]`` and ``[accounts.statuses]`` turn its codes into ours;
  ``[accounts.dates] format`` reads its dates (the opening balances' ``[dates]`` format when not given).
  ``fixtures/conversion/example_mapping.toml`` is a worked one.
* **Statuses**: active and vacant accounts are opened as such; a closed account is left out (its row read as a
  blank one, so every line keeps its number in the errors) and counted. A code the mapping does not name and
  that is none of ours refuses the file, naming its line.
* **The import** is ``meters.account_imports.accounts_import``, the one ``import_accounts`` and the admin's
  upload run: the same checks, the same history, the same result.
"""

import csv
import io
from dataclasses import dataclass, field
from datetime import datetime

from django.core.files.base import ContentFile

from core.csvimport import TRIMMED, ImportErrors, ImportResult, import_source_read
from core.csvout import csv_writer
from core.errors import ApplicationError
from core.services import import_job_start
from meters.account_imports import ACCOUNTS_LAYOUT, IMPORT_STATUSES, accounts_import
from meters.units import normalize_size
from ordinance.keys import Key, MapOf, Shape, Text

IMPORTER = "meters.account_imports.accounts_import"
CLOSED = "closed"
STATUSES = (*IMPORT_STATUSES, CLOSED)  # what an export's status code may mean
CATEGORIES = ("one_two_family", "other", "nonprofit")


@dataclass(frozen=True)
class AccountsMapping:
    """How another system's account master reads as ``import_accounts``' file."""

    columns: dict[str, str] = field(default_factory=dict)  # our column → the export's header
    categories: dict[str, str] = field(default_factory=dict)  # the export's code → ours
    meter_sizes: dict[str, str] = field(default_factory=dict)
    statuses: dict[str, str] = field(default_factory=dict)
    date_format: str = ""


def column_of(layout, noun: str):
    """A mapping's left-hand side: one of ``layout``'s columns."""
    return lambda ours: None if ours in layout.columns else f"not a column of {noun} ({', '.join(layout.columns)})"


class MeterSizeKind(Text):
    words = "a meter size in inches (5/8, 3/4, 1, 1 1/2, 2, …)"

    def problem(self, value):
        try:
            normalize_size(str(value))
        except ValueError as exc:
            return str(exc).removeprefix(f"'{value}' ") if isinstance(value, str) else f"is not {self.words}"
        return None


def _strftime(table: dict, where: str) -> list[str]:
    given = table.get("format", "")
    return [] if not given or "%" in given else [f"{where} format '{given}': a strftime format such as %m/%d/%Y"]


DATES = Shape({"format": Key("how the export writes a date (Python strftime: %m/%d/%Y)", Text())},
              checks=(_strftime,))
# The mapping's ``[accounts]`` tables (the whole mapping's shape is ``conversion.opening.MAPPING``).
ACCOUNTS_MAPPING = Shape({
    "columns": Key(f"our column = the export's header; ours (import_accounts'): {', '.join(ACCOUNTS_LAYOUT.columns)}",
                   MapOf(Text(blank=False), "our column", column_of(ACCOUNTS_LAYOUT, "the accounts"))),
    "categories": Key("the export's class = our category", MapOf(Text(CATEGORIES), "the export's code")),
    "meter_sizes": Key("the export's size code = the size in inches", MapOf(MeterSizeKind(), "the export's code")),
    "statuses": Key("the export's status = ours (a closed account is left out unless closed_on is mapped)",
                    MapOf(Text(STATUSES), "the export's code")),
    "dates": Key("how the account master writes a date, where not as the open items do", DATES)})


def accounts_mapping_parse(section: dict, *, date_format: str) -> AccountsMapping:
    """The mapping's ``[accounts]`` tables, already held to ``ACCOUNTS_MAPPING``."""
    return AccountsMapping(
        columns={str(k): str(v) for k, v in section.get("columns", {}).items()},
        categories={str(k): str(v) for k, v in section.get("categories", {}).items()},
        meter_sizes={str(k): normalize_size(str(v)) for k, v in section.get("meter_sizes", {}).items()},
        statuses={str(k): str(v) for k, v in section.get("statuses", {}).items()},
        date_format=section.get("dates", {}).get("format", "") or date_format)


@dataclass(frozen=True)
class AccountsRead:
    text: str  # the export as ``import_accounts``' file
    closed: int  # closed accounts left out


def accounts_mapped(source, mapping: AccountsMapping) -> AccountsRead:
    """The export rewritten as ``import_accounts``' file: its columns renamed and put in our order, its codes
    and dates in ours, its closed accounts left out unless the mapping names their closing day (``closed_on``).
    A value the mapping cannot read is left as it was, for the import to name; a status code neither the mapping
    nor we know refuses the file (``accounts.status``)."""
    file = import_source_read(source)
    rows = list(csv.reader(io.StringIO(file.text, newline="")))
    if not rows:
        return AccountsRead(text=file.text, closed=0)
    header = [name.strip(TRIMMED) for name in rows[0]]
    ours = [c for c in ACCOUNTS_LAYOUT.columns if c in ACCOUNTS_LAYOUT.required or c in mapping.columns or c in header]
    if "closed_on" in ours and "status" not in ours:
        ours.remove("closed_on")  # a closing day means nothing without the status that says closed
    source_of = {column: mapping.columns.get(column, column) for column in ours}
    missing = [theirs for theirs in source_of.values() if theirs not in header]
    if missing:
        raise ApplicationError(f"the export has no column {', '.join(repr(m) for m in missing)} that the mapping "
                               f"names (its header: {', '.join(header)})", field="mapping")
    where = {column: header.index(theirs) for column, theirs in source_of.items()}
    errors = ImportErrors(columns=ACCOUNTS_LAYOUT.columns)
    out = io.StringIO()
    writer = csv_writer(out, lineterminator="\n")
    writer.writerow(ours)
    closed = 0
    for line, row in enumerate(rows[1:], start=2):
        values = {column: row[index].strip(TRIMMED) if index < len(row) else "" for column, index in where.items()}
        if not "".join(values.values()).strip():
            writer.writerow([])
            continue
        values["category"] = mapping.categories.get(values["category"], values["category"])
        values["meter_size"] = mapping.meter_sizes.get(values["meter_size"], values["meter_size"])
        for column in ("initial_read_date", "closed_on"):
            if mapping.date_format and values.get(column):
                try:
                    values[column] = datetime.strptime(values[column], mapping.date_format).date().isoformat()
                except ValueError:
                    pass  # left as written: the import names it
        if "status" in values:
            code = values["status"]
            status = mapping.statuses.get(code, code.lower() if code.lower() in STATUSES or not code else None)
            if status is None:
                errors.add(line=line, field="status", message=(
                    f"'{code}' is not a status the mapping names ([accounts.statuses]: "
                    f"{', '.join(mapping.statuses) or 'none'}) nor one of {', '.join(STATUSES)}"))
            elif status == CLOSED and "closed_on" not in values:
                # Without the day it closed a closed account cannot come over: left out (the lines after it keep
                # their numbers). With [accounts.columns] closed_on it comes over closed, with its final bill.
                closed += 1
                writer.writerow([])
                continue
            values["status"] = status or ""
        writer.writerow([values[column] for column in ours])
    errors.raise_if_any(file="accounts")
    return AccountsRead(text=out.getvalue(), closed=closed)


@dataclass(frozen=True)
class AccountsConverted:
    result: ImportResult
    closed: int


def accounts_convert(source, *, mapping: AccountsMapping | None, as_of, actor=None,
                     progress: bool = False) -> AccountsConverted:
    """Import the old system's accounts (through the mapping when given), all or nothing."""
    name = import_source_read(source).name
    read = accounts_mapped(source, mapping) if mapping is not None else AccountsRead(
        text=import_source_read(source).text, closed=0)
    return AccountsConverted(result=accounts_import(file=ContentFile(read.text.encode(), name=name), as_of=as_of,
                                                    actor=actor, progress=progress), closed=read.closed)


def accounts_import_job_start(upload, *, mapping: AccountsMapping | None, as_of, actor) -> tuple:
    """The admin's way: the export read through the mapping here (its refusals at once), then imported by a
    worker as the accounts import's job (``core.services.import_job_start``), whose page shows its progress
    and result. Returns the job and the closed accounts left out."""
    name = import_source_read(upload).name
    read = accounts_mapped(upload, mapping) if mapping is not None else AccountsRead(
        text=import_source_read(upload).text, closed=0)
    job = import_job_start(importer=IMPORTER, noun="accounts", file=ContentFile(read.text.encode(), name=name),
                           as_of=as_of, actor=actor)
    return job, read.closed
