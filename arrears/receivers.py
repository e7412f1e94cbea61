"""What the payment plans do when another part of the office acts (docs/architecture.md, event table)."""

from django.db import transaction

from billing.models import PaymentReversal
from core.dates import fmt_day
from core.money import ZERO, fmt_dollars
from core.workflow import transition

from .models import PaymentPlan
from .services import plan_standing
from .signals import plan_ended


def on_payment_reversed(sender, *, reversal_id, account_id, **kwargs) -> None:
    """A payment taken back after it completed a plan (its last installment returned, R03 and the like): the plan
    is active again for what is owed of it once more, and the nightly review holds it to its installments."""
    reversal = PaymentReversal.objects.select_related("payment").get(pk=reversal_id)
    payment, on = reversal.payment, reversal.reversed_on
    for plan in PaymentPlan.objects.filter(account_id=account_id, status=PaymentPlan.Status.COMPLETED,
                                           started_on__lte=payment.paid_on,
                                           status_changed_on__gte=payment.paid_on).prefetch_related("installments"):
        left = plan_standing(plan, as_of=on).left
        if left <= ZERO:
            continue
        note = (f"reopened on {fmt_day(on)}: payment {payment.reference} taken back "
                f"({reversal.get_reason_display().lower()}); {fmt_dollars(left)} of the plan is owed again")
        with transaction.atomic():
            transition(plan, to=PaymentPlan.Status.ACTIVE, note=note,
                       changes={"status_note": note[:200], "status_changed_on": on})


def on_account_closed(sender, *, account_id, closed_on, **kwargs) -> None:
    """The account closed: its active plan ends (what it covered is owed on the final bill), and the customer is
    told by letter (``plan_ended``)."""
    for plan in PaymentPlan.objects.filter(account_id=account_id, status=PaymentPlan.Status.ACTIVE):
        note = f"ended on {fmt_day(closed_on)}: the account closed; what is unpaid is on the final bill"
        with transaction.atomic():
            transition(plan, to=PaymentPlan.Status.CANCELLED, note=note,
                       changes={"status_note": note[:200], "status_changed_on": closed_on})
            transaction.on_commit(lambda pk=plan.pk: plan_ended.send(sender=PaymentPlan, plan_id=pk))
