"""Payment plans: made by a clerk, stood by the payments posted, defaulted after a missed installment's grace.

* ``plan_create``: the amount is at most what the account owes on the day (and more than nothing); a down payment
  (it may be 0.00) due on or after the day, then 1 to 60 monthly installments from a first due date after it,
  each the rest divided evenly to the cent, the last taking the remainder so they add up exactly. Every refusal
  names its field; one active plan per account (a database key).
* ``plan_standing``: what was due by each installment's date against what paid the plan: the payments posted since
  the plan began (a payment reversed by then does not count), less the bills issued since it began that have
  fallen due (a plan is kept on top of the current bills, not instead of them). An installment still short once
  ``Utility.plan_grace_days`` have passed after its date is missed.
* ``plans_review`` (the nightly job): each active plan with a missed installment is defaulted, naming it; one paid
  in full is completed.
* ``plan_bring_over``: a plan another system agreed, in force at a conversion's cutover: what is left of its
  schedule, paid from the cutover on.
* ``plan_hold``: what the shut-off guard is told (``termination.holds``) — a plan in good standing holds it.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_DOWN, Decimal

from django.db import IntegrityError, transaction

from accounts.models import Account
from billing.models import Bill, Payment
from billing.selectors import account_amounts_due
from core.clock import refuse_future
from core.dates import add_months, fmt_day
from core.errors import ApplicationError, Conflict, FieldError
from core.money import ZERO, fmt_dollars
from core.workflow import transition
from ordinance.selectors import installed_utility

from .models import PaymentPlan, PlanInstallment
from .signals import plan_defaulted

CENT = Decimal("0.01")
MOST_INSTALLMENTS = 60
DEFAULT_GRACE_DAYS = 10


def installment_amounts(rest: Decimal, count: int) -> list[Decimal]:
    """``rest`` in ``count`` even installments to the cent; the last takes the remainder."""
    each = (rest / count).quantize(CENT, rounding=ROUND_DOWN)
    return [each] * (count - 1) + [rest - each * (count - 1)]


def plan_create(*, account: Account, total: Decimal, down_payment: Decimal, down_due_on: date, installments: int,
                first_due_on: date, as_of: date, actor=None, note: str = "") -> PaymentPlan:
    errors: list[FieldError] = []
    try:
        refuse_future(as_of, doing="agreed")
    except ApplicationError as exc:
        errors.extend(exc.errors)
    owed = account_amounts_due(account_ids=[account.pk], as_of=as_of)[account.pk].amount
    if total <= ZERO:
        errors.append(FieldError(field="total", message="is more than 0.00: a plan covers an amount owed"))
    elif total > owed:
        errors.append(FieldError(field="total", message=f"{fmt_dollars(total)} is more than account "
                                                        f"{account.account_no} owes on {as_of} ({fmt_dollars(owed)})"))
    if down_payment < ZERO or down_payment >= total > ZERO:
        errors.append(FieldError(field="down_payment", message="is 0.00 or more, and less than the plan's total"))
    if down_due_on < as_of:
        errors.append(FieldError(field="down_due_on", message=f"{down_due_on} is before the plan is made ({as_of})"))
    if not 1 <= installments <= MOST_INSTALLMENTS:
        errors.append(FieldError(field="installments", message=f"is 1 to {MOST_INSTALLMENTS}"))
    if first_due_on <= down_due_on:
        errors.append(FieldError(field="first_due_on", message=f"{first_due_on} is not after the down payment's "
                                                               f"date ({down_due_on})"))
    if errors:
        raise ApplicationError(errors=errors)
    amounts = installment_amounts(total - down_payment, installments)
    try:
        with transaction.atomic():
            plan = PaymentPlan.objects.create(account=account, started_on=as_of, total=total, note=note.strip(),
                                              created_by=actor if getattr(actor, "pk", None) else None)
            rows = [PlanInstallment(plan=plan, number=0, due_on=down_due_on, amount=down_payment)] \
                if down_payment > ZERO else []
            rows += [PlanInstallment(plan=plan, number=n, due_on=add_months(first_due_on, n - 1), amount=amount)
                     for n, amount in enumerate(amounts, start=1)]
            PlanInstallment.objects.bulk_create(rows)
    except IntegrityError:
        raise Conflict(f"account {account.account_no} already has an active payment plan", field="account_no") \
            from None
    return plan


def plan_bring_over(*, account_id: int, started_on: date, schedule: list[tuple[date, Decimal]],
                    note: str) -> PaymentPlan:
    """A plan another system agreed, brought over in force by a conversion (in its transaction): what is left of
    its schedule as installments of their own dates and amounts, paid by the payments posted from ``started_on``
    (the cutover) on. The conversion checks the schedule against what the account owes."""
    plan = PaymentPlan.objects.create(account_id=account_id, started_on=started_on,
                                      total=sum((amount for _, amount in schedule), ZERO), note=note)
    PlanInstallment.objects.bulk_create([PlanInstallment(plan=plan, number=number, due_on=due_on, amount=amount)
                                         for number, (due_on, amount) in enumerate(sorted(schedule), start=1)])
    return plan


def plans_remove(plan_ids: list[int]) -> None:
    """Plans a conversion brought over, removed whole by its rollback."""
    PaymentPlan.objects.filter(pk__in=plan_ids).delete()


def grace_days() -> int:
    utility = installed_utility()
    return utility.plan_grace_days if utility is not None else DEFAULT_GRACE_DAYS


@dataclass(frozen=True)
class Standing:
    paid: Decimal  # what paid the plan: posted since it began, less the current bills fallen due
    due: Decimal  # due by today, installments summed
    missed: PlanInstallment | None  # the first installment short past its grace
    next_due: PlanInstallment | None  # the first installment not yet paid in full
    left: Decimal  # what the plan still wants

    @property
    def good(self) -> bool:
        return self.missed is None


def plan_paid(plan: PaymentPlan, *, as_of: date) -> Decimal:
    """What paid the plan by ``as_of``: the payments posted since it began (those reversed by then left out), less
    the bills issued since it began and due by then — the current bills are paid first, and only what is beyond
    them keeps the plan."""
    posted = sum((p.amount.amount for p in Payment.objects.filter(
        account_id=plan.account_id, paid_on__gte=plan.started_on, paid_on__lte=as_of)
        .exclude(reversal__reversed_on__lte=as_of)), ZERO)
    current = sum((b.total.amount for b in Bill.objects.filter(
        account_id=plan.account_id, bill_date__gte=plan.started_on, due_date__lte=as_of)
        .exclude(status=Bill.Status.VOID)), ZERO)
    return max(posted - current, ZERO)


def plan_standing(plan: PaymentPlan, *, as_of: date, grace: int | None = None) -> Standing:
    grace = grace_days() if grace is None else grace
    paid = plan_paid(plan, as_of=as_of)
    running, due, missed, next_due = ZERO, ZERO, None, None
    for installment in plan.installments.all():
        running += installment.amount.amount
        if installment.due_on <= as_of:
            due = running
        if running > paid:
            next_due = next_due or installment
            if missed is None and installment.due_on + timedelta(days=grace) < as_of:
                missed = installment
    return Standing(paid=paid, due=due, missed=missed, next_due=next_due,
                    left=max(plan.total.amount - paid, ZERO))


def plans_review(*, as_of: date) -> dict[str, int]:
    """Default each active plan with a missed installment, complete each paid in full; counts by outcome."""
    grace, counts = grace_days(), {"defaulted": 0, "completed": 0}
    for plan in PaymentPlan.objects.filter(status=PaymentPlan.Status.ACTIVE).prefetch_related("installments"):
        standing = plan_standing(plan, as_of=as_of, grace=grace)
        if standing.left <= ZERO:
            status, note = PaymentPlan.Status.COMPLETED, f"paid in full by {fmt_day(as_of)}"
        elif standing.missed is not None:
            m = standing.missed
            status = PaymentPlan.Status.DEFAULTED
            note = (f"{'the down payment' if m.number == 0 else f'installment {m.number}'} of "
                    f"{fmt_dollars(m.amount.amount)} due {fmt_day(m.due_on)} unpaid after {grace} days' grace")
        else:
            continue
        with transaction.atomic():
            transition(plan, to=status, note=note, changes={"status_note": note[:200], "status_changed_on": as_of})
            if status == PaymentPlan.Status.DEFAULTED:
                transaction.on_commit(lambda pk=plan.pk: plan_defaulted.send(sender=PaymentPlan, plan_id=pk))
        counts[status] += 1
    return counts


def plan_cancel(*, plan: PaymentPlan, why: str, as_of: date, actor=None) -> PaymentPlan:
    if not why.strip():
        raise ApplicationError("is required: why the plan ends", field="why")
    return transition(plan, to=PaymentPlan.Status.CANCELLED, actor=actor, note=why.strip(),
                      changes={"status_note": why.strip()[:200], "status_changed_on": as_of})


def plan_hold(account_id: int, as_of: date) -> list[str]:
    """For the shut-off guard: an active plan in good standing holds it (office policy)."""
    plan = PaymentPlan.objects.filter(account_id=account_id, status=PaymentPlan.Status.ACTIVE).first()
    if plan is None or not plan_standing(plan, as_of=as_of).good:
        return []
    return [f"payment plan {plan.number} of {plan.started_on} is in good standing: a shut-off waits while the "
            "customer keeps it (office policy)"]
