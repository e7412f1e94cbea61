"""Posting payments: one at a time at the counter, a batch from the admin, or a file from the bank.

Every path parses into ``PaymentIn`` and goes through ``payments_post`` (``payment_post`` for one): all
or nothing, every bad row named. A payment reference is
unique whatever its case — a clerk retyping "chk-100" for "CHK-100" means the same check: the same
reference again is skipped when it is the same payment (same account and amount), and refused when it
differs; the database's unique key on the lower-cased reference keeps that true under concurrency.
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models.functions import Lower
from djmoney.money import Money

from accounts.models import Account
from core.clock import refuse_future
from core.csvimport import (
    CsvLayout,
    CsvRow,
    ImportErrors,
    ImportResult,
    ImportSource,
    Progress,
    chunked,
    csv_rows,
    dollars_at_most,
    identifier,
    import_source_read,
    iso_date_until,
    progress_bar,
)
from core.errors import ApplicationError, Conflict
from core.money import PAYMENT_MAX

from ..ledger.posting import Posting, ledger_post, payment_source
from ..models import LedgerEntry, Payment
from ..signals import payment_posted
from .penalties import penalties_correct_posted

PAYMENTS_LAYOUT = CsvLayout(required=("account_no", "amount", "paid_on", "reference"))
payment_amount = dollars_at_most(PAYMENT_MAX, what="a single payment")
_account_no = identifier(max_length=Account._meta.get_field("account_no").max_length)
_reference = identifier(max_length=Payment._meta.get_field("reference").max_length)


def reference_key(reference: str) -> str:
    """What two references are compared by: the database's unique key is on ``lower(reference)``."""
    return reference.lower()


@dataclass(frozen=True, slots=True)
class PaymentIn:
    """A payment as every path hands it over: a file row, a row of the admin's batch page, an API item.
    ``line`` says where it came from, for the error messages."""

    account_no: str
    amount: Decimal
    paid_on: date
    reference: str
    line: int = 0


def payments_parse(rows: list[CsvRow], *, as_of: date, errors: ImportErrors,
                   progress: Progress = False) -> list[PaymentIn]:
    """Rows (from a file, the batch page or the API) to payments; problems go to ``errors`` by line and column."""
    parsed = []
    paid_on_parse = iso_date_until(as_of)
    for row in progress_bar(rows, enabled=progress, desc="checking payments", total=len(rows)):
        before = len(errors)
        account_no = errors.parse(row, "account_no", _account_no)
        amount = errors.parse(row, "amount", payment_amount)
        paid_on = errors.parse(row, "paid_on", paid_on_parse)
        reference = errors.parse(row, "reference", _reference)
        if len(errors) == before:
            parsed.append(PaymentIn(account_no, amount, paid_on, reference, line=row.line))
    return parsed


def payments_rows_post(*, rows: list[CsvRow], as_of: date, actor=None, source: str,
                       progress: Progress = False) -> ImportResult:
    """Parse rows, then post them with ``payments_post``: every bad row is named, and nothing is posted
    unless all are good."""
    errors = ImportErrors(columns=PAYMENTS_LAYOUT.columns)
    parsed = payments_parse(rows, as_of=as_of, errors=errors, progress=progress)
    return payments_post(payments=parsed, actor=actor, source=source, errors=errors)


def payment_post(*, account_no: str, amount: Decimal, paid_on: date, reference: str, actor=None,
                 source: str = "counter") -> ImportResult:
    """One payment (the counter, a test): the same checks and posting as a batch of one."""
    return payments_post(payments=[PaymentIn(account_no, amount, paid_on, reference)], actor=actor, source=source)


