"""Termination listens to billing: a payment posted (at the counter, online, by API or from an imported file)
may pay a case in full, which closes it and cancels its pending orders; a payment reversed (a returned check or
debit, a refund, a dispute, a payment moved to another account) reopens the case it paid, where it left off."""

from billing.models import PaymentReversal
from billing.services.reversals import REASON_WORDS

from .services.cases import cases_close_paid, cases_reopen_unpaid


def on_payment_posted(sender, *, account_ids, **kwargs) -> None:
    cases_close_paid(account_ids=account_ids)


def on_payment_reversed(sender, *, reversal_id, account_id, **kwargs) -> None:
    reversal = PaymentReversal.objects.select_related("payment").get(pk=reversal_id)
    cases_reopen_unpaid(account_id=account_id, as_of=reversal.reversed_on,
                        why=f"payment {reversal.payment.reference} reversed ({REASON_WORDS[reversal.reason]})")
