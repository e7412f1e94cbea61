"""The lockbox: the bank opens the envelopes, deposits the checks and sends a detail file of what it read from each
bill stub's scan line; and the exceptions queue for the payments nobody could match.

Design overview:

* **The file** (``LOCKBOX_LAYOUT``), one row per check: ``deposit_date,batch,item,amount,check_number,scan_line``;
  the scan line is the one printed on the bill stub (``billing.documents.bill``: the account number, the bill
  number, the amount due and the amount after the due date, in cents). A row the bank could not read as a payment
  (a bad date or amount) refuses the file, every problem named; nothing is saved.
* **Matched by the scan line**: the account number and the bill number must be one of ours and go together. Each
  matched check is posted through billing's one payment service (tender check, reference
  ``LBX-<deposit date>-<batch>-<item>``, paid on the deposit date), all in one transaction.
* **Unmatched checks** (no scan line, an account or bill that is not ours, a bill of another account) go to the
  exceptions queue (``PaymentException``) with why; the money is in the bank, so a clerk posts each to the account
  it belongs to (``exception_post``) or records that it was sent back (``exception_return``).
* **A row the file repeats** (the same deposit date, batch and item as a row above it) is not refused with the file:
  the first posts (or is queued) as any other, each repeat goes to the exceptions queue as ``<reference>/2``,
  ``/3``… naming the line it repeats, so the clerk decides whether the bank read one check twice or two checks
  under one number, and the rest of the file posts.
* **Batch and item are ASCII digits** (0-9), taken as written: a digit of another script would make a second
  reference for the same check.
* **Importing the same file again** posts and queues nothing more: the references are unique.
* **Large files**: every lookup (references already posted or queued, the accounts and bills the scan lines name)
  goes to the database in chunks of ``CHUNK_SIZE``, so a file of 400,000 checks is read on SQLite as on PostgreSQL.
"""

import re
from dataclasses import dataclass
from datetime import date

from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from billing.models import Bill, Payment
from billing.services.payments import PaymentIn, payments_post
from core.csvimport import (
    CHUNK_SIZE,
    CsvLayout,
    ImportErrors,
    chunked,
    csv_rows,
    dollars,
    identifier,
    import_source_read,
    iso_date_until,
    text,
)
from core.errors import ApplicationError, FieldError
from core.workflow import transition

from .models import PaymentException

LOCKBOX_LAYOUT = CsvLayout(required=("deposit_date", "batch", "item", "amount", "check_number", "scan_line"))
SCAN = re.compile(r"\s*(\S+)\s+(\S+)\s+(\d{10})\s+(\d{10})\s*", re.ASCII)
DIGITS = re.compile(r"[0-9]{1,10}", re.ASCII)


@dataclass(frozen=True)
class LockboxResult:
    posted: int
    skipped: int
    exceptions: int

    def __str__(self) -> str:
        return (f"{self.posted} posted, {self.exceptions} to the exceptions queue, {self.skipped} skipped (already "
                "posted or queued)")


@dataclass(frozen=True)
class _Check:
    line: int
    deposit_date: date
    reference: str
    amount: object
    check_number: str
    scan_line: str


def _digits(what: str):
    def parse(value: str) -> str:
        if not DIGITS.fullmatch(value):
            raise ValueError(f"'{value[:20]}' is not a {what} number (one to ten digits 0-9)")
        return value
    return parse


def lockbox_import(*, file, as_of: date, actor=None, progress=False) -> LockboxResult:
    source = import_source_read(file)
    errors = ImportErrors(columns=LOCKBOX_LAYOUT.columns)
    on_or_before, words = iso_date_until(as_of), text(max_length=200, required=False)
    batch_no, item_no = _digits("batch"), _digits("item")
    check_no = identifier(max_length=20, required=False)
    checks: list[_Check] = []
    first_line: dict[str, int] = {}
    repeats: list[tuple[_Check, str]] = []
    for row in csv_rows(text=source.text, layout=LOCKBOX_LAYOUT, errors=errors):
        day = errors.parse(row, "deposit_date", on_or_before)
        batch, item = errors.parse(row, "batch", batch_no), errors.parse(row, "item", item_no)
        amount = errors.parse(row, "amount", dollars)
        check_number = errors.parse(row, "check_number", check_no)
        scan = errors.parse(row, "scan_line", words)
        if None in (day, batch, item, amount, check_number, scan):
            continue
        reference = f"LBX-{day:%Y%m%d}-{batch}-{item}"
        if reference in first_line:
            times = sum(1 for c, _ in repeats if c.reference.startswith(reference + "/")) + 2
            repeats.append((_Check(row.line, day, f"{reference}/{times}", amount, check_number, scan),
                            f"the file repeats batch {batch} item {item} of line {first_line[reference]}: one check "
                            "read twice, or two checks under one number? Post it, or record it as not received"))
            continue
        first_line[reference] = row.line
        checks.append(_Check(row.line, day, reference, amount, check_number, scan))
    errors.raise_if_any()
    done = _known([c.reference for c in checks] + [c.reference for c, _ in repeats])
    fresh = [c for c in checks if c.reference.lower() not in done]
    matched, queued = [], [(c, why) for c, why in repeats if c.reference.lower() not in done]
    reasons = _match_all([c.scan_line for c in fresh])
    for check in fresh:
        account_no, why = reasons[check.scan_line]
        if why:
            queued.append((check, why))
        else:
            matched.append(PaymentIn(account_no, check.amount, check.deposit_date, check.reference, line=check.line,
                                     tender=Payment.Tender.CHECK, check_number=check.check_number))
    with transaction.atomic():
        if matched:
            payments_post(payments=matched, actor=actor, source="lockbox")
        PaymentException.objects.bulk_create([PaymentException(
            source="lockbox", reference=c.reference, received_on=c.deposit_date, amount=c.amount,
            check_number=c.check_number, read=c.scan_line[:200], reason=why[:200]) for c, why in queued],
            batch_size=CHUNK_SIZE)
    total = len(checks) + len(repeats)
    return LockboxResult(posted=len(matched), skipped=total - len(matched) - len(queued), exceptions=len(queued))


