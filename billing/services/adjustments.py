"""Corrections to issued bills: credit and debit memos with a reason and the clerk; voiding keeps the bill.

Each correction has two texts: the clerk's internal ``reason`` ("customer called 11/30"), kept for staff,
and the ``description`` the customer reads on the statement and in the portal — a plain wording unless the
clerk writes one. Only the description goes on the ledger entry.
"""

from datetime import date
from decimal import Decimal

from django.db import transaction
from django.utils import timezone
from djmoney.money import Money

from core.clock import refuse_future
from core.errors import ApplicationError
from core.money import ADJUSTMENT_MAX

from ..ledger.posting import Posting, adjustment_source, bill_source, ledger_post
from ..models import Adjustment, Bill, LedgerEntry
from ..signals import bill_voided
from .charges import charges_reissue
from .penalties import penalties_correct_posted


@transaction.atomic
def adjustment_create(*, bill: Bill, kind: str, amount: Decimal, reason: str, as_of: date, actor,
                      description: str = "") -> Adjustment:
    if kind not in Adjustment.Kind.values:
        raise ApplicationError(f"'{kind}' is not credit or debit", field="kind")
    if amount <= 0:
        raise ApplicationError("must be more than zero; the kind says which way it goes", field="amount")
    if amount > ADJUSTMENT_MAX:
        raise ApplicationError(f"${amount:,.2f} is more than a memo may be (at most ${ADJUSTMENT_MAX:,.2f}); a bill "
                               "wrong by more is voided and billed again", field="amount")
    if not reason.strip():
        raise ApplicationError("a correction needs a reason", field="reason")
    refuse_future(as_of, field="adjusted_on", doing="corrected")
    if bill.status == Bill.Status.VOID:
        raise ApplicationError(f"bill {bill.number} is void", field="bill")
    label = Adjustment.Kind(kind).label
    description = description.strip() or f"{label} on bill {bill.number}"
    adjustment = Adjustment.objects.create(account_id=bill.account_id, bill=bill, kind=kind,
                                           amount=Money(amount, "USD"), adjusted_on=as_of, reason=reason,
                                           description=description[:200], created_by=actor)
    sign = -1 if kind == Adjustment.Kind.CREDIT else 1
    ledger_post(Posting(account_id=bill.account_id, bill_id=bill.pk, kind=kind, posted_on=as_of,
                        amount=sign * amount, source=adjustment_source(adjustment.pk), adjustment_id=adjustment.pk,
                        description=description))
    penalties_correct_posted(account_ids=[bill.account_id], after={bill.account_id: as_of})
    return adjustment


@transaction.atomic(durable=True)
def bill_void(*, bill: Bill, reason: str, as_of: date, actor, description: str = "") -> Bill:
    """Void a bill: the record stays, a reversing entry takes its charges off the account, and the period
    can be billed again by the next run (or at once: ``billing.services.rebill``)."""
    return bill_void_within(bill=bill, reason=reason, as_of=as_of, actor=actor, description=description)


def bill_void_within(*, bill: Bill, reason: str, as_of: date, actor, description: str = "") -> Bill:
    """``bill_void`` inside the caller's transaction."""
    bill = Bill.objects.select_for_update().get(pk=bill.pk)
    if bill.status == Bill.Status.VOID:
        raise ApplicationError(f"bill {bill.number} is already void", field="status")
    if bill.converted_on is not None:
        raise ApplicationError(f"bill {bill.number} was brought over from the previous system on {bill.converted_on}; "
                               "no run of ours bills its period again, so correct it with a credit or debit memo",
                               field="status")
    if not reason.strip():
        raise ApplicationError("voiding a bill needs a reason", field="reason")
    description = (description.strip() or f"Bill {bill.number} voided; a corrected bill replaces it")[:200]
    Bill.objects.filter(pk=bill.pk).update(status=Bill.Status.VOID, voided_at=timezone.now(), voided_by=actor,
                                           void_reason=reason, void_description=description)
    ledger_post(Posting(account_id=bill.account_id, bill_id=bill.pk, kind=LedgerEntry.Kind.VOID, posted_on=as_of,
                        amount=-bill.total.amount, source=bill_source(bill.pk), description=description))
    # The voided bill's penalties go with it (corrected on their own days); the next run bills it again,
    # with the fees and fines it carried charged again (the void reversed them with the rest of the bill).
    penalties_correct_posted(account_ids=[bill.account_id])
    charges_reissue(bill=bill, actor=actor)
    transaction.on_commit(lambda: bill_voided.send(sender=Bill, bill_id=bill.pk, account_id=bill.account_id,
                                                   voided_on=as_of))
    bill.refresh_from_db()
    return bill


def balance_transfer(*, from_account, to_account, amount: Decimal, on: date, reason: str, actor, citation: str = "",
                     from_words: str, to_words: str) -> tuple[Adjustment, Adjustment]:
    """Move money owed, or a credit, between two accounts: a pair of memos on no bill, each naming the other
    account. ``amount`` positive moves what ``from_account`` owes (a credit memo there, a debit memo on
    ``to_account``); negative moves its credit (a debit memo there, which its credit pays, and a credit memo on
    ``to_account``). The caller checks the amount against the books; penalties are corrected on both accounts."""
    if not amount:
        raise ApplicationError("there is nothing to transfer", field="amount")
    credit, debit = Adjustment.Kind.CREDIT, Adjustment.Kind.DEBIT
    sides = ((from_account, credit if amount > 0 else debit, from_words), (to_account, debit if amount > 0 else credit,
                                                                             to_words))
    memos = []
    for account, kind, words in sides:
        memo = Adjustment.objects.create(account=account, bill=None, kind=kind, amount=Money(abs(amount), "USD"),
                                         adjusted_on=on, reason=reason, description=words[:200], created_by=actor)
        ledger_post(Posting(account_id=account.pk, kind=kind, posted_on=on,
                            amount=(-1 if kind == credit else 1) * abs(amount), source=adjustment_source(memo.pk),
                            adjustment_id=memo.pk, citation=citation, description=words[:200]))
        memos.append(memo)
    penalties_correct_posted(account_ids=[from_account.pk, to_account.pk],
                             after={from_account.pk: on, to_account.pk: on})
    return memos[0], memos[1]
