"""Posting payments. A payment reference is unique: the same reference again is skipped when it is the
same payment, and refused when it differs (the database's unique key makes it true under concurrency)."""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

from django.db import IntegrityError, transaction
from django.utils import timezone
from djmoney.money import Money

from accounts.models import Account
from waterbilling.errors import ApplicationError, Conflict, FieldError

from ..models import LedgerEntry, Payment


@dataclass(frozen=True)
class PaymentRow:
    account_no: str
    amount: str
    paid_on: str
    reference: str
    line: int | None = None


@dataclass
class PaymentBatchResult:
    posted: list[Payment]
    skipped: list[str]

    @property
    def total(self) -> Decimal:
        return sum((p.amount.amount for p in self.posted), Decimal("0.00"))


def _validate(rows: list[PaymentRow], *, as_of: date) -> tuple[list[tuple], list[str], list[FieldError]]:
    errors: list[FieldError] = []
    accounts = dict(Account.objects.filter(account_no__in={r.account_no.strip() for r in rows})
                    .values_list("account_no", "id"))
    existing = {ref: (acct, amt) for ref, acct, amt in Payment.objects.filter(
        reference__in={r.reference.strip() for r in rows}).values_list("reference", "account__account_no", "amount")}
    seen: dict[str, int | None] = {}
    good, skipped = [], []
    for row in rows:
        row_errors = []
        account_no, reference = row.account_no.strip(), row.reference.strip()
        if account_no not in accounts:
            row_errors.append(FieldError("account_no", f"unknown account '{account_no}'", row.line))
        try:
            amount = Decimal(row.amount.strip().replace("$", "").replace(",", ""))
            if not amount.is_finite():
                raise InvalidOperation
            if amount <= 0:
                row_errors.append(FieldError("amount", f"'{row.amount}' must be more than zero", row.line))
            elif amount != amount.quantize(Decimal("0.01")):
                row_errors.append(FieldError("amount", f"'{row.amount}' has fractions of a cent", row.line))
        except InvalidOperation:
            amount = None
            row_errors.append(FieldError("amount", f"'{row.amount}' is not an amount of dollars", row.line))
        try:
            paid_on = date.fromisoformat(row.paid_on.strip())
            if paid_on > as_of:
                row_errors.append(FieldError("paid_on", f"{paid_on} is after the import date {as_of}", row.line))
        except ValueError:
            paid_on = None
            row_errors.append(FieldError("paid_on", f"'{row.paid_on}' is not a date (YYYY-MM-DD)", row.line))
        if not reference:
            row_errors.append(FieldError("reference", "is required (it keeps a payment from posting twice)",
                                         row.line))
        elif reference in seen:
            row_errors.append(FieldError("reference", f"'{reference}' appears twice in this file "
                                         f"(line {seen[reference]})", row.line))
        else:
            seen[reference] = row.line
        if not row_errors and reference in existing:
            posted_account, posted_amount = existing[reference]
            if posted_account == account_no and posted_amount.amount == amount:
                skipped.append(reference)
                continue
            row_errors.append(FieldError(
                "reference", f"'{reference}' is already posted as {posted_amount} to account {posted_account}; "
                "a different payment needs its own reference", row.line))
        errors.extend(row_errors)
        if not row_errors:
            good.append((accounts[account_no], amount, paid_on, reference))
    return good, skipped, errors


def payments_post(*, rows: list[PaymentRow], as_of: date, actor=None, source: str = "import") -> PaymentBatchResult:
    """All or nothing: every bad row is reported and nothing is posted."""
    good, skipped, errors = _validate(rows, as_of=as_of)
    if errors:
        raise ApplicationError(errors=errors)
    posted = []
    try:
        with transaction.atomic():
            for account_id, amount, paid_on, reference in good:
                payment = Payment.objects.create(account_id=account_id, amount=Money(amount, "USD"),
                                                 paid_on=paid_on, reference=reference, source=source,
                                                 entered_by=actor)
                LedgerEntry.objects.create(account_id=account_id, kind=LedgerEntry.Kind.PAYMENT, posted_on=paid_on,
                                           amount=Money(-amount, "USD"), payment=payment,
                                           description=f"Payment {reference}")
                posted.append(payment)
    except IntegrityError as exc:
        raise Conflict("a payment reference in this batch was posted by someone else at the same time; "
                       "import the file again to skip it", field="reference") from exc
    return PaymentBatchResult(posted=posted, skipped=skipped)


def payment_post(*, account: Account, amount: Decimal, paid_on: date, reference: str, actor=None,
                 source: str = "counter") -> Payment | None:
    """Post one payment; returns None when the same reference was already posted for the same payment."""
    result = payments_post(rows=[PaymentRow(account.account_no, str(amount), paid_on.isoformat(), reference)],
                           as_of=timezone.localdate(), actor=actor, source=source)
    return result.posted[0] if result.posted else None
