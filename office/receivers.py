"""What the back office does when another part of the office acts (docs/architecture.md, event table)."""

from billing.models import PaymentReversal
from core.dates import fmt_day
from core.money import fmt_dollars

from .models import Refund


def on_payment_reversed(sender, *, reversal_id, account_id, **kwargs) -> None:
    """A payment taken back after a refund of the account's credit was paid, when the payment was made on or before
    the refund: the refund may have paid out money that never cleared. Each such refund is flagged for the
    supervisor (``Refund.came_back``), who follows it up with the payee."""
    reversal = PaymentReversal.objects.select_related("payment").get(pk=reversal_id)
    payment = reversal.payment
    refunds = Refund.objects.filter(account_id=account_id, status=Refund.Status.APPROVED,
                                    refunded_on__gte=payment.paid_on, refunded_on__lte=reversal.reversed_on)
    said = (f"Payment {payment.reference} ({fmt_dollars(payment.amount.amount)}, paid {fmt_day(payment.paid_on)}) "
            f"was taken back on {fmt_day(reversal.reversed_on)} ({reversal.get_reason_display().lower()}) after this "
            "refund was paid: the credit refunded may never have been the village's.")
    for refund in refunds:
        refund.came_back = f"{refund.came_back}\n{said}".strip()
        refund.came_back_on = refund.came_back_on or reversal.reversed_on
        refund.save(update_fields=["came_back", "came_back_on"])
