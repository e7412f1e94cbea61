"""Reads: statements and balances as of a date."""

from datetime import date
from decimal import Decimal

from django.db.models import Q

from accounts.models import Account
from waterbilling.errors import NotFound

from .ledger import allocate
from .models import Bill, LedgerEntry, Payment
from .money import ZERO
from .services.ledger import entries_for_accounts


def _money(value: Decimal) -> str:
    return f"{value:.2f}"


def _rate(value: Decimal) -> str:
    """At least two decimals, more only when the rate has them (0.0015)."""
    text = f"{Decimal(value).normalize():f}"
    return _money(value) if len(text.partition(".")[2]) <= 2 else text


def bills_using_reading(*, reading_id: int) -> list[Bill]:
    """The bills in force (not void) that used the reading as their start or end reading, by number.

    Registered with meters (``apps.py``): such a reading is final, since what those bills say rests on it.
    """
    return list(Bill.objects.exclude(status=Bill.Status.VOID)
                .filter(Q(start_reading_id=reading_id) | Q(end_reading_id=reading_id)).order_by("number"))


def account_get(*, account_no: str) -> Account:
    try:
        return Account.objects.select_related("owner", "occupant", "premises").get(account_no=account_no)
    except Account.DoesNotExist as exc:
        raise NotFound(f"no account '{account_no}'", field="account_no") from exc


def account_statement(*, account: Account, as_of: date) -> dict:
    """The account as of a date, in the statement JSON contract (PRODUCT.md).

    A bill's ``balance`` is its own charges still unpaid (penalties are listed under ``charges``), and the
    account's ``balance`` is everything unpaid less any unapplied credit.
    """
    state = allocate(entries_for_accounts([account.id], through=as_of).get(account.id, []))
    bills = (Bill.objects.filter(account=account, bill_date__lte=as_of).exclude(status=Bill.Status.VOID)
             .prefetch_related("lines").order_by("bill_date", "id"))
    bill_numbers = {}
    out_bills = []
    for bill in bills:
        bill_numbers[bill.id] = bill.number
        balance = state.bills.get((bill.bill_date, bill.id))
        out_bills.append({
            "number": bill.number, "bill_date": bill.bill_date.isoformat(), "due_date": bill.due_date.isoformat(),
            "period_start": bill.period_start.isoformat(), "period_end": bill.period_end.isoformat(),
            "gallons": bill.gallons, "total": _money(bill.total.amount),
            "balance": _money(balance.unpaid_principal if balance else ZERO),
            "estimated": bill.estimated,
            "lines": [{"kind": line.kind, "description": line.description, "citation": line.citation,
                       "quantity": f"{line.quantity.normalize():f}", "rate": _rate(line.rate),
                       "amount": _money(line.amount.amount)} for line in bill.lines.all()],
        })
    charges = []
    for entry in (LedgerEntry.objects.filter(account=account, posted_on__lte=as_of)
                  .exclude(kind__in=[LedgerEntry.Kind.WATER, LedgerEntry.Kind.PAYMENT])
                  .select_related("bill").order_by("posted_on", "id")):
        charges.append({"kind": entry.kind, "date": entry.posted_on.isoformat(), "amount": _money(entry.amount.amount),
                        "citation": entry.citation, "description": entry.description,
                        "bill": entry.bill.number if entry.bill_id else None})
    payments = [{"paid_on": p.paid_on.isoformat(), "amount": _money(p.amount.amount), "reference": p.reference}
                for p in Payment.objects.filter(account=account, paid_on__lte=as_of).order_by("paid_on", "id")]
    return {"account_no": account.account_no, "as_of": as_of.isoformat(), "balance": _money(state.balance),
            "bills": out_bills, "charges": charges, "payments": payments}
