"""The bank's BAI2 report of the village account, read whole before anything is kept.

Design overview:

* **Checked before it is parsed.** The text is read line by line (``_records``): every line plain ASCII text
  with no control character (a NUL is a damaged transfer), every record a BAI2 record in its place (file header
  01, group 02, account 03, details 16, account trailer 49, group trailer 98, file trailer 99; continuations 88
  belong to the record above), the numbers this product reads are numbers in range: a detail's amount is unsigned
  cents of at most what an amount column holds (``core.limits.MONEY_MAX``), a group's date is a day no later than
  tomorrow. Then the ``bai2`` library reads the fields, and ``_controls`` checks every trailer's control total and
  counts against what the report holds. Each refusal names the report's line and says what to do, in a clerk's
  words; every problem is listed, and nothing is saved from a report with one.
* **Each credit becomes a ``BankDeposit``** with its channel (``_channel``): the lockbox (type 115), a payout of
  the payment processor (its name in the text), a customer's bank bill-pay payment (a bill-pay service named in
  the text: RPPS, CheckFree…), the settlement of an autopay debit file (another ACH credit: 142, 165, 166, 169),
  a counter deposit (301), or other. Reading the same report again adds nothing (each credit's key is unique).
* **Bill pay** (``_billpay_post``): the customer's bank sends the payment with the customer's account number as
  its reference. A credit whose reference (or text) names one of our accounts is posted to it through billing's
  one payment service (tender bill pay, reference ``BPY-<deposit>``, paid the day the bank reports); any other —
  no account named, an account not ours, more than one payment may be — goes to the exceptions queue with why,
  where a clerk posts it or records it sent back, as for the lockbox.
"""

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction

from accounts.selectors import account_find
from billing.models import Payment
from billing.services.payments import PaymentIn, payments_post
from core.clock import today as today_here
from core.csvimport import control_problem
from core.errors import ApplicationError, FieldError
from core.limits import MONEY_MAX
from core.money import PAYMENT_MAX

from .models import BankDeposit, PaymentException

CENTS = Decimal(100)
MAX_CENTS = int(MONEY_MAX * CENTS)
LOCKBOX_TYPES = {"115"}
ACH_TYPES = {"142", "165", "166", "169"}
COUNTER_TYPES = {"301"}
PROCESSOR_WORDS = ("STRIPE",)
ERRORS_LISTED = 50

NAMES = {"01": "file header", "02": "group header", "03": "account header", "16": "transaction detail",
         "49": "account trailer", "88": "continuation", "98": "group trailer", "99": "file trailer"}
# What may follow each record (a continuation 88 belongs to the record above it and is not a step).
FOLLOWS = {None: {"01"}, "01": {"02"}, "02": {"03"}, "03": {"16", "49"}, "16": {"16", "49"}, "49": {"03", "98"},
           "98": {"02", "99"}, "99": set()}
UNSIGNED = re.compile(r"\d{1,18}", re.ASCII)
SIGNED = re.compile(r"[+-]?\d{1,18}", re.ASCII)
TYPE_CODE = re.compile(r"\d{3}", re.ASCII)
SEND_AGAIN = "ask the bank to send the report again"


@dataclass(frozen=True)
class _Record:
    line: int  # the report's line the record starts on
    code: str
    rows: int  # physical lines, with its continuations
    fields: list[str]


def _read(report: str | bytes) -> str:
    if isinstance(report, str):
        return report
    try:
        return report.decode("ascii")
    except UnicodeDecodeError as exc:
        line = report[:exc.start].count(b"\n") + 1
        raise ApplicationError(errors=[FieldError(
            "file", f"byte 0x{report[exc.start]:02X} is not plain text; a BAI2 report is plain ASCII text — "
                    f"{SEND_AGAIN}", line=line)]) from None


def _fields(rows: list[str]) -> list[str]:
    """A record's fields over its continuations, as the ``bai2`` library joins them."""
    joined = ""
    for row in rows:
        joined += row[:-1] + "," if row.endswith("/") else row + " "
    return joined[:-1].split(",")


