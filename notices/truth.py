"""True when it goes: just before a notice is sent, what it reports is checked again. A reminder or late notice about
a bill that is paid, credited or voided since it was decided, an installment reminder of a plan that ended or an
installment paid since, a debit notice whose autopay ended or whose bill was voided, or a text to a number that
replied STOP, is withdrawn with the reason and never sent (the night decides, the morning sends: a dispute
won or a payment posted in between must not be answered with "past due")."""

from datetime import date

from core.money import ZERO

from .models import CustomerNotice, TextNumber

BILL_KINDS = (CustomerNotice.Kind.DUE_SOON, CustomerNotice.Kind.LATE_NOTICE)
INSTALLMENT_KINDS = (CustomerNotice.Kind.INSTALLMENT_DUE, CustomerNotice.Kind.INSTALLMENT_MISSED)


def withdrawn_why(notice: CustomerNotice, *, on: date) -> str:
    """Why the fact ``notice`` reports is no longer so ``on``, or "" while it is."""
    kind, fact = notice.kind, notice.fact
    if notice.channel == CustomerNotice.Channel.TEXT:
        if TextNumber.objects.filter(number=notice.sent_to, stopped_at__isnull=False).exists():
            return f"{notice.sent_to} replied STOP"
    if kind in BILL_KINDS and fact.startswith("bill:"):
        return _bill_settled(int(fact.removeprefix("bill:")), on=on)
    if kind in INSTALLMENT_KINDS and fact.startswith("installment:"):
        return _installment_settled(int(fact.removeprefix("installment:")), on=on)
    if kind == CustomerNotice.Kind.AUTOPAY_SCHEDULED and fact.startswith("autopay-notice:"):
        return _debit_off(int(fact.removeprefix("autopay-notice:")))
    return ""


def _debit_off(notice_id: int) -> str:
    from billing.models import Bill
    from remittance.models import AutopayEnrolment, AutopayNotice

    notice = AutopayNotice.objects.filter(pk=notice_id).select_related("enrolment", "bill").first()
    if notice is None or notice.enrolment.status != AutopayEnrolment.Status.ACTIVE:
        return "autopay is no longer on: no debit will be made"
    if notice.bill is not None and notice.bill.status == Bill.Status.VOID:
        return f"bill {notice.bill.number} was voided: no debit will be made for it"
    return ""


def _bill_settled(bill_id: int, *, on: date) -> str:
    from billing.balances import balances
    from billing.models import Bill

    bill = Bill.objects.filter(pk=bill_id).only("id", "number", "status", "account_id").first()
    if bill is None or bill.status == Bill.Status.VOID:
        return f"bill {bill.number if bill else bill_id} was voided"
    state = balances([bill.account_id], through=on)[bill.account_id]
    owed = state.on_bills().get(bill.pk)
    if owed is None or owed.unpaid_total <= ZERO or state.balance <= ZERO:
        return f"nothing is owed on bill {bill.number} now (paid or credited since the notice was decided)"
    return ""


def _installment_settled(installment_id: int, *, on: date) -> str:
    from arrears.models import PaymentPlan, PlanInstallment
    from arrears.services import plan_paid

    installment = PlanInstallment.objects.filter(pk=installment_id).select_related("plan").first()
    if installment is None or installment.plan.status != PaymentPlan.Status.ACTIVE:
        return "the payment plan is no longer in force"
    plan = installment.plan
    owed_through = sum((i.amount.amount for i in plan.installments.all() if i.number <= installment.number), ZERO)
    if plan_paid(plan, as_of=on) >= owed_through:
        return f"installment {installment.number} is paid"
    return ""
