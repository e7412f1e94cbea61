"""The back office's services: refunds of credits, transfers between an owner's accounts, one-off invoices, and
the day's close. Each refuses with every problem named by its field and changes nothing; what reaches the ledger
goes through billing's one writer (``billing.ledger.posting``) and its adjustment service."""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.db import transaction
from django.utils import timezone
from djmoney.money import Money

from accounts.models import Account
from billing.balances import balances
from billing.cash import cash_day
from billing.clearing import Refundable, refundable_credit
from billing.ledger.posting import Posting, invoice_source, ledger_post, refund_source
from billing.models import LedgerEntry
from billing.services.adjustments import balance_transfer
from billing.services.charges import charge_terms
from billing.services.penalties import penalties_correct_posted
from core.approval import approval_decide, approval_problems
from core.clock import refuse_future
from core.dates import fmt_day
from core.db import lock_in_order
from core.errors import ApplicationError, FieldError
from core.money import ZERO, fmt_dollars

from .models import DayClose, DayReopen, Invoice, Refund, Transfer

APPROVE_REFUND = Refund.approval.permission
NOTE_MAX = 2000
INVOICE_DUE_MOST_DAYS = 90


def _raise(errors: list[FieldError]) -> None:
    if errors:
        raise ApplicationError(errors=errors)


def _day_problems(day: date, *, field: str, doing: str) -> list[FieldError]:
    try:
        refuse_future(day, field=field, doing=doing)
    except ApplicationError as exc:
        return exc.errors
    return []


def _locked(*accounts: Account) -> list[Account]:
    """Lock the accounts' rows (in id order, as every writer does) so no payment or run changes their books while a
    balance is checked and moved; the accounts as they are now, in the order given."""
    rows = {a.pk: a for a in lock_in_order(Account.objects.select_related("owner").filter(
        pk__in=[a.pk for a in accounts]))}
    return [rows[a.pk] for a in accounts]


def account_credit(account: Account, *, as_of: date) -> Refundable:
    """What the account holds for the customer at the end of ``as_of`` (its credit balance, 0.00 when it owes) and
    what of it may be paid out: cleared money only (``billing.clearing``)."""
    return refundable_credit(account.pk, as_of=as_of)


def _credit_problems(account: Account, amount: Decimal, *, as_of: date, field: str, asked: str) -> list[FieldError]:
    """A refund of ``amount`` refused when the account's credit is less, or when part of it is money not yet
    cleared (naming each payment and the day it clears)."""
    credit = account_credit(account, as_of=as_of)
    if amount > credit.credit:
        return [FieldError(field=field, message=(
            f"{fmt_dollars(amount)} is more than account {account.account_no}'s credit on {fmt_day(as_of)} "
            f"({fmt_dollars(credit.credit)}); {asked}"))]
    if amount > credit.amount:
        return [FieldError(field=field, message=(
            f"{fmt_dollars(amount)} is more than the cleared part of account {account.account_no}'s credit on "
            f"{fmt_day(as_of)} ({fmt_dollars(credit.amount)}): {credit.words}. Money that may still come back is "
            "not paid out; ask again once it clears"))]
    return []


# --- refunds ---------------------------------------------------------------------------------------------------

@transaction.atomic(durable=True)
def refund_request(*, account: Account, amount: Decimal, reason: str, as_of: date, actor, payee_name: str = "",
                   payee_address: str = "") -> Refund:
    """A clerk asks to pay back ``amount`` of the account's credit; it waits for a supervisor. The check goes to
    the owner at the mailing address on file unless another payee is given."""
    errors = _day_problems(as_of, field="requested_on", doing="asked for")
    _locked(account)
    if amount <= ZERO:
        errors.append(FieldError(field="amount", message="is more than 0.00"))
    else:
        errors += _credit_problems(account, amount, as_of=as_of, field="amount",
                                   asked="only money the customer paid over what was owed is refunded")
    reason = (reason or "").strip()
    if not reason:
        errors.append(FieldError(field="reason", message="a refund needs a reason (kept for the audit)"))
    elif len(reason) > NOTE_MAX:
        errors.append(FieldError(field="reason", message=f"is {len(reason):,} characters; at most {NOTE_MAX:,}"))
    if Refund.objects.filter(account=account, status=Refund.Status.PENDING).exists():
        errors.append(FieldError(field="account_no", message=f"account {account.account_no} already has a refund "
                                                             "waiting for a supervisor"))
    payee_name = (payee_name or "").strip() or account.owner.name
    payee_address = (payee_address or "").strip() or account.owner.mailing_address
    if not payee_address.strip():
        errors.append(FieldError(field="payee_address", message="the check needs an address to be mailed to"))
    _raise(errors)
    return Refund.objects.create(account=account, amount=Money(amount, "USD"), payee_name=payee_name[:200],
                                 payee_address=payee_address, reason=reason, requested_on=as_of, requested_by=actor)


