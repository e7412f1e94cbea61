"""Taking a payment back: a returned check, a payment posted to the wrong account, one entered in error.

Each tender has its own ways back (``REASONS_BY_TENDER``): cash never bounces; a check or a bank file payment is
returned; a card or online payment is refunded or disputed; an autopay debit is returned by the customer's bank.
A check or debit that came back unpaid also charges the returned-payment fee (``returned``: the preset's, or
the office's policy), kept on the reversal.

The payment and its ledger entry stay as they were (an issued fact never changes). The reversal is a
``PaymentReversal`` and a ledger entry of its own, kind ``payment_reversal``, for the payment's amount,
``corrects`` = the payment's entry, posted on the day it was reversed. From that day on the ledger replays
the account as if the payment had never been made (``billing.ledger.selectors.entries_for_accounts``): the
penalties a returned check kept away are owed on their own days, exactly as if the customer had never paid,
and the next assessment posts them (``penalties_correct_posted`` here corrects what is posted already).

A payment posted to the wrong account is **transferred**: the reversal posts a payment to the right account
with the date the customer paid, the same amount and tender, and the reference ``<original>-T`` (``-T2``…
when that is taken), so the right account is paid on time and the wrong one is as it was before.

Once the reversal commits, ``payment_reversed`` is sent: what the payment closed (a termination case paid in full)
reopens, and the customer is told. The transferred payment is announced like any payment (``payment_posted``).
"""

from datetime import date

from django.db import IntegrityError, transaction

from accounts.models import Account
from core.clock import refuse_future
from core.errors import ApplicationError, Conflict, FieldError

from ..ledger.posting import Posting, ledger_post, reversal_source
from ..models import LedgerEntry, Payment, PaymentReversal
from ..signals import payment_reversed
from .payments import payment_post
from .penalties import penalties_correct_posted
from .returned import returned_payment_fee_charge

REASON = PaymentReversal.Reason
# What the statement says of a reversal, by reason.
REASON_WORDS = {REASON.RETURNED: "returned check", REASON.MISPOSTED: "posted to the wrong account",
                REASON.ERROR: "entered in error", REASON.REFUNDED: "refunded", REASON.DISPUTED: "disputed",
                REASON.DEBIT_RETURNED: "bank debit returned"}
REFERENCE_MAX = Payment._meta.get_field("reference").max_length
TENDER = Payment.Tender
# What can happen to a payment of each tender: cash cannot bounce; only a processor refunds or sees a dispute;
# only a bank debit is returned by the customer's bank.
REASONS_BY_TENDER = {
    TENDER.CASH: (REASON.MISPOSTED, REASON.ERROR),
    TENDER.CHECK: (REASON.RETURNED, REASON.MISPOSTED, REASON.ERROR),
    TENDER.BANK_FILE: (REASON.RETURNED, REASON.MISPOSTED, REASON.ERROR),
    TENDER.CARD: (REASON.REFUNDED, REASON.DISPUTED, REASON.MISPOSTED, REASON.ERROR),
    TENDER.ONLINE: (REASON.REFUNDED, REASON.DISPUTED, REASON.MISPOSTED, REASON.ERROR),
    TENDER.ACH: (REASON.DEBIT_RETURNED, REASON.MISPOSTED, REASON.ERROR),
}
# A payment that came back unpaid costs the returned-payment fee (billing.services.returned).
FEE_REASONS = (REASON.RETURNED, REASON.DEBIT_RETURNED)


def transfer_reference(reference: str) -> str:
    """``<reference>-T``, or ``-T2``, ``-T3``… when taken (references compare without regard to case)."""
    for n in range(1, 1000):
        suffix = "-T" if n == 1 else f"-T{n}"
        candidate = reference[:REFERENCE_MAX - len(suffix)] + suffix
        if not Payment.objects.filter(reference__iexact=candidate).exists():
            return candidate
    raise Conflict(f"no free transfer reference for '{reference}'", field="reference")