def _records(text: str, errors: list[FieldError]) -> list[_Record]:
    """The report's records, each with the line it starts on; problems of line and order go to ``errors``."""
    records: list[_Record] = []
    raw: list[tuple[int, str, list[str]]] = []
    last_line = 0
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        last_line = number
        problem = control_problem(line)
        if problem:
            errors.append(FieldError("file", f"{problem.replace('; type the value again without it', '')}: the "
                                             f"report was damaged in transfer — {SEND_AGAIN}", line=number))
            continue
        code = line[:2]
        if code not in NAMES or line[2:3] != ",":
            errors.append(FieldError("record", f"'{line[:12]}' is not a BAI2 record (each begins with its type: 01, "
                                               f"02, 03, 16, 49, 88, 98 or 99 and a comma)", line=number))
            continue
        if code == "88":
            if not raw:
                errors.append(FieldError("record", "a continuation (88) with no record above it", line=number))
            else:
                raw[-1][2].append(line[3:])
            continue
        raw.append((number, code, [line[3:]]))
    before = None
    for number, code, rows in raw:
        if code not in FOLLOWS[before]:
            after = f"after the {NAMES[before]} ({before})" if before else "at the start of the report"
            errors.append(FieldError("record", f"a {NAMES[code]} ({code}) cannot come {after}: the report is out "
                                               f"of order or not a whole report — {SEND_AGAIN}", line=number))
            return records
        before = code
        records.append(_Record(number, code, len(rows), _fields(rows)))
    if before != "99" and not errors:
        where = f"at line {last_line}" if last_line else "before any record"
        errors.append(FieldError("file", f"the report ends {where} without its file trailer (99): it was cut short "
                                         f"in transfer — {SEND_AGAIN}", line=last_line or None))
    return records


def _field(record: _Record, index: int) -> str:
    return record.fields[index].strip() if index < len(record.fields) else ""


def _values_check(records: list[_Record], *, latest: date, errors: list[FieldError]) -> None:
    """The fields this product reads, each a value in range, before the library reads them."""
    for record in records:
        if record.code == "01" and _field(record, 7) != "2":
            errors.append(FieldError("version", f"the report is BAI version '{_field(record, 7)[:5]}'; only version 2 "
                                                "is read — ask the bank for BAI2", line=record.line))
        elif record.code == "02":
            _date_check(record, latest=latest, errors=errors)
        elif record.code == "16":
            _detail_check(record, errors)
        elif record.code in ("49", "98", "99"):
            for index, what in enumerate(("control total", "count", "count of records")
                                         if record.code != "49" else ("control total", "count of records")):
                value = _field(record, index)
                if value and not SIGNED.fullmatch(value):
                    errors.append(FieldError(what, f"'{value[:20]}' in the {NAMES[record.code]} is not a whole "
                                                   f"number — {SEND_AGAIN}", line=record.line))
        elif record.code == "03":
            number = _field(record, 0)
            if not number or len(number) > 40:
                errors.append(FieldError("account", f"the bank account number '{number[:50]}' is "
                                                    f"{'missing' if not number else 'longer than 40 characters'}",
                                         line=record.line))
            currency = _field(record, 1)
            if currency not in ("", "USD"):
                errors.append(FieldError("currency", f"the account reports in {currency[:5]}; only US dollars (USD) "
                                                     "are read", line=record.line))


def _date_check(record: _Record, *, latest: date, errors: list[FieldError]) -> None:
    from bai2.utils import parse_date

    value = _field(record, 3)
    try:
        day = parse_date(value)
    except ValueError:
        errors.append(FieldError("as_of_date", f"'{value[:10]}' in the group header is not a date (YYMMDD) — "
                                               f"{SEND_AGAIN}", line=record.line))
        return
    if day > latest:
        errors.append(FieldError("as_of_date", f"the report is as of {day:%Y-%m-%d}, after tomorrow "
                                               f"({latest:%Y-%m-%d}); a bank reports what has happened — check the "
                                               "file's date with the bank", line=record.line))
    currency = _field(record, 5)
    if currency not in ("", "USD"):
        errors.append(FieldError("currency", f"the group reports in {currency[:5]}; only US dollars (USD) are read",
                                 line=record.line))


