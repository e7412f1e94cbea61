"""The day's cash report: what came in on a day, by tender, and what the counter's drawer should hold.

* **Lines.** Every payment dated that day (the counter's, the batch page's, a bank file's, the API's, a
  transfer's), and every reversal made that day as a negative line with the reversed payment's tender. One dated
  on a day already closed (the day's close) is on the report of the day it was entered, its own date shown,
  so a closed day's report never changes.
* **By tender.** Lines grouped by tender (cash, check, card, bank file), each with its count and total; the
  day's grand total is the sum of the lines.
* **The drawer.** What is physically in the counter's drawer at the end of the day: the cash and checks
  taken at the counter that day, less those of them handed back the same day (reversed that day for any
  reason but a misposting: a misposted payment's money stays in the drawer, only its account changes).
  A check returned by the bank days later left the drawer when it was deposited: it is a negative line of
  the day it is reversed, not a drawer item.

Money is added in Python with Decimal (SQLite sums decimals in floating point).
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models.functions import Coalesce

from accounts.models import Account
from accounts.selectors import account_find
from core.money import ZERO, fmt_dollars

from .ledger.selectors import account_balances
from .models import LedgerEntry, Payment, PaymentReversal
from .selectors import account_amounts_due
from .services.payments import PaymentsPosted

TENDER = Payment.Tender
DRAWER_TENDERS = (TENDER.CASH.value, TENDER.CHECK.value)
COUNTER = "counter"


@dataclass(frozen=True)
class CashLine:
    reference: str
    account_no: str
    name: str
    tender: str
    check_number: str
    amount: Decimal  # negative for a reversal
    clerk: str
    source: str  # the payment's source; "reversal" for a reversal line
    payment_id: int
    dated: date | None = None  # a late entry's own date, its day closed when it was entered

    @property
    def amount_text(self) -> str:
        return fmt_dollars(self.amount)


@dataclass(frozen=True)
class TenderTotal:
    tender: str
    count: int
    total: Decimal

    @property
    def label(self) -> str:
        return TENDER(self.tender).label

    @property
    def total_text(self) -> str:
        return fmt_dollars(self.total)


@dataclass(frozen=True)
class CashDay:
    on: date
    lines: list[CashLine]  # payments by tender then reference, then the day's reversals
    tenders: list[TenderTotal]  # in the order of ``Payment.Tender``
    drawer: Decimal
    drawer_cash: Decimal
    drawer_checks: Decimal
    drawer_count: int
    total: Decimal

    def __getattr__(self, name: str) -> str:
        # ``drawer_text``, ``total_text``…: an amount as people read it, for the page.
        if name.endswith("_text") and name[:-5] in ("drawer", "drawer_cash", "drawer_checks", "total"):
            return fmt_dollars(getattr(self, name[:-5]))
        raise AttributeError(name)


def _clerk(user) -> str:
    return (user.get_full_name() or user.get_username()) if user is not None else ""


def cash_day(*, on: date) -> CashDay:
    """The cash report of ``on``: the day's payments and reversals by tender, the drawer, the grand total."""
    # A payment or reversal belongs to the day it reached the books: its own, or for one dated on a day already
    # closed, the day it was entered (``LedgerEntry.booked_on``), so a closed day's report never changes.
    payments = list(Payment.objects.annotate(day=Coalesce("entry__booked_on", "paid_on")).filter(day=on)
                    .select_related("account__owner", "entered_by").order_by("id"))
    reversal_ids = [int(source.split(":", 1)[1]) for source in LedgerEntry.objects.annotate(
        day=Coalesce("booked_on", "posted_on")).filter(kind=LedgerEntry.Kind.PAYMENT_REVERSAL, day=on)
        .values_list("source", flat=True)]
    reversals = list(PaymentReversal.objects.filter(id__in=reversal_ids)
                     .select_related("payment__account__owner", "created_by").order_by("id"))
    order = {t: i for i, t in enumerate(TENDER.values)}
    lines = [CashLine(reference=p.reference, account_no=p.account.account_no, name=p.account.owner.name,
                      tender=p.tender, check_number=p.check_number, amount=p.amount.amount,
                      clerk=_clerk(p.entered_by), source=p.source, payment_id=p.pk,
                      dated=p.paid_on if p.paid_on != on else None)
             for p in sorted(payments, key=lambda p: (order.get(p.tender, 99), p.reference.lower()))]
    lines += [CashLine(reference=r.payment.reference, account_no=r.payment.account.account_no,
                       name=r.payment.account.owner.name, tender=r.payment.tender,
                       check_number=r.payment.check_number, amount=-r.payment.amount.amount,
                       clerk=_clerk(r.created_by), source="reversal", payment_id=r.payment_id,
                       dated=r.reversed_on if r.reversed_on != on else None)
              for r in reversals]
    tenders = []
    for tender in TENDER.values:
        amounts = [line.amount for line in lines if line.tender == tender]
        if amounts:
            tenders.append(TenderTotal(tender=tender, count=len(amounts), total=sum(amounts, ZERO)))
    handed_back = {r.payment_id for r in reversals if r.reason != PaymentReversal.Reason.MISPOSTED}
    in_drawer = [p for p in payments if p.source == COUNTER and p.tender in DRAWER_TENDERS
                 and p.pk not in handed_back]
    cash = sum((p.amount.amount for p in in_drawer if p.tender == TENDER.CASH), ZERO)
    checks = sum((p.amount.amount for p in in_drawer if p.tender == TENDER.CHECK), ZERO)
    return CashDay(on=on, lines=lines, tenders=tenders, drawer=cash + checks, drawer_cash=cash,
                   drawer_checks=checks, drawer_count=len(in_drawer), total=sum((x.amount for x in lines), ZERO))


