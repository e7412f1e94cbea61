"""Reads for the customer portal. Every account and bill is fetched through the requesting user's links,
so another customer's identifiers answer 404 exactly as identifiers that do not exist."""

from datetime import date
from decimal import Decimal
from uuid import UUID

from django.http import Http404

from accounts.models import Account
from billing.charts import chart_points
from billing.documents.bill import line_views
from billing.documents.money_box import money_box
from billing.ledger.allocation import DEPOSIT_KINDS
from billing.models import Bill, Payment
from billing.ordinance import ordinance_on
from billing.selectors import (
    account_amounts_due,
    account_deposits,
    account_statement,
    bill_balances,
    bill_status,
    bill_summaries,
    consumption_history,
)


def account_list_for_customer(user) -> list[Account]:
    if not user.is_authenticated:
        return []
    return list(Account.objects.filter(portal_links__user=user).select_related("premises")
                .order_by("account_no"))


def account_cards_for_customer(user, *, as_of: date) -> list[dict]:
    """The home page: each linked account with the amount due and when."""
    accounts = account_list_for_customer(user)
    due = account_amounts_due(account_ids=[a.id for a in accounts], as_of=as_of)
    return [{"account": a, "due": due[a.id]} for a in accounts]


def account_get_for_customer(user, public_id: UUID | str) -> Account:
    if not user.is_authenticated:
        raise Http404("no such account")
    try:
        return Account.objects.select_related("premises", "owner").get(public_id=public_id,
                                                                       portal_links__user=user)
    except (Account.DoesNotExist, ValueError) as exc:
        raise Http404("no such account") from exc


def bill_get_for_customer(user, public_id: UUID | str) -> Bill:
    if not user.is_authenticated:
        raise Http404("no such bill")
    try:
        return (Bill.objects.select_related("account__premises", "start_reading__meter", "end_reading__meter")
                .exclude(status=Bill.Status.VOID)
                .get(public_id=public_id, account__portal_links__user=user))
    except (Bill.DoesNotExist, ValueError) as exc:
        raise Http404("no such bill") from exc


def account_overview(*, account: Account, as_of: date) -> dict:
    """Balance, bills (newest first), payments and the consumption chart points of one account."""
    statement = account_statement(account=account, as_of=as_of)
    deposits = account_deposits(account=account, as_of=as_of)
    bills = list(Bill.objects.filter(account=account, issued_on__lte=as_of).exclude(status=Bill.Status.VOID)
                 .order_by("-bill_date", "-id"))
    balances = bill_balances(account=account, as_of=as_of)
    history = consumption_history(account_ids=[account.id], through=as_of).get(account.id, [])
    return {
        "balance": statement["balance"],
        "due": account_amounts_due(account_ids=[account.id], as_of=as_of)[account.id],
        "bills": [{"bill": b, "unpaid": balances[b.pk].unpaid_total if b.pk in balances else 0,
                   "status": bill_status(balances.get(b.pk))} for b in bills],
        "payments": list(Payment.objects.filter(account=account, paid_on__lte=as_of).order_by("-paid_on", "-id")),
        # Deposits are the customer's money held: shown in their own section, not among the charges.
        "charges": [c for c in statement["charges"] if c["kind"] not in DEPOSIT_KINDS],
        "deposits": deposits,
        "deposits_held": sum((Decimal(d["amount"]) for d in deposits if d["status"] == "held"), Decimal(0)),
        "points": chart_points(history, through=as_of),
    }


def bill_detail(*, bill: Bill, as_of: date) -> dict:
    """What the bill page shows: the same figures, rows and formatters as the paper bill."""
    account_id = bill.account_id
    history = consumption_history(account_ids=[account_id], through=bill.bill_date).get(account_id, [])
    summary = bill_summaries(bills=[bill])[bill.pk]
    scheme = ordinance_on(bill.bill_date).penalties
    balance = bill_balances(account=bill.account, as_of=as_of).get(bill.pk)
    return {
        "lines": line_views(bill.lines.all()),
        "box": money_box(summary, late_charges=scheme.late_charges_label),
        "status": bill_status(balance),
        "unpaid": balance.unpaid_total if balance else 0,
        "late_words": scheme.words,
        "penalty_citation": getattr(scheme, "citation", ""),
        "readings": [(label, r) for label, r in (("Previous", bill.start_reading), ("Current", bill.end_reading))
                     if r is not None],
        "points": chart_points(history, through=bill.bill_date),
    }