def payment_reverse(*, payment: Payment, reversed_on: date, reason: str, note: str, actor,
                    transfer_to_account_no: str | None = None) -> PaymentReversal:
    """Reverse ``payment`` on ``reversed_on`` for ``reason``; a misposted payment is posted again to
    ``transfer_to_account_no`` with its original date. Every refusal names its field; nothing is written
    unless all pass."""
    with transaction.atomic():
        # Locked, so two clerks reversing the same payment queue; the one-to-one key is the last defence.
        payment = Payment.objects.select_for_update().get(pk=payment.pk)
        note = (note or "").strip()
        transfer_to_account_no = (transfer_to_account_no or "").strip()
        errors: list[FieldError] = []
        if PaymentReversal.objects.filter(payment=payment).exists():
            errors.append(FieldError(field="payment", message=f"payment {payment.reference} is already reversed"))
        entry = LedgerEntry.objects.filter(payment=payment, kind=LedgerEntry.Kind.PAYMENT).first()
        if entry is None:
            errors.append(FieldError(field="payment", message=f"payment {payment.reference} is not on the ledger"))
        if reason not in REASON.values:
            errors.append(FieldError(field="reason", message=f"'{reason}' is not a reason; one of "
                                                             f"{', '.join(REASON.values)}"))
        elif reason not in REASONS_BY_TENDER.get(payment.tender, REASON.values):
            errors.append(FieldError(field="reason", message=(
                f"a {TENDER(payment.tender).label.lower()} payment cannot be {REASON_WORDS[reason]}; one of "
                f"{', '.join(REASON_WORDS[r] for r in REASONS_BY_TENDER[payment.tender])}")))
        if reversed_on < payment.paid_on:
            errors.append(FieldError(field="reversed_on", message=f"{reversed_on} is before the payment was made "
                                                                  f"({payment.paid_on})"))
        try:
            refuse_future(reversed_on, field="reversed_on", doing="reversed")
        except ApplicationError as exc:
            errors.extend(exc.errors)
        if not note:
            errors.append(FieldError(field="note", message="is required: what happened (the bank's notice, who "
                                                           "noticed)"))
        target = None
        if reason == REASON.MISPOSTED:
            if not transfer_to_account_no:
                errors.append(FieldError(field="transfer_to_account_no",
                                         message="is required for a misposted payment: the account it belongs to"))
            else:
                target = Account.objects.filter(account_no=transfer_to_account_no).first()
                if target is None:
                    errors.append(FieldError(field="transfer_to_account_no",
                                             message=f"unknown account '{transfer_to_account_no}'"))
                elif target.pk == payment.account_id:
                    errors.append(FieldError(field="transfer_to_account_no",
                                             message=f"{transfer_to_account_no} is the account the payment is "
                                                     "on; name the account it belongs to"))
        elif transfer_to_account_no:
            errors.append(FieldError(field="transfer_to_account_no",
                                     message="only a misposted payment is transferred to another account"))
        if errors:
            raise ApplicationError(errors=errors)

        transferred = None
        if target is not None:
            reference = transfer_reference(payment.reference)
            payment_post(account_no=target.account_no, amount=payment.amount.amount, paid_on=payment.paid_on,
                         reference=reference, actor=actor, source="transfer", tender=payment.tender,
                         check_number=payment.check_number)
            transferred = Payment.objects.get(reference__iexact=reference)
        try:
            with transaction.atomic():
                reversal = PaymentReversal.objects.create(payment=payment, reversed_on=reversed_on, reason=reason,
                                                          note=note, transferred_to=transferred, created_by=actor)
        except IntegrityError as exc:
            raise Conflict(f"payment {payment.reference} was reversed by someone else at the same moment",
                           field="payment") from exc
        ledger_post(Posting(account_id=payment.account_id, kind=LedgerEntry.Kind.PAYMENT_REVERSAL,
                            posted_on=reversed_on, amount=payment.amount.amount, source=reversal_source(reversal.pk),
                            corrects_id=entry.pk,
                            description=f"Payment {payment.reference} reversed: {REASON_WORDS[reason]}"))
        # Penalties posted after the day it was paid were computed with the payment: bring them in line now;
        # those it leaves owed on later days are the next assessment's.
        penalties_correct_posted(account_ids=[payment.account_id], after={payment.account_id: payment.paid_on})
        if reason in FEE_REASONS:
            fee = returned_payment_fee_charge(account=payment.account, as_of=reversed_on, actor=actor,
                                              what=f"payment {payment.reference} {REASON_WORDS[reason]}: {note}")
            if fee is not None:
                PaymentReversal.objects.filter(pk=reversal.pk).update(fee=fee)
                reversal.fee = fee
        facts = {"reversal_id": reversal.pk, "payment_id": payment.pk, "account_id": payment.account_id,
                 "reason": reason}
        transaction.on_commit(lambda: payment_reversed.send(sender=PaymentReversal, **facts))
    return reversal


__all__ = ["REASONS_BY_TENDER", "REASON_WORDS", "payment_reverse", "transfer_reference"]
