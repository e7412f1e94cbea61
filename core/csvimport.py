"""Reading clerk-supplied CSV files, all or nothing.

Design overview
---------------
Every importer (accounts, readings, payments) follows the same four steps:

1. ``import_source_read`` takes a path, bytes or an uploaded file and decodes it as UTF-8 (a leading
   byte-order mark, as Excel writes, is accepted). Anything else is refused with one error naming the
   first undecodable byte and where it is.
2. ``csv_rows`` checks the header against a ``CsvLayout`` — a wrong header is one error naming the
   expected and the found columns — and returns ``CsvRow`` objects carrying their line number. Line
   numbers count rows the way a spreadsheet does: the header is line 1, the first data row line 2, and a
   quoted value that spans several lines (a mailing address) still belongs to one row.
3. The importer parses each value with the small parsers below through ``ImportErrors.parse``, which
   records a ``FieldError(field=column, message=rule, line=N)`` instead of stopping, then checks the rows
   against the database with a few bulk queries. The parsers take a value as a clerk means it or refuse
   it, never guess: dates YYYY-MM-DD from 1900, ASCII digits, a comma only between thousands, amounts
   within what their column holds, no control characters.
4. ``ImportErrors.raise_if_any`` raises ``ImportRejected`` naming the bad rows — every error is counted,
   the first ``settings.IMPORT_ERRORS_LISTED`` (200) in file order are listed — and only a clean file
   reaches the importer's ``bulk_create`` inside one transaction. Nothing is saved unless everything is.

``CsvImportCommand`` and ``core.admin_imports.CsvImportAdminMixin`` put an importer behind a management
command and an admin upload page, so the command line and the admin report the same errors the same
way. An upload page takes files up to ``settings.IMPORT_MAX_UPLOAD_BYTES`` (20 MB); one larger than
``settings.IMPORT_BACKGROUND_BYTES`` (1 MB) is imported by a worker (``core.services``) while the page
shows its progress, so no web request spends minutes on a file.

A new importer is a layout, a loop over the rows and one save::

    PAYMENTS_LAYOUT = CsvLayout(required=("account_no", "amount", "paid_on", "reference"))

    def payments_import(*, file: ImportSource, as_of: date, actor) -> ImportResult:
        source = import_source_read(file)
        errors = ImportErrors(columns=PAYMENTS_LAYOUT.columns)
        paid_on = iso_date_until(as_of)
        for row in csv_rows(text=source.text, layout=PAYMENTS_LAYOUT, errors=errors):
            amount = errors.parse(row, "amount", dollars)
            date_paid = errors.parse(row, "paid_on", paid_on)
            ...
        # look the account numbers up in chunks (``chunked``); errors.add(line=…, field=…, message=…)
        with transaction.atomic():
            errors.raise_if_any()
            ...  # bulk_create, batch_size=CHUNK_SIZE
        return ImportResult(created=…, skipped=…)
"""

from __future__ import annotations

import csv
import heapq
import io
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol, TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from tqdm import tqdm

from .dates import iso_date
from .errors import ApplicationError, FieldError
from .limits import MONEY_MAX

if TYPE_CHECKING:
    pass

T = TypeVar("T")
CENT = Decimal("0.01")

ImportSource = str | os.PathLike | bytes | IO[bytes] | IO[str]

# Big enough that the IN lists and INSERT batches stay few, small enough for SQLite's variable limit
# (bulk_create splits further by itself when a backend needs it).
CHUNK_SIZE = 5000


class ImportRejected(ApplicationError):
    """The file was refused and nothing was saved; ``errors`` names the bad rows, columns and rules — the
    first ``settings.IMPORT_ERRORS_LISTED`` of them, with ``unlisted`` counting the rest — and ``lines``
    counts the lines with an error."""

    def __init__(self, message: str = "", *, errors: list[FieldError] | None = None, field: str = "",
                 unlisted: int = 0, lines: int | None = None):
        super().__init__(message, errors=errors, field=field, unlisted=unlisted)
        self.lines = lines

    @property
    def error_lines(self) -> int:
        return super().error_lines if self.lines is None else self.lines