def _detail_check(record: _Record, errors: list[FieldError]) -> None:
    type_code, amount, funds = _field(record, 0), _field(record, 1), _field(record, 2)
    if not TYPE_CODE.fullmatch(type_code):
        errors.append(FieldError("type_code", f"'{type_code[:10]}' is not a BAI2 type code (three digits)",
                                 line=record.line))
    if amount.startswith(("-", "+")):
        errors.append(FieldError("amount", f"'{amount[:20]}' has a sign; a detail's amount is unsigned — a credit is "
                                           f"never negative (a debit has a debit type code) — {SEND_AGAIN}",
                                 line=record.line))
    elif not UNSIGNED.fullmatch(amount):
        errors.append(FieldError("amount", f"'{amount[:20]}' is not an amount in cents (digits 0-9 only) — "
                                           f"{SEND_AGAIN}", line=record.line))
    elif int(amount) > MAX_CENTS:
        errors.append(FieldError("amount", f"{int(amount):,} cents is more than an amount can be here (at most "
                                           f"${MONEY_MAX:,.2f}); the report is damaged — {SEND_AGAIN}",
                                 line=record.line))
    if funds not in ("", "Z", "0", "1", "2", "S", "V", "D"):
        errors.append(FieldError("funds_type", f"'{funds[:5]}' is not a BAI2 funds type (Z, 0, 1, 2, S, V or D)",
                                 line=record.line))


def _parse(text: str, records: list[_Record]):
    """The library's reading of a report ``_records`` found whole and in order."""
    from bai2 import bai2

    try:
        return bai2.parse_from_string(text, check_integrity=False)
    except Exception as exc:  # noqa: BLE001 - the library raises ValueErrors and its own errors
        detail = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise ApplicationError(errors=[FieldError(
            "file", f"the report could not be read as BAI2 ({detail}) — {SEND_AGAIN}")]) from None


def _controls(report, records: list[_Record], errors: list[FieldError]) -> list[tuple[int, object, object, date]]:
    """Every trailer's totals and counts against what the report holds; the details, each with its line."""
    lines = iter(records)
    details = []

    def check(record: _Record, what: str, stated, found, money=False) -> None:
        if stated != found:
            said = (f"${Decimal(stated or 0) / CENTS:,.2f} but its records add up to ${Decimal(found) / CENTS:,.2f}"
                    if money else f"{stated} but there are {found}")
            errors.append(FieldError(what.replace(" ", "_"), f"the {NAMES[record.code]} gives the {what} as {said}: "
                                                             f"the report is not whole — {SEND_AGAIN}",
                                     line=record.line))

    file_header = next(lines)
    file_rows = file_header.rows
    for group in report.children:
        group_header = next(lines)
        group_rows, group_total = group_header.rows, 0
        for account in group.children:
            account_header = next(lines)
            account_rows = account_header.rows
            total = sum(s.amount or 0 for s in account.header.summary_items)
            for detail in account.children:
                record = next(lines)
                account_rows += record.rows
                total += detail.amount or 0
                details.append((record.line, account, detail, group.header.as_of_date))
            trailer = next(lines)
            account_rows += trailer.rows
            check(trailer, "control total", account.trailer.account_control_total, total, money=True)
            check(trailer, "number of records", account.trailer.number_of_records, account_rows)
            group_rows += account_rows
            group_total += account.trailer.account_control_total or 0
        trailer = next(lines)
        group_rows += trailer.rows
        check(trailer, "control total", group.trailer.group_control_total, group_total, money=True)
        check(trailer, "number of accounts", group.trailer.number_of_accounts, len(group.children))
        check(trailer, "number of records", group.trailer.number_of_records, group_rows)
        file_rows += group_rows
    trailer = next(lines)
    file_rows += trailer.rows
    check(trailer, "control total", report.trailer.file_control_total,
          sum(g.trailer.group_control_total or 0 for g in report.children), money=True)
    check(trailer, "number of groups", report.trailer.number_of_groups, len(report.children))
    check(trailer, "number of records", report.trailer.number_of_records, file_rows)
    return details


def _refuse(errors: list[FieldError]) -> None:
    if errors:
        raise ApplicationError(errors=errors[:ERRORS_LISTED], unlisted=max(0, len(errors) - ERRORS_LISTED))


def _channel(type_code: str, words: str) -> str:
    words = words.upper()
    if type_code in LOCKBOX_TYPES:
        return BankDeposit.Channel.LOCKBOX
    if any(w in words for w in PROCESSOR_WORDS):
        return BankDeposit.Channel.PROCESSOR
    if any(w.upper() in words for w in settings.BANK_BILLPAY_WORDS):
        return BankDeposit.Channel.BILLPAY
    if type_code in ACH_TYPES:
        return BankDeposit.Channel.AUTOPAY
    if type_code in COUNTER_TYPES:
        return BankDeposit.Channel.COUNTER
    return BankDeposit.Channel.OTHER


