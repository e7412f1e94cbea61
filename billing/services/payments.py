"""Posting payments: one at a time at the counter, a batch from the admin, or a file from the bank.

Every path parses into ``PaymentIn`` and goes through ``payments_post`` (``payment_post`` for one): all
or nothing, every bad row named. A payment reference is
unique whatever its case — a clerk retyping "chk-100" for "CHK-100" means the same check: the same
reference again is skipped when it is the same payment (same account and amount), and refused when it
differs; the database's unique key on the lower-cased reference keeps that true under concurrency.

Every payment says how it was tendered (``Payment.tender``: cash, check, card, or a bank file) and, for a
check, its number: the counter's drawer is counted by tender at the end of the day (``billing.cash``). A
file from the bank is ``bank_file``; the admin's batch page and the API default to ``check`` (what a payment
was before tenders were recorded). The counter refuses a check without its number (``payment_counter_post``);
a file or the API may leave it blank. Each posting answers with its counts and the dollars it posted, by
tender (``PaymentsPosted``).
"""

from collections import defaultdict
from dataclasses import dataclass, field, replace
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
    dollars,
    dollars_at_most,
    identifier,
    import_source_read,
    iso_date_until,
    one_of,
    progress_bar,
)
from core.errors import ApplicationError, Conflict
from core.money import PAYMENT_MAX, ZERO, fmt_dollars

from ..ledger.posting import Posting, ledger_post, payment_source
from ..models import LedgerEntry, Payment
from ..signals import payment_posted
from .penalties import penalties_correct_posted

PAYMENTS_LAYOUT = CsvLayout(required=("account_no", "amount", "paid_on", "reference"))
payment_amount = dollars_at_most(PAYMENT_MAX, what="a single payment")
_account_no = identifier(max_length=Account._meta.get_field("account_no").max_length)
_reference = identifier(max_length=Payment._meta.get_field("reference").max_length)
_check_number = identifier(max_length=Payment._meta.get_field("check_number").max_length, required=False)
# The columns a payment row may hold besides the file's: the batch page and the API name the tender too.
PAYMENT_FIELDS = (*PAYMENTS_LAYOUT.columns, "tender", "check_number")
TENDER = Payment.Tender


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
    tender: str = TENDER.CHECK
    check_number: str = ""
    tendered: Decimal | None = None  # cash handed over at the counter


@dataclass(frozen=True)
class PaymentsPosted(ImportResult):
    """What a posting did: the payments posted and skipped, the dollars posted, and those by tender
    (``(tender, count, total)``, in the order of ``Payment.Tender``)."""

    total: Decimal = ZERO
    by_tender: tuple[tuple[str, int, Decimal], ...] = field(default=())

    def __str__(self) -> str:
        said = f"{super().__str__()}; {fmt_dollars(self.total)} posted"
        if len(self.by_tender) > 1:
            said += " (" + ", ".join(f"{TENDER(t).label.lower()}: {count} for {fmt_dollars(total)}"
                                     for t, count, total in self.by_tender) + ")"
        return said


def payments_parse(rows: list[CsvRow], *, as_of: date, errors: ImportErrors, progress: Progress = False,
                   tender: str = TENDER.CHECK) -> list[PaymentIn]:
    """Rows (from a file, the batch page or the API) to payments; problems go to ``errors`` by line and column.
    A row's ``tender`` and ``check_number`` may be left off: ``tender`` is then the one given here."""
    parsed = []
    paid_on_parse = iso_date_until(as_of)
    tender_parse = one_of(TENDER.values, default=tender or None)
    for row in progress_bar(rows, enabled=progress, desc="checking payments", total=len(rows)):
        before = len(errors)
        account_no = errors.parse(row, "account_no", _account_no)
        amount = errors.parse(row, "amount", payment_amount)
        paid_on = errors.parse(row, "paid_on", paid_on_parse)
        reference = errors.parse(row, "reference", _reference)
        row_tender = errors.parse(row, "tender", tender_parse)
        check_number = errors.parse(row, "check_number", _check_number)
        if len(errors) == before:
            parsed.append(PaymentIn(account_no, amount, paid_on, reference, line=row.line, tender=row_tender,
                                    check_number=check_number))
    return parsed


def payments_rows_post(*, rows: list[CsvRow], as_of: date, actor=None, source: str, progress: Progress = False,
                       tender: str = TENDER.CHECK) -> "PaymentsPosted":
    """Parse rows, then post them with ``payments_post``: every bad row is named, and nothing is posted
    unless all are good. ``tender`` is the tender of a row that names none."""
    errors = ImportErrors(columns=PAYMENT_FIELDS)
    parsed = payments_parse(rows, as_of=as_of, errors=errors, progress=progress, tender=tender)
    return payments_post(payments=parsed, actor=actor, source=source, errors=errors)


def payment_post(*, account_no: str, amount: Decimal, paid_on: date, reference: str, actor=None,
                 source: str = "counter", tender: str = TENDER.CHECK, check_number: str = "") -> "PaymentsPosted":
    """One payment (a test, a transfer): the same checks and posting as a batch of one."""
    return payments_post(payments=[PaymentIn(account_no, amount, paid_on, reference, tender=tender,
                                             check_number=check_number)], actor=actor, source=source)