@dataclass(frozen=True)
class ImportResult:
    """What a clean import did, counted in the importer's own unit (accounts, readings, payments)."""

    created: int = 0
    updated: int = 0
    skipped: int = 0
    missed: int = 0  # lines that say the meter was not read: kept for the clerk, never a reading
    held: tuple[FieldError, ...] = ()  # a partial import's refused lines (listed), whose meters wait
    held_lines: int = 0

    def __str__(self) -> str:
        missed = f", {self.missed} not read (kept for the clerk)" if self.missed else ""
        held = f", {self.held_lines} line(s) held with their meters (listed)" if self.held_lines else ""
        return (f"{self.created} created, {self.updated} updated, {self.skipped} skipped (already recorded)"
                f"{missed}{held}")


# --- reading the file -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ImportFile:
    name: str
    text: str



# The one whitespace rule of every CSV the system reads (the imports, the conversion's files through their
# mappings, the old system's control report): the plain spaces around a value or a header name are trimmed; any
# other whitespace is not, so a tab or a line break is refused naming it (a control character) wherever it is.
TRIMMED = " "

def import_source_read(source: ImportSource, *, encoding: str = "utf-8") -> ImportFile:
    """Read and decode ``source`` (a path, raw bytes, or an open/uploaded file) as UTF-8 text, or as ``encoding``
    (a meter system's file read through its mapping)."""
    if isinstance(source, bytes):
        name, raw = "upload", source
    elif isinstance(source, str | os.PathLike):
        name = os.fspath(source)
        try:
            raw = Path(source).read_bytes()
        except OSError as exc:
            raise ImportRejected(errors=[FieldError(field="file", message=f"cannot read {name}: "
                                                    f"{exc.strerror or exc}")]) from exc
    else:
        name = os.path.basename(str(getattr(source, "name", "") or "upload"))
        if hasattr(source, "seek"):
            source.seek(0)
        raw = source.read()
        if isinstance(raw, str):
            return ImportFile(name=name, text=raw.removeprefix("\ufeff"))
    return ImportFile(name=name, text=_decode(raw) if encoding == "utf-8" else _decode_as(raw, encoding))


def _decode(raw: bytes) -> str:
    if raw.startswith(b"PK\x03\x04"):
        raise ImportRejected(errors=[FieldError(
            field="file", message="this is a spreadsheet workbook (.xlsx), not a CSV file; in Excel use "
                                  "Save As → “CSV UTF-8 (Comma delimited)” and import that file")])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start:exc.start + 1].hex().upper()
        raise ImportRejected(errors=[FieldError(
            field="file", line=_row_number(raw[:exc.start]),
            message=f"the file is not UTF-8 text: byte 0x{bad} in this row is not UTF-8 (the file was "
                    "probably saved as Windows or Latin-1 text); in Excel use Save As → “CSV UTF-8 (Comma "
                    "delimited)” and import it again")]) from None


def _decode_as(raw: bytes, encoding: str) -> str:
    try:
        return raw.decode(encoding).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start:exc.start + 1].hex().upper()
        raise ImportRejected(errors=[FieldError(
            field="file", line=raw[:exc.start].count(b"\n") + 1,
            message=f"byte 0x{bad} on this line is not {encoding} text (the mapping's encoding)")]) from None