@transaction.atomic(durable=True)
def refund_decide(*, refund: Refund, approve: bool, note: str, as_of: date, actor) -> Refund:
    """A supervisor, not the clerk who asked, approves or refuses a waiting refund (a refusal says why). The
    approval posts the refund on the ledger on ``as_of`` and puts it on the check register; it is refused when the
    credit is no longer there (a bill or a returned payment has used it since)."""
    refund = Refund.objects.select_for_update().select_related("account").get(pk=refund.pk)
    errors = approval_problems(refund, approve=approve, note=note, actor=actor)
    _raise([e for e in errors if e.field == "status"])  # a decided refund: nothing else matters
    errors += _day_problems(as_of, field="refunded_on", doing="refunded")
    if as_of < refund.requested_on:
        errors.append(FieldError(field="refunded_on", message=f"{as_of} is before the refund was asked for "
                                                              f"({refund.requested_on})"))
    amount = refund.amount.amount
    if approve and not errors:
        _locked(refund.account)
        errors += _credit_problems(refund.account, amount, as_of=as_of, field="amount",
                                   asked="a bill or a returned payment has used it since: refuse this refund and ask "
                                         "again for what is there")
    _raise(errors)
    refund = approval_decide(refund, approve=approve, note=note, actor=actor,
                             changes={"refunded_on": as_of if approve else None})
    if approve:
        ledger_post(Posting(account_id=refund.account_id, kind=LedgerEntry.Kind.REFUND, posted_on=as_of,
                            amount=amount, source=refund_source(refund.pk),
                            description=f"Credit refunded by check to {refund.payee_name} (refund {refund.number})"))
        penalties_correct_posted(account_ids=[refund.account_id], after={refund.account_id: as_of})
    return refund


CHECK_REGISTER_HEADER = ("voucher", "approved_on", "payee", "address", "account_no", "amount", "memo",
                         "requested_by", "approved_by")


def _person(user) -> str:
    return (user.get_full_name() or user.get_username()) if user is not None else ""


def _one_line(address: str) -> str:
    return ", ".join(line.strip() for line in address.splitlines() if line.strip())


def check_register_rows(*, start: date, end: date) -> list[list[str]]:
    """The refunds approved from ``start`` to ``end`` as accounts payable draws the checks: a header, one row per
    check (the address on one line), and the total."""
    if end < start:
        raise ApplicationError(f"{end} is before {start}", field="end")
    refunds = list(Refund.objects.filter(status=Refund.Status.APPROVED, refunded_on__range=(start, end))
                   .select_related("account", "requested_by", "decided_by").order_by("refunded_on", "id"))
    rows = [list(CHECK_REGISTER_HEADER)]
    rows += [[r.number, r.refunded_on.isoformat(), r.payee_name, _one_line(r.payee_address),
              r.account.account_no, f"{r.amount.amount:.2f}", f"Refund of water account credit {r.account.account_no}",
              _person(r.requested_by), _person(r.decided_by)] for r in refunds]
    total = sum((r.amount.amount for r in refunds), ZERO)
    rows.append(["Total", "", f"{len(refunds)} check{'' if len(refunds) == 1 else 's'}", "", "", f"{total:.2f}",
                 "", "", ""])
    return rows


# --- transfers -------------------------------------------------------------------------------------------------

