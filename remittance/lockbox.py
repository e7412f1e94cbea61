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
* **Importing the same file again** posts and queues nothing more: the references are unique.
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
    CsvLayout,
    ImportErrors,
    csv_rows,
    dollars,
    identifier,
    import_source_read,
    iso_date_until,
    text,
)
from core.errors import ApplicationError, FieldError

from .models import PaymentException

LOCKBOX_LAYOUT = CsvLayout(required=("deposit_date", "batch", "item", "amount", "check_number", "scan_line"))
SCAN = re.compile(r"\s*(\S+)\s+(\S+)\s+(\d{10})\s+(\d{10})\s*")


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


def lockbox_import(*, file, as_of: date, actor=None, progress=False) -> LockboxResult:
    source = import_source_read(file)
    errors = ImportErrors(columns=LOCKBOX_LAYOUT.columns)
    on_or_before, short, words = iso_date_until(as_of), identifier(max_length=10), text(max_length=200,
                                                                                          required=False)
    checks: list[_Check] = []
    for row in csv_rows(text=source.text, layout=LOCKBOX_LAYOUT, errors=errors):
        day = errors.parse(row, "deposit_date", on_or_before)
        batch, item = errors.parse(row, "batch", short), errors.parse(row, "item", short)
        amount = errors.parse(row, "amount", dollars)
        check_number = errors.parse(row, "check_number", identifier(max_length=20, required=False))
        scan = errors.parse(row, "scan_line", words)
        if None in (day, batch, item, amount, check_number, scan):
            continue
        checks.append(_Check(row.line, day, f"LBX-{day:%Y%m%d}-{batch}-{item}", amount, check_number, scan))
    errors.raise_if_any()
    refs = [c.reference for c in checks]
    done = {r.lower() for r in Payment.objects.filter(reference__in=refs).values_list("reference", flat=True)}
    done |= {r.lower() for r in PaymentException.objects.filter(reference__in=refs).values_list("reference",
                                                                                               flat=True)}
    fresh = [c for c in checks if c.reference.lower() not in done]
    matched, queued = [], []
    for check in fresh:
        account_no, why = _match(check.scan_line)
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
            check_number=c.check_number, read=c.scan_line[:200], reason=why) for c, why in queued])
    return LockboxResult(posted=len(matched), skipped=len(checks) - len(fresh), exceptions=len(queued))


def _match(scan_line: str) -> tuple[str, str]:
    """The account a stub's scan line names, or why it names none."""
    found = SCAN.fullmatch(scan_line)
    if found is None:
        return "", "no scan line that reads as a bill stub's" if scan_line else "no scan line (no stub in the envelope)"
    account_no, bill_no = found.group(1), found.group(2)
    account = Account.objects.filter(account_no=account_no).first()
    if account is None:
        return "", f"account {account_no} on the stub is not one of ours"
    bill = Bill.objects.filter(number=bill_no).values_list("account_id", flat=True).first()
    if bill is None:
        return "", f"bill {bill_no} on the stub is not one of ours"
    if bill != account.pk:
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
        exception.payment = Payment.objects.get(reference__iexact=exception.reference)
        exception.status, exception.note = PaymentException.Status.POSTED, note
        exception.resolved_at, exception.resolved_by = timezone.now(), actor
        exception.save()
    return exception


def exception_return(*, exception: PaymentException, note: str, actor) -> PaymentException:
    """Record that the payment was sent back to the payer (a note says how)."""
    if not note.strip():
        raise ApplicationError("is required: how it was sent back (the check returned by mail, a refund)",
                               field="note")
    updated = PaymentException.objects.filter(pk=exception.pk, status=PaymentException.Status.OPEN).update(
        status=PaymentException.Status.RETURNED, note=note.strip(), resolved_at=timezone.now(), resolved_by=actor)
    if not updated:
        raise ApplicationError(f"{exception.reference} is resolved already", field="status")
    exception.refresh_from_db()
    return exception