def _row_number(before: bytes) -> int:
    """The spreadsheet row (as ``csv_rows`` counts them) holding the byte that follows ``before``."""
    text = before.decode("utf-8-sig")
    try:
        complete = sum(1 for _ in csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        return text.count("\n") + 1
    # After a line break that is not inside quotes, the bad byte starts the next row.
    at_row_start = not text or (text.endswith(("\n", "\r")) and text.count('"') % 2 == 0)
    return complete + 1 if at_row_start else complete


# --- header and rows --------------------------------------------------------------------------------

@dataclass(frozen=True)
class CsvLayout:
    """The columns a file must have, in order; ``optional`` columns may follow, each at most once and in their
    order, any of them left off (an accounts file may give ``units`` without ``status``)."""

    required: tuple[str, ...]
    optional: tuple[str, ...] = ()

    def accepts(self, header: Sequence[str]) -> bool:
        header = tuple(header)
        if header[:len(self.required)] != self.required:
            return False
        rest = header[len(self.required):]
        places = [self.optional.index(name) if name in self.optional else -1 for name in rest]
        return -1 not in places and places == sorted(set(places))

    def describe(self) -> str:
        return ",".join(self.required) + "".join(f"[,{name}]" for name in self.optional)

    @property
    def columns(self) -> tuple[str, ...]:
        return self.required + self.optional


@dataclass(frozen=True, slots=True)
class CsvRow:
    line: int
    values: dict[str, str]

    def __getitem__(self, column: str) -> str:
        # A column the layout allows but the file leaves off reads as blank.
        return self.values.get(column, "")


def _header_error(layout: CsvLayout, found: Sequence[str]) -> ImportRejected:
    found_text = ",".join(found) if found else "(nothing: the file is empty)"
    detail = []
    missing = [c for c in layout.required if c not in found]
    unexpected = [c for c in found if c not in layout.columns]
    if missing:
        detail.append(f"missing {', '.join(missing)}")
    if unexpected:
        detail.append(f"unexpected {', '.join(unexpected)}")
    if not detail and found:
        detail.append("same columns in a different order")
    return ImportRejected(errors=[FieldError(
        field="header", line=1,
        message=f"expected columns {layout.describe()}; found {found_text} ({'; '.join(detail)})")])


NUL_IN_CELL = ("contains a NUL character (\\x00), which is not text: save the file as “CSV UTF-8 (Comma "
               "delimited)” and import it again")


def csv_rows(*, text: str, layout: CsvLayout, errors: ImportErrors) -> list[CsvRow]:
    """Check the header, then return the data rows with their line numbers.

    A wrong header raises at once (nothing else can be read). A row with the wrong number of values is
    recorded in ``errors`` and left out; wholly blank rows (spreadsheets leave them at the end) are
    skipped but still counted in the line numbers.
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [name.strip(TRIMMED) for name in next(reader, [])]
    except csv.Error as exc:
        raise ImportRejected(errors=[FieldError(field="header", line=1,
                                                message=f"not readable as CSV: {exc}")]) from None
    if not layout.accepts(header):
        raise _header_error(layout, header)
    rows: list[CsvRow] = []
    line = 1
    nul_anywhere = "\x00" in text  # most files have none: then no row needs looking at for it
    while True:
        line += 1
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            errors.add(line=line, field="", message=f"not readable as CSV ({exc}); nothing after it was read")
            break
        if not "".join(values).strip():
            continue
        if len(values) != len(header):
            errors.add(line=line, field="", message=f"has {len(values)} values; the header has {len(header)} "
                                                    f"columns ({','.join(header)})")
            continue
        # TRIMMED: an account number "1-0001 " is 1-0001; "1-0001<TAB>" is refused, never quietly taken as 1-0001.
        values = {name: value.strip(TRIMMED) for name, value in zip(header, values, strict=True)}
        # PostgreSQL cannot take NUL in text: such a row is an error here, and never reaches a query.
        if nul_anywhere and (with_nul := [name for name, value in values.items() if "\x00" in value]):
            for name in with_nul:
                errors.add(line=line, field=name, message=NUL_IN_CELL)
            continue
        rows.append(CsvRow(line=line, values=values))
    return rows


# --- errors -----------------------------------------------------------------------------------------

def errors_listed() -> int:
    """How many of a rejected file's errors are listed (``settings.IMPORT_ERRORS_LISTED``): a file with a
    million bad rows answers with its first few hundred and the count of the rest, not a 150 MB page."""
    return settings.IMPORT_ERRORS_LISTED


class ImportErrors:
    """Collects the problems in a file instead of stopping at the first one.

    Every error is counted, but only the first ``listed`` in file order are kept (in a heap, so a file with
    a million bad rows holds a few hundred errors, not a million): by line, then left to right along the
    line in the order of ``columns`` (the layout's), then in the order they were found.
    """

    def __init__(self, *, columns: Sequence[str] = (), listed: int | None = None):
        self.columns = tuple(columns)
        self.listed = errors_listed() if listed is None else listed
        self.count = 0
        self.bad_lines: set[int] = set()
        self._position = {name: index for index, name in enumerate(self.columns)}
        # A max-heap of the first ``listed`` errors by (line, column, order found), keys negated.
        self._kept: list[tuple[int, int, int, FieldError]] = []

    def add(self, *, line: int, field: str, message: str) -> None:
        self.count += 1
        if line is not None:
            self.bad_lines.add(line)
        key = (-(line or 0), -self._position.get(field, -1), -self.count)
        if len(self._kept) < self.listed:
            heapq.heappush(self._kept, (*key, FieldError(field=field, message=message, line=line)))
        elif key > self._kept[0][:3]:
            heapq.heapreplace(self._kept, (*key, FieldError(field=field, message=message, line=line)))

    def parse(self, row: CsvRow, column: str, parser: Callable[[str], T]) -> T | None:
        """``parser(row[column])``; a ValueError is recorded against the row and column, giving None."""
        try:
            return parser(row[column])
        except ValueError as exc:
            self.add(line=row.line, field=column, message=str(exc))
            return None

    @property
    def errors(self) -> list[FieldError]:
        """The errors kept, in file order."""
        return [error for *_, error in sorted(self._kept, reverse=True)]

    def __bool__(self) -> bool:
        return self.count > 0

    def __len__(self) -> int:
        return self.count

    def raise_if_any(self, *, file: str = "") -> None:
        """Refuse the file with every error kept. ``file`` names it in each error (``history.bill_date``), for
        files checked together (line 7 of one is not line 7 of another)."""
        if self.count:
            listed = self.errors
            if file:
                listed = [FieldError(field=f"{file}.{e.field}", message=e.message, line=e.line) for e in listed]
            raise ImportRejected(
                f"{f'the {file} file: ' if file else ''}file rejected: {self.count} error(s) on "
                f"{len(self.bad_lines)} line(s); nothing was saved",
                errors=listed, unlisted=self.count - len(listed), lines=len(self.bad_lines))


# --- value parsers: each returns the value or raises ValueError naming the rule ----------------------

# No value in a file or a form may hold these: the C0 and C1 controls (tab, line breaks, escape, NUL,
# DEL…), the Unicode line and paragraph separators, and the bidirectional overrides and isolates that make
# text display in another order than it is stored. An account number with a line break in it is saved
# happily and then breaks the e-mail that carries it.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CHARACTER_NAMES = {"\n": "a line break", "\r": "a line break", "\t": "a tab"}


def _named(char: str) -> str:
    code = f"U+{ord(char):04X}"
    if char in _CHARACTER_NAMES:
        return f"{code}, {_CHARACTER_NAMES[char]}"
    name = unicodedata.name(char, "")  # the C0 and C1 controls have none
    return f"{code} {name}" if name else code


def control_problem(value: str, *, identifier: bool = False, allow: str = "") -> str | None:
    """Why ``value`` cannot be taken as typed — a control character (other than those in ``allow``), or for
    an ``identifier`` (an account number, meter serial, payment reference) also an invisible character or
    an unusual space, which makes two values that look the same differ — or None."""
    if value.isprintable():  # no Unicode "other" or separator but the plain space: the usual case, at C speed
        return None
    for match in _CONTROL.finditer(value):
        if match.group() not in allow:
            return (f"contains a control character ({_named(match.group())}) at character {match.start() + 1}; "
                    "type the value again without it")
    if identifier and not value.isascii():
        for position, char in enumerate(value, start=1):
            category = unicodedata.category(char)
            if category == "Cf":
                return (f"contains an invisible character ({_named(char)}) at character {position}; type the "
                        "value again without it")
            if category == "Zs" and char != " ":
                return (f"contains a space that is not a plain space ({_named(char)}) at character {position}; "
                        "type the value again with a plain space")
    return None


def identifier_validator(value: str) -> None:
    """A form field validator: an account number, meter serial or payment reference as ``identifier``."""
    problem = control_problem(value, identifier=True)
    if problem:
        raise ValidationError(problem, code="control_character")


def text(*, max_length: int, required: bool = True) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if required and not value:
            raise ValueError("is required")
        if len(value) > max_length:
            raise ValueError(f"is {len(value)} characters long; at most {max_length} allowed")
        problem = control_problem(value)
        if problem:
            raise ValueError(problem)
        return value
    return parse


def identifier(*, max_length: int, required: bool = True) -> Callable[[str], str]:
    """``text`` that names one record: an account number, a meter serial, a payment reference. Besides
    control characters it may not hold an invisible character or an unusual space (see ``control_problem``)."""
    parse_text = text(max_length=max_length, required=required)

    def parse(value: str) -> str:
        value = parse_text(value)
        problem = control_problem(value, identifier=True)
        if problem:
            raise ValueError(problem)
        return value
    return parse


def memoized(parser: Callable[[str], T]) -> Callable[[str], T]:
    """``parser`` remembering what it gave for each value, for one file's read: a long file repeats its account
    numbers, bill numbers and amounts row after row. A refusal is not remembered (it raises again)."""
    seen: dict[str, T] = {}

    def parse(value: str) -> T:
        found = seen.get(value)
        if found is None:
            found = seen[value] = parser(value)
        return found
    return parse


def whole_number(*, minimum: int | None = 0, maximum: int | None = None) -> Callable[[str], int]:
    def parse(value: str) -> int:
        if not value:
            raise ValueError("is required (a whole number)")
        digits = value[1:] if value[:1] in "+-" else value
        if not digits.isascii() or not digits.isdigit() or len(digits) > 15:
            raise ValueError(f"'{value}' is not a whole number (digits only, no commas or decimals)")
        number = int(value)
        if minimum is not None and number < minimum:
            raise ValueError(f"{number} is negative; must be 0 or more" if minimum == 0
                             else f"{number} is below {minimum}")
        if maximum is not None and number > maximum:
            raise ValueError(f"{number} is above {maximum}")
        return number
    return parse


def non_negative_int(value: str) -> int:
    return whole_number(minimum=0)(value)


def one_of(choices: Iterable[str], *, default: str | None = None) -> Callable[[str], str]:
    allowed = tuple(choices)

    def parse(value: str) -> str:
        if not value and default is not None:
            return default
        if value.lower() in allowed:
            return value.lower()
        shown = f"'{value}' is not" if value else "is blank; it must be"
        raise ValueError(f"{shown} one of {', '.join(allowed)}")
    return parse


# Dollars and cents: ASCII digits, commas only between groups of three, a point before at most two cents.
_AMOUNT = re.compile(r"(-?)\$?(-?)(\d{1,3}(?:,\d{3})+|\d*)(?:\.(\d*))?", re.ASCII)
_AMOUNT_WITH_COMMAS = re.compile(r"[-$\d,.]*,[-$\d,.]*", re.ASCII)


def dollars_at_most(maximum: Decimal, *, what: str) -> Callable[[str], Decimal]:
    """A positive amount in dollars and cents (see ``dollars``) of at most ``maximum``; ``what`` names the
    thing bounded in the message: "a single payment" → "… is more than a single payment may be (at most …)"."""
    def parse(value: str) -> Decimal:
        match = _AMOUNT.fullmatch(value)
        if match is None or not (match.group(3) or match.group(4)):
            if _AMOUNT_WITH_COMMAS.fullmatch(value):
                raise ValueError(f"'{value}' is not an amount in dollars and cents: a comma may only separate "
                                 "thousands (1,250.00), and cents follow a point (12.50)")
            raise ValueError(f"'{value}' is not an amount in dollars and cents (digits 0-9, like 1250.00 or "
                             "$1,250.00)")
        negative, whole, fraction = match.group(1) or match.group(2), match.group(3), match.group(4) or ""
        if len(fraction) > 2:
            raise ValueError(f"'{value}' is not an amount in dollars and cents (at most two decimals)")
        amount = Decimal(f"{whole.replace(',', '') or '0'}.{fraction or '0'}")
        if amount > maximum:
            raise ValueError(f"'{value}' is more than {what} may be (at most ${maximum:,.2f})")
        if negative or amount == 0:
            raise ValueError(f"{value} must be more than zero")
        return amount.quantize(CENT)
    return parse


_dollars = dollars_at_most(MONEY_MAX, what="an amount")


def dollars(value: str) -> Decimal:
    """A positive amount in dollars and cents: '12', '12.5', '1234.56' or '$1,234.56', at most what an amount
    column holds (``core.limits.MONEY_MAX``). '12,50' is refused (a comma separates thousands only),
    and so are '1_000', '1e3' and digits other than 0-9."""
    return _dollars(value)


def iso_date_until(as_of: date) -> Callable[[str], date]:
    """A date (YYYY-MM-DD) no later than ``as_of``, the import date."""
    def parse(value: str) -> date:
        parsed = iso_date(value)
        if parsed > as_of:
            raise ValueError(f"{parsed} is after the import date {as_of}; nothing is recorded in the future")
        return parsed
    return parse


# --- helpers for the bulk queries and the progress bar ----------------------------------------------

def chunked(items: Sequence[T], size: int = CHUNK_SIZE) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class ProgressReport(Protocol):
    """Told how far an import has got: ``done`` of ``total`` items of the stage ("checking payments")."""

    def __call__(self, *, stage: str, done: int, total: int | None) -> None: ...


Progress = bool | ProgressReport


def progress_bar(iterable: Iterable[T], *, enabled: Progress, desc: str, total: int | None = None,
                 unit: str = " rows") -> Iterable[T]:
    """A tqdm bar on stderr when ``enabled`` is True (commands enable it on a terminal only); when it is a
    ``ProgressReport`` (a background import's job), the items are counted to it about every 1%."""
    if callable(enabled):
        return _reported(iterable, report=enabled, stage=desc, total=total)
    if not enabled:
        return iterable
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, mininterval=0.5)


def _reported(iterable: Iterable[T], *, report: ProgressReport, stage: str, total: int | None) -> Iterator[T]:
    step = max((total or 0) // 100, 1000)
    done = 0
    report(stage=stage, done=0, total=total)
    for done, item in enumerate(iterable, start=1):
        yield item
        if done % step == 0:
            report(stage=stage, done=done, total=total)
    report(stage=stage, done=done, total=total)


def change_reason(*, command: str, file: ImportFile) -> str:
    """The history entry an import leaves on every row it writes (history_change_reason is 100 chars)."""
    return f"{command} {file.name}"[:100]


__all__ = [
    "CHUNK_SIZE", "CsvLayout", "CsvRow",
    "ImportErrors", "ImportFile", "ImportRejected", "ImportResult", "ImportSource", "Progress", "ProgressReport",
    "change_reason", "chunked", "control_problem", "csv_rows", "dollars", "dollars_at_most", "errors_listed",
    "identifier", "identifier_validator", "import_source_read", "iso_date", "iso_date_until",
    "non_negative_int", "one_of", "progress_bar", "text", "whole_number",
]