@transaction.atomic(durable=True)
def transfer_make(*, from_account: Account, to_account: Account, as_of: date, reason: str, actor) -> Transfer:
    """Move all that a closed account owes, or all its credit, to another account of the same owner: a final
    bill's balance to the owner's new account, or a credit left after it. The closed account ends at 0.00."""
    errors = _day_problems(as_of, field="transferred_on", doing="transferred")
    if from_account.pk == to_account.pk:
        raise ApplicationError("the two accounts are the same account", field="to_account_no")
    from_account, to_account = _locked(from_account, to_account)
    if from_account.status != Account.Status.CLOSED:
        errors.append(FieldError(field="from_account_no", message=(
            f"account {from_account.account_no} is {from_account.get_status_display().lower()}; a balance is moved "
            "from an account closed by its final bill (an open account's balance goes on its next bill)")))
    if to_account.status == Account.Status.CLOSED:
        errors.append(FieldError(field="to_account_no", message=f"account {to_account.account_no} is closed; move "
                                                                "the balance to an open account"))
    if from_account.owner_id != to_account.owner_id:
        errors.append(FieldError(field="to_account_no", message=(
            f"account {to_account.account_no} belongs to {to_account.owner.name}, not {from_account.owner.name}; a "
            "balance moves only between one owner's accounts")))
    reason = (reason or "").strip()
    if not reason:
        errors.append(FieldError(field="reason", message="a transfer needs a reason (kept for the audit)"))
    balance = balances([from_account.pk], through=as_of)[from_account.pk].balance
    if not balance:
        errors.append(FieldError(field="from_account_no", message=f"account {from_account.account_no} owes nothing "
                                                                  f"and holds no credit on {fmt_day(as_of)}"))
    elif balance < ZERO:
        errors += _credit_problems(from_account, -balance, as_of=as_of, field="from_account_no",
                                   asked="nothing more is there to move")
    _raise(errors)
    what = "Unpaid balance" if balance > 0 else "Credit"
    from_memo, to_memo = balance_transfer(
        from_account=from_account, to_account=to_account, amount=balance, on=as_of, reason=reason, actor=actor,
        from_words=f"{what} moved to account {to_account.account_no}",
        to_words=f"{what} moved from account {from_account.account_no}")
    return Transfer.objects.create(from_account=from_account, to_account=to_account, amount=balance,
                                   transferred_on=as_of, reason=reason, from_memo=from_memo, to_memo=to_memo,
                                   created_by=actor)


# --- invoices --------------------------------------------------------------------------------------------------

@transaction.atomic(durable=True)
def invoice_create(*, account: Account, code: str, as_of: date, due_on: date, actor, amount: Decimal | None = None,
                   base: Decimal | None = None, size: str | None = None, note: str = "") -> Invoice:
    """Bill a fee of the schedule in force on ``as_of`` on its own invoice, due on ``due_on`` (on or after the day,
    within 90 days), instead of on the next water bill. It is owed from the day, on no bill: a payment pays it with
    the account's other charges, oldest first."""
    errors = _day_problems(as_of, field="invoiced_on", doing="invoiced")
    if due_on < as_of:
        errors.append(FieldError(field="due_on", message=f"{due_on} is before the invoice ({as_of})"))
    elif due_on > as_of + timedelta(days=INVOICE_DUE_MOST_DAYS):
        errors.append(FieldError(field="due_on", message=f"{due_on} is more than {INVOICE_DUE_MOST_DAYS} days after "
                                                         f"the invoice ({as_of})"))
    note = (note or "").strip()
    if len(note) > NOTE_MAX:
        errors.append(FieldError(field="note", message=f"is {len(note):,} characters; at most {NOTE_MAX:,}"))
    terms = None
    try:
        terms = charge_terms(account=account, code=code, as_of=as_of, amount=amount, base=base, size=size)
    except ApplicationError as exc:
        errors.extend(exc.errors)
    _raise(errors)
    owner = account.owner
    invoice = Invoice.objects.create(
        account=account, code=terms.code, description=terms.description, citation=terms.citation,
        amount=Money(terms.amount, "USD"), quantity=terms.quantity, rate=terms.rate, invoiced_on=as_of,
        due_on=due_on, recipient_name=owner.name, recipient_address=owner.mailing_address, note=note,
        created_by=actor)
    ledger_post(Posting(account_id=account.pk, kind=LedgerEntry.Kind.FEE, posted_on=as_of, amount=terms.amount,
                        source=invoice_source(invoice.pk), citation=terms.citation, due_on=due_on,
                        description=f"Invoice {invoice.number}: {terms.description}, due {fmt_day(due_on)}"))
    return invoice


# --- the day's close -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DrawerExpected:
    day: date
    cash: Decimal
    checks: Decimal
    count: int