def payments_post(*, payments: list[PaymentIn], actor=None, source: str,
                  errors: ImportErrors | None = None, require_check_number: bool = False) -> "PaymentsPosted":
    """Post payments all or nothing; a reference already posted for the same payment is skipped.

    ``errors`` may already hold what parsing found; every problem is reported together, and any problem
    posts nothing. ``require_check_number``: a check without its number is refused (the counter)."""
    errors = errors if errors is not None else ImportErrors(columns=PAYMENT_FIELDS)
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
        if payment.tender not in TENDER.values:
            errors.add(line=line, field="tender", message=f"'{payment.tender}' is not a tender; one of "
                                                          f"{', '.join(TENDER.values)}")
        elif payment.check_number and payment.tender != TENDER.CHECK:
            errors.add(line=line, field="check_number",
                       message="a check number goes with a check; this payment is "
                               f"{TENDER(payment.tender).label.lower()}")
        elif require_check_number and payment.tender == TENDER.CHECK and not payment.check_number:
            errors.add(line=line, field="check_number", message="is required for a check: the number on the check")
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
                                                 tender=p.tender, check_number=p.check_number, entered_by=actor,
                                                 tendered=p.tendered)
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
    by_tender: dict[str, list[Decimal]] = defaultdict(list)
    for p in todo:
        by_tender[p.tender].append(p.amount)
    return PaymentsPosted(created=len(todo), skipped=skipped, total=sum((p.amount for p in todo), ZERO),
                          by_tender=tuple((t, len(by_tender[t]), sum(by_tender[t], ZERO))
                                          for t in TENDER.values if t in by_tender))


def _as(reference: str, payment: PaymentIn) -> str:
    """The words " (as 'CHK-100')" when the reference seen before is written in another case, else none."""
    return "" if reference == payment.reference else f" (as '{reference}')"


def payments_import(*, file: ImportSource, as_of: date, actor=None, progress: Progress = False) -> "PaymentsPosted":
    """``import_payments``: CSV ``account_no,amount,paid_on,reference``; every payment of a file is ``bank_file``."""
    source = import_source_read(file)
    errors = ImportErrors(columns=PAYMENTS_LAYOUT.columns)
    rows = csv_rows(text=source.text, layout=PAYMENTS_LAYOUT, errors=errors)
    # The file's columns are the contract's: a row naming a tender of its own is not a bank file's.
    rows = [CsvRow(line=row.line, values={k: row[k] for k in PAYMENTS_LAYOUT.columns}) for row in rows]
    if errors:
        payments_parse(rows, as_of=as_of, errors=errors)  # report the rest of the file's problems too
        errors.raise_if_any()
    return payments_rows_post(rows=rows, as_of=as_of, actor=actor, source="import", progress=progress,
                              tender=TENDER.BANK_FILE)


# --- the counter ---------------------------------------------------------------------------------------

COUNTER_PREFIX = "CTR"


def counter_reference_propose(*, on: date) -> str:
    """A reference for a counter payment the clerk gave none: ``CTR-<date>-<n>``, the day's next free number."""
    stem = f"{COUNTER_PREFIX}-{on:%Y%m%d}-"
    taken = {reference_key(r) for r in Payment.objects.filter(reference__istartswith=stem)
             .values_list("reference", flat=True)}
    n = len(taken) + 1
    while reference_key(f"{stem}{n}") in taken:
        n += 1
    return f"{stem}{n}"


def payment_counter_post(*, account_no: str, amount: str, paid_on: str, tender: str, check_number: str = "",
                         reference: str = "", as_of: date, actor, tendered: str = "") -> Payment:
    """A payment taken at the counter: the clerk's typed fields, checked like a row of a file, and a check
    refused without its number. A blank reference gets one (``counter_reference_propose``). Posting the same
    counter payment twice (the Post button pressed again) posts it once: the payment on file is returned."""
    values = {"account_no": account_no.strip(), "amount": amount.strip(), "paid_on": paid_on.strip(),
              "reference": reference.strip(), "tender": tender.strip(), "check_number": check_number.strip()}
    if values["tender"] == TENDER.BANK_FILE:
        raise ApplicationError("a bank file is not tendered at the counter: cash, check or card", field="tender")
    proposed = not values["reference"]
    for attempt in range(3):
        if proposed:
            values["reference"] = counter_reference_propose(on=as_of)
        errors = ImportErrors(columns=PAYMENT_FIELDS)
        parsed = payments_parse([CsvRow(line=0, values=values)], as_of=as_of, errors=errors, tender="")
        if tendered.strip():
            parsed = [replace(p, tendered=_tendered(tendered, p)) for p in parsed]
        try:
            payments_post(payments=parsed, actor=actor, source="counter", errors=errors, require_check_number=True)
        except Conflict:
            if not proposed or attempt == 2:
                raise
            continue  # another clerk took the proposed reference at the same moment: propose the next
        except ApplicationError as exc:
            # One payment: its errors are the fields', not a file's lines.
            exc.errors = [type(e)(field=e.field, message=e.message) for e in exc.errors]
            raise
        return Payment.objects.get(reference__iexact=values["reference"])
    raise AssertionError("unreachable")


def _tendered(typed: str, payment: PaymentIn) -> Decimal:
    """The cash handed over: only for cash, and at least the payment."""
    if payment.tender != TENDER.CASH:
        raise ApplicationError("is for cash only: what the customer handed over", field="tendered")
    try:
        handed = dollars(typed.strip())
    except ValueError as exc:
        raise ApplicationError(str(exc), field="tendered") from None
    if handed < payment.amount:
        raise ApplicationError(f"{fmt_dollars(handed)} is less than the payment of {fmt_dollars(payment.amount)}",
                               field="tendered")
    return handed
