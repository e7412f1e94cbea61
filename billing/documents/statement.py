"""The account statement as of a date, printed with the bill's look: the letterhead, the owner in the
envelope window, what is owed (balance, past due, next due date), the bills, and the ledger with the
running balance and, under each payment, what it paid (``billing.selectors.account_ledger``).

Formatted here, so the template only places text; rendered by ``core.documents``. The file's date is the
statement's date, never the clock, so the same statement prints the same bytes.
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time

from core.dates import fmt_day
from core.documents import PdfInfo, pdf_one_file
from core.money import fmt_dollars, fmt_gallons
from ordinance.selectors import installed_utility

from ..models import Bill, PriorPayment, PriorRelevy
from ..selectors import account_amounts_due, account_deposits, account_ledger, account_statement

TEMPLATE = "billing/statement.html"
STYLESHEET = "billing/statement.css"


@dataclass(frozen=True)
class StatementLine:
    day: str
    what: str
    detail: str
    charge: str
    credit: str
    balance: str
    paid: tuple[str, ...] = ()


@dataclass(frozen=True)
class StatementView:
    title: str
    created_at: datetime
    utility_name: str
    utility_header: str
    facts: list[tuple[str, str]]
    addressee: str
    owed: list[tuple[str, str]]
    bills: list[tuple[str, ...]]
    lines: list[StatementLine]
    deposits: list[str]
    footer: str
    prior_payments: list[str] = ()  # paid to the village's previous billing system: history, not on the books
    prior_relevies: list[str] = ()  # relevied to the tax roll by the previous system: history, not owed


def _lines_of(text: str) -> str:
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def statement_view(*, account, as_of: date) -> StatementView:
    utility = installed_utility()
    statement = account_statement(account=account, as_of=as_of)
    due = account_amounts_due(account_ids=[account.id], as_of=as_of)[account.id]
    rows = account_ledger(account=account, as_of=as_of)
    unpaid = {b["number"]: b["balance"] for b in statement["bills"]}
    bills = [(b.number, fmt_day(b.bill_date), fmt_day(b.due_date), f"{fmt_gallons(b.gallons)} gal",
              fmt_dollars(b.total.amount),
              "void" if b.status == Bill.Status.VOID else fmt_dollars(unpaid.get(b.number, 0)))
             for b in Bill.objects.filter(account=account, bill_date__lte=as_of).order_by("bill_date", "id")]
    lines = []
    for row in rows:
        paid = tuple(f"paid {fmt_dollars(p.amount)} of {p.what}, {p.category_words}"
                     + (f" (on {fmt_day(p.applied_on)})" if p.applied_on else "") for p in row.paid)
        if row.waiting:
            paid += (f"{fmt_dollars(row.waiting)} left as a credit on the account",)
        if row.reversed_on:
            paid += (f"reversed on {fmt_day(row.reversed_on)}",)
        lines.append(StatementLine(
            day=fmt_day(row.on), what=row.label, detail=row.detail,
            charge=fmt_dollars(row.amount) if row.amount > 0 else "",
            credit=fmt_dollars(-row.amount) if row.amount < 0 else "",
            balance=fmt_dollars(row.balance), paid=paid))
    header = "\n".join([*([utility.chapter] if utility and utility.chapter else []),
                        *(_lines_of(utility.office_address).splitlines() if utility else []),
                        *([f"Phone {utility.phone}"] if utility and utility.phone else [])])
    owner = account.owner
    owed = [("Balance", fmt_dollars(statement["balance"])), ("Past due now", fmt_dollars(due.past_due))]
    if due.due_date:
        owed.append(("Next due date", fmt_day(due.due_date)))
    deposits = [f"{d['description']} ({d['citation']}): {fmt_dollars(d['amount'].lstrip('-'))} received "
                f"{fmt_day(date.fromisoformat(d['received_on']))}, {d['status']}" + (
                    f" on {fmt_day(date.fromisoformat(d['refunded_on']))}" if d["refunded_on"] else "")
                for d in account_deposits(account=account, as_of=as_of)]
    name = utility.name if utility else ""
    return StatementView(
        title=f"Statement of account {account.account_no} as of {fmt_day(as_of)}",
        created_at=datetime.combine(as_of, time(), tzinfo=UTC),
        utility_name=name, utility_header=header,
        facts=[("Account number", account.account_no), ("Service address", account.premises.service_address),
               ("Statement as of", fmt_day(as_of))],
        addressee=f"{owner.name}\n{_lines_of(owner.mailing_address)}", owed=owed, bills=bills, lines=lines,
        deposits=deposits,
        prior_payments=[f"{fmt_day(p.paid_on)}: {fmt_dollars(p.amount.amount)}"
                        + (f" ({p.reference})" if p.reference else "")
                        for p in PriorPayment.objects.filter(account=account, paid_on__lte=as_of).order_by("paid_on",
                                                                                                            "id")],
        prior_relevies=[f"{fmt_day(r.relevied_on)}: {fmt_dollars(r.amount.amount)} to the {r.tax_roll}"
                        for r in PriorRelevy.objects.filter(account=account, relevied_on__lte=as_of)
                        .order_by("relevied_on", "id")],
        footer=f"{name}: every bill, charge, payment and credit of the account through {fmt_day(as_of)}, oldest "
               "first, with the balance after each. What a payment paid is as the payment was applied.")


def statement_pdf(*, account, as_of: date) -> bytes:
    view = statement_view(account=account, as_of=as_of)
    return pdf_one_file(template=TEMPLATE, stylesheet=STYLESHEET, context_name="statements", documents=[view],
                        info=PdfInfo(title=view.title, author=view.utility_name, created=view.created_at), batch=1)