@dataclass(frozen=True)
class BankImported:
    added: int
    skipped: int
    billpay_posted: int = 0
    billpay_queued: int = 0

    def __str__(self) -> str:
        said = f"{self.added} credit(s) added, {self.skipped} already read"
        if self.billpay_posted or self.billpay_queued:
            said += (f"; bill pay: {self.billpay_posted} posted, {self.billpay_queued} to the exceptions queue")
        return said


def bai2_import(report: str | bytes, *, actor=None, today: date | None = None) -> BankImported:
    """Read a BAI2 report's credits; a report with any problem is refused whole, each problem with its line."""
    from bai2.constants import TypeCodeTransaction

    text = _read(report)
    errors: list[FieldError] = []
    records = _records(text, errors)
    _refuse(errors)
    _values_check(records, latest=(today or today_here()) + timedelta(days=1), errors=errors)
    _refuse(errors)
    parsed = _parse(text, records)
    details = _controls(parsed, records, errors)
    for line, _account, detail, _day in details:
        for what, value in (("bank reference", detail.bank_reference),
                            ("customer reference", detail.customer_reference)):
            if len(value or "") > 80:
                errors.append(FieldError(what.replace(" ", "_"), f"the {what} is {len(value)} characters long; at "
                                                                 "most 80 are read", line=line))
    _refuse(errors)
    rows, seen = [], Counter()
    for _line, account, detail, posted_on in details:
        if detail.type_code is None or detail.type_code.transaction != TypeCodeTransaction.credit:
            continue
        number = str(account.header.customer_account_number or "")
        amount = Decimal(int(detail.amount or 0)) / CENTS
        bank_ref, customer_ref = (detail.bank_reference or "").strip(), (detail.customer_reference or "").strip()
        words = " ".join(str(w) for w in (customer_ref, detail.text) if w)
        identity = (posted_on.isoformat(), number, detail.type_code.code, bank_ref, customer_ref, f"{amount:.2f}")
        seen[identity] += 1
        rows.append(BankDeposit(
            posted_on=posted_on, bank_account=number, type_code=detail.type_code.code,
            description=(detail.type_code.description or "")[:80], amount=amount, bank_reference=bank_ref,
            customer_reference=customer_ref, text=(detail.text or "").strip()[:200],
            channel=_channel(detail.type_code.code, words), key="|".join((*identity, str(seen[identity])))))
    with transaction.atomic():
        known = set(BankDeposit.objects.filter(key__in=[r.key for r in rows]).values_list("key", flat=True))
        fresh = BankDeposit.objects.bulk_create([r for r in rows if r.key not in known])
        posted = queued = 0
        for deposit in fresh:
            if deposit.channel == BankDeposit.Channel.BILLPAY:
                if _billpay_post(deposit, actor=actor):
                    posted += 1
                else:
                    queued += 1
    return BankImported(added=len(fresh), skipped=len(rows) - len(fresh), billpay_posted=posted,
                        billpay_queued=queued)


def _billpay_account(deposit: BankDeposit):
    """The account a bill-pay credit names (its customer reference, else a word of its text), or why none."""
    for said in (deposit.customer_reference, *deposit.text.split()):
        account = account_find(said) if said else None
        if account is not None:
            return account, ""
    if deposit.customer_reference:
        return None, f"the reference '{deposit.customer_reference}' names no account of ours"
    return None, "the bank's credit names no account (a bill-pay service's lump sum: post it by its remittance list)"


def _billpay_post(deposit: BankDeposit, *, actor) -> bool:
    """Post a bill-pay credit to the account it names (True), or queue it with why (False)."""
    reference = f"BPY-{deposit.pk}"
    account, why = _billpay_account(deposit)
    amount = deposit.amount.amount
    if account is not None and amount > PAYMENT_MAX:
        why = f"${amount:,.2f} is more than a single payment may be (at most ${PAYMENT_MAX:,.2f})"
    if not why:
        try:
            with transaction.atomic():
                payments_post(payments=[PaymentIn(account.account_no, amount, deposit.posted_on, reference,
                                                  tender=Payment.Tender.BILL_PAY)], actor=actor, source="billpay")
        except ApplicationError as exc:
            why = f"account {account.account_no}: {exc.errors[0].message if exc.errors else exc}"
        else:
            deposit.payment = Payment.objects.get(reference=reference)
            deposit.save(update_fields=["payment"])
            return True
    PaymentException.objects.create(
        source="billpay", tender=Payment.Tender.BILL_PAY, reference=reference, received_on=deposit.posted_on,
        amount=amount, read=" ".join(w for w in (deposit.customer_reference, deposit.text) if w)[:200],
        reason=why[:200])
    return False