def _known(references: list[str]) -> set[str]:
    """Those of ``references`` already posted or queued (lower case), looked up in chunks."""
    done: set[str] = set()
    for chunk in chunked(references):
        for model in (Payment, PaymentException):
            done |= {r.lower() for r in model.objects.filter(reference__in=chunk).values_list("reference",
                                                                                              flat=True)}
    return done


def _match_all(scan_lines: list[str]) -> dict[str, tuple[str, str]]:
    """For each scan line, the account it names, or why it names none (``_match``), with the accounts and bills
    looked up in chunks."""
    read = {line: SCAN.fullmatch(line) for line in set(scan_lines)}
    named = [m for m in read.values() if m is not None]
    accounts: dict[str, int] = {}
    for chunk in chunked(sorted({m.group(1) for m in named})):
        accounts.update(Account.objects.filter(account_no__in=chunk).values_list("account_no", "pk"))
    bills: dict[str, int] = {}
    for chunk in chunked(sorted({m.group(2) for m in named})):
        bills.update(Bill.objects.filter(number__in=chunk).values_list("number", "account_id"))
    return {line: _match(line, found, accounts, bills) for line, found in read.items()}


def _match(scan_line: str, found, accounts: dict[str, int], bills: dict[str, int]) -> tuple[str, str]:
    """The account a stub's scan line names, or why it names none."""
    if found is None:
        return "", "no scan line that reads as a bill stub's" if scan_line else "no scan line (no stub in the envelope)"
    account_no, bill_no = found.group(1), found.group(2)
    if account_no not in accounts:
        return "", f"account {account_no} on the stub is not one of ours"
    if bill_no not in bills:
        return "", f"bill {bill_no} on the stub is not one of ours"
    if bills[bill_no] != accounts[account_no]:
        return "", f"bill {bill_no} on the stub is not account {account_no}'s"
    return account_no, ""


def exception_post(*, exception: PaymentException, account_no: str, note: str, actor) -> PaymentException:
    """Post the queued payment to ``account_no`` (its reference and deposit date as received)."""
    with transaction.atomic():
        exception = PaymentException.objects.select_for_update().get(pk=exception.pk)
        if exception.status != PaymentException.Status.OPEN:
            raise ApplicationError(f"{exception.reference} is {exception.get_status_display().lower()} already",
                                   field="status")
        if not Account.objects.filter(account_no=account_no).exists():
            raise ApplicationError(errors=[FieldError(field="account_no", message=f"unknown account '{account_no}'")])
        payments_post(payments=[PaymentIn(account_no, exception.amount.amount, exception.received_on,
                                          exception.reference, tender=exception.tender,
                                          check_number=exception.check_number)], actor=actor, source=exception.source)
        posted = Payment.objects.get(reference__iexact=exception.reference)
        return transition(exception, to=PaymentException.Status.POSTED, actor=actor,
                          note=note or f"posted to {account_no}",
                          changes={"payment": posted, "note": note, "resolved_at": timezone.now(),
                                   "resolved_by": actor})


def exception_return(*, exception: PaymentException, note: str, actor) -> PaymentException:
    """Record that the payment was sent back to the payer (a note says how)."""
    if not note.strip():
        raise ApplicationError("is required: how it was sent back (the check returned by mail, a refund)",
                               field="note")
    with transaction.atomic():
        exception = PaymentException.objects.select_for_update().get(pk=exception.pk)
        if exception.status != PaymentException.Status.OPEN:
            raise ApplicationError(f"{exception.reference} is resolved already", field="status")
        return transition(exception, to=PaymentException.Status.RETURNED, actor=actor, note=note.strip(),
                          changes={"note": note.strip(), "resolved_at": timezone.now(), "resolved_by": actor})
