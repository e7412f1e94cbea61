"""Termination listens to billing: a payment posted (at the counter, online, by API or from an imported file)
may pay a case in full, which closes it and cancels its pending orders; a payment reversed (a returned check or
debit, a refund, a dispute, a payment moved to another account) reopens the case it paid, where it left off; a bill
voided withdraws the case it grounded, or flags the case that goes on for its other bills. And to accounts: an
account closed has no service left to shut off, so its shut-off orders are cancelled and its cases flagged."""

from billing.models import PaymentReversal
from billing.services.reversals import REASON_WORDS

from .services.cases import cases_close_paid, cases_of_closed_account, cases_reopen_unpaid, cases_withdraw_voided


def on_payment_posted(sender, *, account_ids, **kwargs) -> None:
    cases_close_paid(account_ids=account_ids)


def on_payment_reversed(sender, *, reversal_id, account_id, **kwargs) -> None:
    reversal = PaymentReversal.objects.select_related("payment").get(pk=reversal_id)
    cases_reopen_unpaid(account_id=account_id, as_of=reversal.reversed_on,
                        why=f"payment {reversal.payment.reference} reversed ({REASON_WORDS[reversal.reason]})")


def on_bill_voided(sender, *, bill_id, voided_on, **kwargs) -> None:
    cases_withdraw_voided(bill_id=bill_id, as_of=voided_on)


def on_account_closed(sender, *, account_id, closed_on, **kwargs) -> None:
    cases_of_closed_account(account_id=account_id, as_of=closed_on)
