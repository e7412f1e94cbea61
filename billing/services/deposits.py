"""Refundable deposits: received and held for the customer, refunded without interest.

A deposit (Washingtonville § 169-4: $250 for a temporary metered service from a fire hydrant, "returned to
the applicant without interest upon the satisfactory discontinuance of service") is a liability: the money
is the customer's. It is therefore no charge, no payment and no principal. Receiving it writes a
``deposit`` ledger row (a credit held, source ``deposit:<id>``) and refunding it a ``deposit_refund`` row of
the same amount, both through the ledger writer; the balance, the amounts due and the penalty assessment
leave both out (``billing.ledger.allocation.DEPOSIT_KINDS``), and the statement lists what is held.

The amount and the citation are the preset's: the fee of the schedule in force whose rule is ``deposit``.
"""

from datetime import date

from django.db import transaction
from djmoney.money import Money

from accounts.models import Account
from core.clock import refuse_future
from core.errors import ApplicationError, FieldError

from ..districts import account_district
from ..fees import fee_in_force, fee_rule, fee_with_rule
from ..ledger.posting import Posting, deposit_source, ledger_post
from ..models import Deposit, LedgerEntry

NOTE_MAX = 2000


@transaction.atomic(durable=True)
def deposit_receive(*, account: Account, received_on: date, actor, code: str | None = None,
                    reference: str = "") -> Deposit:
    """Record a deposit received for the account: the preset's deposit (``code``, or its one fee whose rule is
    ``deposit``) in force on ``received_on``. Refused, saving nothing, naming every field."""
    errors: list[FieldError] = []
    try:
        refuse_future(received_on, field="received_on", doing="received")
    except ApplicationError as exc:
        errors.extend(exc.errors)
    if account.status == Account.Status.CLOSED:
        errors.append(FieldError(field="account_no", message=f"account {account.account_no} is closed"))
    fee = rule = None
    try:
        district = account_district(account.pk, on=received_on)
        fee = (fee_in_force(code=code, on=received_on, district=district) if code
               else fee_with_rule(rule="deposit", on=received_on, district=district))
    except ApplicationError as exc:
        errors.extend(exc.errors)
    else:
        rule = fee_rule(fee)
        if not rule.is_deposit:
            errors.append(FieldError(field="code", message=f"{fee.description} ({fee.citation}) is a fee, not a "
                                                           "deposit; charge it instead"))
    reference = (reference or "").strip()
    if len(reference) > 80:
        errors.append(FieldError(field="reference", message="is more than 80 characters"))
    if errors:
        raise ApplicationError(errors=errors)
    amount = rule.quote()
    deposit = Deposit.objects.create(account=account, code=fee.code, description=fee.description,
                                     citation=fee.citation, amount=Money(amount, "USD"), received_on=received_on,
                                     reference=reference, received_by=actor)
    ledger_post(Posting(account_id=account.pk, kind=LedgerEntry.Kind.DEPOSIT, posted_on=received_on,
                        amount=-amount, source=deposit_source(deposit.pk), citation=fee.citation,
                        description=f"{fee.description}: held, refundable"))
    return deposit


@transaction.atomic(durable=True)
def deposit_refund(*, deposit: Deposit, refunded_on: date, note: str, actor) -> Deposit:
    """Return a held deposit in full, without interest, on the satisfactory discontinuance of the service
    it secured (``note`` records it). Refused, changing nothing, naming every field."""
    deposit = Deposit.objects.select_for_update().get(pk=deposit.pk)
    errors: list[FieldError] = []
    if deposit.refunded_on is not None:
        errors.append(FieldError(field="status", message=f"the deposit was refunded on {deposit.refunded_on}"))
    try:
        refuse_future(refunded_on, field="refunded_on", doing="refunded")
    except ApplicationError as exc:
        errors.extend(exc.errors)
    if refunded_on < deposit.received_on:
        errors.append(FieldError(field="refunded_on", message=f"{refunded_on} is before the deposit was received "
                                                              f"({deposit.received_on})"))
    note = (note or "").strip()
    if not note:
        errors.append(FieldError(field="note", message=f"a deposit is refunded on the satisfactory discontinuance "
                                                       f"of service ({deposit.citation}): say so"))
    elif len(note) > NOTE_MAX:
        errors.append(FieldError(field="note", message=f"is {len(note):,} characters; at most {NOTE_MAX:,}"))
    if errors:
        raise ApplicationError(errors=errors)
    deposit.refunded_on, deposit.refunded_by, deposit.refund_note = refunded_on, actor, note
    deposit._history_user = actor
    deposit.save(update_fields=["refunded_on", "refunded_by", "refund_note"])
    ledger_post(Posting(account_id=deposit.account_id, kind=LedgerEntry.Kind.DEPOSIT_REFUND, posted_on=refunded_on,
                        amount=deposit.amount.amount, source=deposit_source(deposit.pk), citation=deposit.citation,
                        description=f"{deposit.description}: refunded without interest"))
    return deposit