CSV_HEADER = ("reference", "account_no", "name", "tender", "check_number", "amount", "clerk", "source")


def cash_day_rows(day: CashDay) -> list[list[str]]:
    """The report as CSV rows: a header, one row per line, then the totals by tender, the drawer and the day."""
    rows = [list(CSV_HEADER)]
    rows += [[x.reference, x.account_no, x.name, x.tender, x.check_number, f"{x.amount:.2f}", x.clerk, x.source]
             for x in day.lines]
    rows += [[f"Total {t.tender}", "", "", t.tender, "", f"{t.total:.2f}", "", f"{t.count} lines"]
             for t in day.tenders]
    rows.append(["Drawer (cash and checks taken at the counter)", "", "", "", "", f"{day.drawer:.2f}", "",
                 f"{day.drawer_count} payments"])
    rows.append(["Total", "", "", "", "", f"{day.total:.2f}", "", f"{len(day.lines)} lines"])
    return rows


# --- the counter ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CounterAccount:
    """What the clerk sees of an account before taking its payment."""

    account_no: str
    name: str
    service_address: str
    amount_due: Decimal  # everything owed now (never negative)
    past_due: Decimal  # the part of it already past due
    due_date: date | None  # when the rest is due
    balance: Decimal  # the ledger's balance: negative is a credit

    def __getattr__(self, name: str) -> str:
        # ``amount_due_text``, ``past_due_text``, ``balance_text``: amounts as people read them, for the page.
        if name.endswith("_text") and name[:-5] in ("amount_due", "past_due", "balance"):
            return fmt_dollars(getattr(self, name[:-5]))
        raise AttributeError(name)


def counter_account(*, account_no: str, as_of: date) -> CounterAccount | None:
    """The account the clerk typed, with what it owes as of ``as_of``; None when there is no such account."""
    account = account_find(account_no or "", Account.objects.select_related("owner", "premises"))
    if account is None:
        return None
    due = account_amounts_due(account_ids=[account.pk], as_of=as_of)[account.pk]
    balance = account_balances([account.pk], through=as_of)[account.pk].balance
    return CounterAccount(account_no=account.account_no, name=account.owner.name,
                          service_address=account.premises.service_address, amount_due=due.amount,
                          past_due=due.past_due, due_date=due.due_date, balance=balance)


# --- a file imported by a worker ------------------------------------------------------------------------

def import_job_payments_posted(*, job) -> PaymentsPosted:
    """What a payment file imported by a worker (a ``core.ImportJob``) posted, with its dollars by tender: the
    payments its user imported while it ran (the job keeps only its counts)."""
    if job.started_at is None or job.finished_at is None:
        return PaymentsPosted(created=job.created, skipped=job.skipped)
    amounts: dict[str, list[Decimal]] = {}
    for tender, amount in Payment.objects.filter(
            source="import", entered_by=job.created_by, created_at__gte=job.started_at,
            created_at__lte=job.finished_at).values_list("tender", "amount"):
        amounts.setdefault(tender, []).append(amount)
    return PaymentsPosted(created=job.created, skipped=job.skipped,
                          total=sum((a for values in amounts.values() for a in values), ZERO),
                          by_tender=tuple((t, len(amounts[t]), sum(amounts[t], ZERO))
                                          for t in TENDER.values if t in amounts))