def drawer_expected(*, on: date) -> DrawerExpected:
    day = cash_day(on=on)
    return DrawerExpected(day=on, cash=day.drawer_cash, checks=day.drawer_checks, count=day.drawer_count)


@transaction.atomic(durable=True)
def day_close(*, on: date, counted_cash: Decimal, counted_checks: Decimal, note: str, actor) -> DayClose:
    """Close a day's drawer: what was counted against the cash report's drawer. An over or short is recorded with
    the note that explains it (required); a day is closed once."""
    errors = _day_problems(on, field="day", doing="closed")
    for field, value in (("counted_cash", counted_cash), ("counted_checks", counted_checks)):
        if value < ZERO:
            errors.append(FieldError(field=field, message="is 0.00 or more: what the drawer holds"))
    closed = DayClose.objects.select_for_update().filter(day=on).first()
    if closed is not None and closed.is_closed:
        errors.append(FieldError(field="day", message=f"{fmt_day(on)} is already closed"))
    expected = drawer_expected(on=on)
    off = (counted_cash + counted_checks) - (expected.cash + expected.checks)
    note = (note or "").strip()
    if (counted_cash != expected.cash or counted_checks != expected.checks) and not note:
        words = f"{'over' if off > 0 else 'short'} by {fmt_dollars(abs(off))}" if off else "off between cash and checks"
        errors.append(FieldError(field="note", message=(
            f"the drawer is {words} (it should hold {fmt_dollars(expected.cash)} cash and "
            f"{fmt_dollars(expected.checks)} in checks): say what explains it")))
    _raise(errors)
    if closed is not None:  # reopened, and now closed again with its new count
        DayClose.objects.filter(pk=closed.pk).update(
            expected_cash=expected.cash, expected_checks=expected.checks, counted_cash=counted_cash,
            counted_checks=counted_checks, note=note, closed_by=actor, closed_at=timezone.now(), reopened_at=None)
        return DayClose.objects.get(pk=closed.pk)
    return DayClose.objects.create(day=on, expected_cash=expected.cash, expected_checks=expected.checks,
                                   counted_cash=counted_cash, counted_checks=counted_checks, note=note,
                                   closed_by=actor)


def closed_days(since: date) -> set[date]:
    """The days on or after ``since`` whose books are closed (closed, and not reopened): the ledger's writer books
    an entry dated on one of them on the first open day after it (``billing.ledger.posting``)."""
    return set(DayClose.objects.filter(day__gte=since, reopened_at__isnull=True).values_list("day", flat=True))


@transaction.atomic(durable=True)
def day_reopen_request(*, close: DayClose, reason: str, actor) -> DayReopen:
    """A clerk asks to open a closed day again, saying why; a supervisor who is not the clerk decides."""
    close = DayClose.objects.select_for_update().get(pk=close.pk)
    errors = []
    if not close.is_closed:
        errors.append(FieldError(field="day", message=f"{fmt_day(close.day)} is open already"))
    reason = (reason or "").strip()
    if not reason:
        errors.append(FieldError(field="reason", message="reopening a closed day needs a reason (kept for the audit)"))
    elif len(reason) > NOTE_MAX:
        errors.append(FieldError(field="reason", message=f"is {len(reason):,} characters; at most {NOTE_MAX:,}"))
    if DayReopen.objects.filter(close=close, status=DayReopen.Status.PENDING).exists():
        errors.append(FieldError(field="day", message=f"reopening {fmt_day(close.day)} is waiting for a supervisor"))
    _raise(errors)
    return DayReopen.objects.create(close=close, reason=reason, requested_by=actor)


@transaction.atomic(durable=True)
def day_reopen_decide(*, reopen: DayReopen, approve: bool, note: str, actor) -> DayReopen:
    """A supervisor, not the clerk who asked, approves (the day is open again: entries dated it reach its books
    until it is closed again) or refuses (a refusal says why)."""
    reopen = DayReopen.objects.select_for_update().select_related("close").get(pk=reopen.pk)
    _raise(approval_problems(reopen, approve=approve, note=note, actor=actor))
    reopen = approval_decide(reopen, approve=approve, note=note, actor=actor)
    if approve:
        DayClose.objects.filter(pk=reopen.close_id).update(reopened_at=timezone.now())
    return reopen
