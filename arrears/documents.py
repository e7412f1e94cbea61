"""The plan letter: what the customer agreed to pay and when, on the bill's letterhead (``core.papers``)."""

from django.utils import timezone

from billing.ordinance import ordinance_on
from core.dates import fmt_day
from core.money import fmt_dollars
from core.papers import Paper, paper_pdf

from .models import PaymentPlan
from .services import grace_days


def plan_letter_pdf(plan: PaymentPlan) -> bytes:
    utility = ordinance_on(plan.started_on).utility
    account = plan.account
    owner = account.owner
    installments = list(plan.installments.all())
    table = [((f"Down payment due {fmt_day(i.due_on)}" if i.number == 0 else
               f"Installment {i.number} due {fmt_day(i.due_on)}"), fmt_dollars(i.amount.amount)) for i in installments]
    table.append(("Total of the plan", fmt_dollars(plan.total.amount)))
    grace = grace_days()
    return paper_pdf(Paper(
        title="PAYMENT PLAN AGREEMENT", utility_name=utility.name,
        utility_header="\n".join([utility.office_address, utility.phone]).strip(),
        facts=[("Plan", plan.number), ("Account number", account.account_no),
               ("Service address", account.premises.service_address), ("Agreed on", fmt_day(plan.started_on))],
        addressee=f"{owner.name}\n{owner.mailing_address}",
        paragraphs=[
            f"You agreed to pay {fmt_dollars(plan.total.amount)} that account {account.account_no} owes by the "
            "payments below, each by its date. Your new bills are due as usual, on their own dates.",
            "Pay by mail, at the office or online as you pay your bills; write the account number on your check. "
            "Every payment we receive from the agreement's date on counts toward the plan.",
            f"While you keep to this plan, we will not shut off water service for the amount it covers. If a payment "
            f"is still not made {grace} days after its date, the plan ends and the whole amount left is due at once "
            "(office policy).",
        ],
        table=table, warning=f"Keep this letter: it is your schedule. Questions: {utility.phone or 'the office'}.",
        footer=f"{utility.name}: payment plan {plan.number} (office policy: the local law sets no plan terms).",
        created_at=timezone.now()))
