"""The payment plans in force in the old system at the cutover, checked all or nothing and brought over in force
(``arrears.services.plan_bring_over``): what is left of each plan's schedule, paid by the payments posted from the
cutover on, held to the shut-off guard like any plan in good standing.

Design overview:

* **The file** (``PLANS_LAYOUT``), one row per installment still to pay: ``account_no,agreed_on,due_on,amount``.
  The rows of an account are its plan; ``agreed_on`` (the day the old system agreed it, the same on each row) is
  kept in the plan's note. An installment due before the cutover and unpaid is brought over as it is (past due:
  the plan's grace then decides).
* **Checked as every import is**: every problem with its line and column, nothing saved — an unknown account, an
  account with an active plan of ours already, an amount that is not positive, a plan agreed after the day before
  the cutover, two agreed days for one plan, and a plan for more than the account owes in the opening balances.
* **Posted** in the conversion's transaction; the plans' ids are kept on the batch, so a rollback removes them and
  the reconciliation counts them and their totals.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from arrears.models import PaymentPlan
from arrears.services import plan_bring_over, plans_remove
from core.csvimport import CsvLayout, ImportErrors, chunked, csv_rows, dollars, identifier, import_source_read
from core.dates import iso_date
from core.money import ZERO, fmt_dollars

from .opening import ACCOUNT_KINDS, OpeningBalances, unknown_accounts

PLANS_LAYOUT = CsvLayout(required=("account_no", "agreed_on", "due_on", "amount"))


@dataclass
class PlanRows:
    account_no: str
    agreed_on: date
    line: int
    schedule: list[tuple[date, Decimal]] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        return sum((amount for _, amount in self.schedule), ZERO)



def plans_read(source, *, as_of: date, opening: OpeningBalances) -> list[PlanRows]:
    """The plans checked, all or nothing (``ImportRejected``, each problem naming ``plans.<column>``); a plan may
    cover at most what its account owes in ``opening`` (charges less credits)."""
    file = import_source_read(source)
    errors = ImportErrors(columns=PLANS_LAYOUT.columns)
    number = identifier(max_length=20)
    plans: dict[str, PlanRows] = {}
    for row in csv_rows(text=file.text, layout=PLANS_LAYOUT, errors=errors):
        account_no = errors.parse(row, "account_no", number)
        agreed_on = errors.parse(row, "agreed_on", iso_date)
        due_on = errors.parse(row, "due_on", iso_date)
        amount = errors.parse(row, "amount", dollars)
        if agreed_on is not None and agreed_on > as_of:
            errors.add(line=row.line, field="agreed_on", message=f"{agreed_on} is after {as_of}: a plan in force at "
                                                                 "the cutover was agreed before it")
        if agreed_on is not None and due_on is not None and due_on < agreed_on:
            errors.add(line=row.line, field="due_on", message=f"{due_on} is before the plan was agreed ({agreed_on})")
        if None in (account_no, agreed_on, due_on, amount):
            continue
        plan = plans.setdefault(account_no, PlanRows(account_no, agreed_on, row.line))
        if plan.agreed_on != agreed_on:
            errors.add(line=row.line, field="agreed_on", message=(
                f"account {account_no}'s plan was agreed on {plan.agreed_on} (line {plan.line}); one plan per "
                "account, the same day on each of its rows"))
            continue
        plan.schedule.append((due_on, amount))
    unknown_accounts(errors, {p.account_no: p.line for p in plans.values()})
    owed: dict[str, Decimal] = defaultdict(Decimal)  # each account's charges less its credits (deposits are held)
    for item in opening.items:
        if item.kind == "credit":
            owed[item.account_no] -= item.amount
        elif item.kind not in ACCOUNT_KINDS:
            owed[item.account_no] += item.amount
    for plan in plans.values():
        if plan.total > owed[plan.account_no]:
            errors.add(line=plan.line, field="amount", message=(
                f"account {plan.account_no}'s plan leaves {fmt_dollars(plan.total)} to pay, more than it owes in "
                f"the opening balances ({fmt_dollars(owed[plan.account_no])})"))
    for chunk in chunked(sorted(plans), 20_000):
        for account_no in PaymentPlan.objects.filter(account__account_no__in=list(chunk),
                                                     status=PaymentPlan.Status.ACTIVE) \
                .values_list("account__account_no", flat=True):
            errors.add(line=plans[account_no].line, field="account_no", message=(
                f"account {account_no} already has an active payment plan here"))
    errors.raise_if_any(file="plans")
    return list(plans.values())


def plans_post(plans: list[PlanRows], *, accounts: dict[str, int], cutover: date) -> dict:
    made = [plan_bring_over(account_id=accounts[p.account_no], started_on=cutover, schedule=p.schedule,
                            note=f"Brought over from the previous system, which agreed it on {p.agreed_on}; what was "
                                 "left of its schedule at the cutover.").pk for p in plans]
    return {"plans": made}


def plans_reconciled(made: list[dict], told: list[dict]) -> tuple[tuple[int, int], tuple[Decimal, Decimal]]:
    """The plans in the files against those on the books: (count, count) and (total, total)."""
    ids = [pk for m in made for pk in m.get("plans", [])]
    books = list(PaymentPlan.objects.filter(pk__in=ids).values_list("total", flat=True))
    return ((sum(t.get("plans", 0) for t in told), len(books)),
            (sum((Decimal(t.get("plans_total", "0")) for t in told), ZERO), sum(books, ZERO)))


def plans_remove_made(made: dict) -> None:
    plans_remove(made.get("plans", []))
