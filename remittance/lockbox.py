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
  it belongs to (``exception_post``) or records that it was sent back (``exception_return``). An amount over the
  office's limit (``EXCEPTION_POST_LIMIT``), or over what the account owes, is posted by a supervisor: its excess
  would stand as a credit that could be refunded.
* **A row the file repeats** (the same deposit date, batch and item as a row above it) is not refused with the file:
  the first posts (or is queued) as any other, each repeat goes to the exceptions queue as ``<reference>/2``,
  ``/3``… naming the line it repeats, so the clerk decides whether the bank read one check twice or two checks
  under one number, and the rest of the file posts.
* **Batch and item are ASCII digits** (0-9), taken as written: a digit of another script would make a second
  reference for the same check.
* **The same check twice**: a matched check with the same account, check number and amount as one above it in the
  file, or as a payment posted in the last ``DUPLICATE_CHECK_DAYS`` days, goes to the exceptions queue naming the
  other (its line and reference, or the payment), so a check read twice or deposited twice never posts twice.
* **Importing the same file again** posts and queues nothing more: the references are unique.
* **Large files**: every lookup (references already posted or queued, the accounts and bills the scan lines name)
  goes to the database in chunks of ``CHUNK_SIZE``, so a file of 400,000 checks is read on SQLite as on PostgreSQL.
"""

import re
from dataclasses import dataclass
from datetime import date, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from billing.balances import balances
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
from core.money import ZERO, fmt_dollars
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
    earlier = _recent_checks([(reasons[c.scan_line][0], c) for c in fresh if not reasons[c.scan_line][1]])
    in_file: dict[tuple, _Check] = {}
    for check in fresh:
        account_no, why = reasons[check.scan_line]
        key = (account_no, check.check_number, check.amount)
        if not why and check.check_number:
            if key in in_file:
                first = in_file[key]
                why = (f"the same account, check number and amount as line {first.line} ({first.reference}): one "
                       "check read twice, or two checks? Post it, or record it as not received")
            elif key in earlier:
                why = (f"the same account, check number and amount as payment {earlier[key]}, posted in the last "
                       f"{settings.DUPLICATE_CHECK_DAYS} days: the same check deposited twice? Post it, or record it "
                       "as not received")
            else:
                in_file[key] = check
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


def _recent_checks(checks: list[tuple[str, _Check]]) -> dict[tuple, str]:
    """Of these (account number, check) pairs, those whose account, check number and amount match a payment posted
    in the last ``DUPLICATE_CHECK_DAYS`` days before the check's deposit: (account number, check number, amount) →
    that payment's reference."""
    wanted = {(account_no, c.check_number, c.amount): c for account_no, c in checks if c.check_number}
    if not wanted:
        return {}
    first = min(c.deposit_date for c in wanted.values()) - timedelta(days=settings.DUPLICATE_CHECK_DAYS)
    found: dict[tuple, str] = {}
    for chunk in chunked(sorted({key[1] for key in wanted})):
        for account_no, number, amount, paid_on, reference in Payment.objects.filter(
                check_number__in=chunk, paid_on__gte=first, reversal__isnull=True).values_list(
                "account__account_no", "check_number", "amount", "paid_on", "reference"):
            key = (account_no, number, amount)
            check = wanted.get(key)
            if check is not None and paid_on >= check.deposit_date - timedelta(days=settings.DUPLICATE_CHECK_DAYS):
                found.setdefault(key, reference)
    return found


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


POST_LARGE = "remittance.approve_paymentexception"


def exception_post_problems(*, exception: PaymentException, account_no: str, actor) -> list[FieldError]:
    """Why ``actor`` may not post the queued payment to ``account_no``: an unknown account; a partial refund (money
    paid back, never a payment); and, without the supervisor's permission (``POST_LARGE``), an amount over the
    office's limit (``EXCEPTION_POST_LIMIT``) or over what the account owes, whose excess would stand as a credit
    that could be refunded."""
    account = Account.objects.filter(account_no=account_no).first()
    if account is None:
        return [FieldError(field="account_no", message=f"unknown account '{account_no}'")]
    if exception.source.startswith("refund:"):
        return [FieldError(field="account_no", message=(
            f"{exception.reference} is a refund the processor made, not a payment: take it off account "
            f"{account_no}'s credit, then record it here as sent back to the payer"))]
    amount = exception.amount.amount
    if actor is not None and actor.has_perm(POST_LARGE):
        return []
    limit = settings.EXCEPTION_POST_LIMIT
    owed = balances([account.pk], through=exception.received_on)[account.pk].balance
    if amount > limit:
        return [FieldError(field="account_no", message=(
            f"{fmt_dollars(amount)} is more than the {fmt_dollars(limit)} a clerk may post from the exceptions "
            "queue: a supervisor posts it"))]
    if amount > max(owed, ZERO):
        return [FieldError(field="account_no", message=(
            f"{fmt_dollars(amount)} is more than account {account_no} owed on {exception.received_on} "
            f"({fmt_dollars(max(owed, ZERO))}): the rest would stand as a credit, so a supervisor posts it"))]
    return []


def exception_post(*, exception: PaymentException, account_no: str, note: str, actor) -> PaymentException:
    """Post the queued payment to ``account_no`` (its reference and deposit date as received); refused as
    ``exception_post_problems`` says."""
    with transaction.atomic():
        exception = PaymentException.objects.select_for_update().get(pk=exception.pk)
        if exception.status != PaymentException.Status.OPEN:
            raise ApplicationError(f"{exception.reference} is {exception.get_status_display().lower()} already",
                                   field="status")
        problems = exception_post_problems(exception=exception, account_no=account_no, actor=actor)
        if problems:
            raise ApplicationError(errors=problems)
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