def payments_post(*, payments: list[PaymentIn], actor=None, source: str,
                  errors: ImportErrors | None = None) -> ImportResult:
    """Post payments all or nothing; a reference already posted for the same payment is skipped.

    ``errors`` may already hold what parsing found; every problem is reported together, and any problem
    posts nothing."""
    errors = errors if errors is not None else ImportErrors(columns=PAYMENTS_LAYOUT.columns)
    accounts: dict[str, int] = {}
    for chunk in chunked(sorted({p.account_no for p in payments})):
        accounts.update(Account.objects.filter(account_no__in=chunk).values_list("account_no", "id"))
    posted: dict[str, tuple[str, str, Decimal]] = {}
    for chunk in chunked(sorted({reference_key(p.reference) for p in payments})):
        for reference, account_no, amount in Payment.objects.annotate(key=Lower("reference")).filter(
                key__in=chunk).values_list("reference", "account__account_no", "amount"):
            posted[reference_key(reference)] = (reference, account_no, amount)
    seen: dict[str, tuple[int, str]] = {}
    todo, skipped = [], 0
    for payment in payments:
        line = payment.line
        if payment.amount <= 0 or payment.amount > PAYMENT_MAX:
            errors.add(line=line, field="amount", message=f"${payment.amount:,.2f} is not a payment: more than "
                                                          f"$0.00 and at most ${PAYMENT_MAX:,.2f}")
        try:
            refuse_future(payment.paid_on, field="paid_on", doing="paid")
        except ApplicationError as exc:
            errors.add(line=line, field="paid_on", message=str(exc))
        if payment.account_no not in accounts:
            errors.add(line=line, field="account_no", message=f"unknown account '{payment.account_no}'")
        key = reference_key(payment.reference)
        if key in seen:
            first_line, first = seen[key]
            errors.add(line=line, field="reference",
                       message=f"'{payment.reference}' is also on line {first_line}{_as(first, payment)}; "
                               "each payment needs its own reference")
            continue
        seen[key] = (line, payment.reference)
        if key in posted:
            reference, account_no, amount = posted[key]
            if (account_no, amount) == (payment.account_no, payment.amount):
                skipped += 1
            else:
                errors.add(line=line, field="reference",
                           message=f"'{payment.reference}' is already posted{_as(reference, payment)} as ${amount} "
                                   f"to account {account_no}; a different payment needs its own reference")
            continue
        todo.append(payment)
    errors.raise_if_any()
    try:
        with transaction.atomic():
            created = []
            for p in todo:
                payment = Payment.objects.create(account_id=accounts[p.account_no], amount=Money(p.amount, "USD"),
                                                 paid_on=p.paid_on, reference=p.reference, source=source,
                                                 entered_by=actor)
                ledger_post(Posting(account_id=payment.account_id, kind=LedgerEntry.Kind.PAYMENT,
                                    posted_on=p.paid_on, amount=-p.amount, source=payment_source(payment.pk),
                                    payment_id=payment.pk, description=f"Payment {p.reference}"))
                created.append(payment)
            # A payment dated before penalties already posted (a late bank file) takes back what it paid.
            earliest: dict[int, date] = {}
            for p in todo:
                account_id = accounts[p.account_no]
                earliest[account_id] = min(p.paid_on, earliest.get(account_id, p.paid_on))
            penalties_correct_posted(account_ids=earliest, after=earliest)
            payment_ids = [payment.pk for payment in created]
            account_ids = sorted(earliest)
            transaction.on_commit(lambda: payment_posted.send(sender=Payment, payment_ids=payment_ids,
                                                              account_ids=account_ids))
    except IntegrityError as exc:
        raise Conflict("a payment reference in this batch was posted by someone else at the same moment; "
                       "post the batch again and that payment will be skipped", field="reference") from exc
    return ImportResult(created=len(todo), skipped=skipped)


def _as(reference: str, payment: PaymentIn) -> str:
    """The words " (as 'CHK-100')" when the reference seen before is written in another case, else none."""
    return "" if reference == payment.reference else f" (as '{reference}')"


def payments_import(*, file: ImportSource, as_of: date, actor=None, progress: Progress = False) -> ImportResult:
    """``import_payments``: CSV ``account_no,amount,paid_on,reference``."""
    source = import_source_read(file)
    errors = ImportErrors(columns=PAYMENTS_LAYOUT.columns)
    rows = csv_rows(text=source.text, layout=PAYMENTS_LAYOUT, errors=errors)
    if errors:
        payments_parse(rows, as_of=as_of, errors=errors)  # report the rest of the file's problems too
        errors.raise_if_any()
    return payments_rows_post(rows=rows, as_of=as_of, actor=actor, source="import", progress=progress)
