"""The day's reminders about bills, decided for a date from the bills and what is unpaid on them (``notices --date``
and the nightly job's ``customer_notices`` step):

* **Bill ready** — a bill issued that day: its total, what the account owes with it, its due date and a link to it.
  By text where the customer consented, and by e-mail to the accounts that get their bill on paper (a paperless
  account's e-mail carries the bill itself: ``portal.notify``); never on paper (the bill is the paper).
* **Due soon** — a bill with something unpaid whose due date is the office's ``reminder_days`` away: the amount, the
  due date, and the late charge that follows it with its section.
* **Late notice** — the day after the due date, a bill still unpaid: what is past due now, and what to pay by when
  to avoid the next late charge of the penalty rule in force, with its section ("pay $186.13 by April 1 to avoid
  the late payment penalty of 1% (§ 45.29 E) on April 2"). The night's late charges are posted before the notices
  are decided, so a charge falling today is already in the amount past due.

Each goes once per bill and kind (``notices_give_many``: the (kind, fact, way) key), in the account's language; an
account that has paid hears nothing. Decided from the facts of the date, so running the date again sends nothing new.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.conf import settings
from django.urls import reverse

from accounts.models import Account
from arrears.models import PaymentPlan
from arrears.services import grace_days, plan_paid
from billing.balances import balances
from billing.models import Bill
from billing.ordinance import ordinance_on
from core.dates import fmt_long_day
from core.i18n import customer_language
from core.money import ZERO, fmt_dollars

from .models import CustomerNotice
from .services import NoticeItem, notices_give_many

# How far ahead a penalty rule's days are looked for the next late charge.
LOOK_AHEAD = timedelta(days=400)


@dataclass(frozen=True)
class Reminder:
    kind: str
    account_id: int
    account_no: str
    bill_id: int
    bill_number: str
    due_date: date
    amount: Decimal  # due soon: the bill's unpaid amount; late: what avoids the next charge
    past_due: Decimal  # late: everything past due now, late charges included
    next_charge_on: date | None
    next_charge: str  # "late payment penalty: 1% (month 2)"
    citation: str

    @property
    def fact(self) -> str:
        return f"bill:{self.bill_id}"

    def as_dict(self) -> dict:
        return {"kind": self.kind, "account_no": self.account_no, "bill": self.bill_number,
                "due_date": self.due_date.isoformat(), "amount": f"{self.amount:.2f}",
                "past_due": f"{self.past_due:.2f}",
                "next_charge_on": self.next_charge_on.isoformat() if self.next_charge_on else None,
                "next_charge": self.next_charge, "citation": self.citation}


def reminders_decide(*, on: date) -> list[Reminder]:
    """The reminders and late notices ``on`` calls for, by account and bill (none is looked up in the log)."""
    ordinance = ordinance_on(on)
    scheme = ordinance.penalties
    days = ordinance.utility.reminder_days
    soon_on = on + timedelta(days=days) if days else None
    late_due = on - timedelta(days=1)
    bills = list(Bill.objects.exclude(status=Bill.Status.VOID).filter(issued_on__lte=on)
                 .filter(due_date__in=[d for d in (soon_on, late_due) if d is not None])
                 .values_list("id", "account_id", "number", "bill_date", "due_date"))
    if not bills:
        return []
    account_ids = sorted({row[1] for row in bills})
    owed = balances(account_ids, through=on, order=ordinance.payment_order)
    numbers = dict(Account.objects.filter(id__in=account_ids).values_list("id", "account_no"))
    all_due = dict(Bill.objects.filter(account_id__in=account_ids).exclude(status=Bill.Status.VOID)
                   .values_list("id", "due_date"))
    out = []
    for bill_id, account_id, number, bill_date, due_date in bills:
        state = owed[account_id]
        balance = state.bills.get((bill_date, bill_id))
        if balance is None or balance.unpaid_total <= ZERO or state.balance <= ZERO:
            continue  # paid (or covered by a credit): nothing to remind
        after = due_date if due_date == soon_on else on
        upcoming = [due for due in scheme.dates(bill_date=bill_date, due_date=due_date, through=on + LOOK_AHEAD)
                    if due.on > after]
        following = upcoming[0] if upcoming else None
        common = {"account_id": account_id, "account_no": numbers[account_id], "bill_id": bill_id,
                  "bill_number": number, "due_date": due_date, "next_charge_on": following.on if following else None,
                  "next_charge": following.description if following else "",
                  "citation": following.citation if following else scheme.citation}
        if due_date == soon_on:
            out.append(Reminder(kind=CustomerNotice.Kind.DUE_SOON, amount=balance.unpaid_total, past_due=ZERO,
                                **common))
        else:
            # Everything past due on the account, oldest first, is what the payment order pays first.
            past = [b for key, b in state.bills.items() if all_due.get(key[1], key[0]) < on]
            out.append(Reminder(kind=CustomerNotice.Kind.LATE_NOTICE,
                                amount=min(sum((b.unpaid_principal for b in past), ZERO), state.balance),
                                past_due=min(sum((b.unpaid_total for b in past), ZERO), state.balance), **common))
    return out


@dataclass(frozen=True)
class BillReady:
    kind: str
    account_id: int
    account_no: str
    paperless: bool
    bill_id: int
    bill_number: str
    public_id: str
    bill_date: date
    due_date: date
    amount: Decimal  # what is unpaid on the bill
    balance: Decimal  # what the account owes with it

    @property
    def fact(self) -> str:
        return f"bill:{self.bill_id}"

    def as_dict(self) -> dict:
        return {"kind": self.kind, "account_no": self.account_no, "bill": self.bill_number,
                "bill_date": self.bill_date.isoformat(), "due_date": self.due_date.isoformat(),
                "amount": f"{self.amount:.2f}", "balance": f"{self.balance:.2f}"}


def bills_ready_decide(*, on: date) -> list[BillReady]:
    """The bills issued ``on``, each with what is unpaid on it and on its account that day."""
    bills = list(Bill.objects.exclude(status=Bill.Status.VOID).filter(issued_on=on)
                 .values_list("id", "account_id", "number", "public_id", "bill_date", "due_date"))
    if not bills:
        return []
    account_ids = sorted({row[1] for row in bills})
    owed = balances(account_ids, through=on, order=ordinance_on(on).payment_order)
    accounts = {pk: (number, paperless) for pk, number, paperless in Account.objects.filter(id__in=account_ids)
                .values_list("id", "account_no", "paperless")}
    out = []
    for bill_id, account_id, number, public_id, bill_date, due_date in bills:
        state = owed[account_id]
        balance = state.bills.get((bill_date, bill_id))
        out.append(BillReady(kind=CustomerNotice.Kind.BILL_READY, account_id=account_id,
                             account_no=accounts[account_id][0], paperless=accounts[account_id][1], bill_id=bill_id,
                             bill_number=number, public_id=str(public_id), bill_date=bill_date, due_date=due_date,
                             amount=balance.unpaid_total if balance else ZERO, balance=max(state.balance, ZERO)))
    return out


def bills_ready_give(ready: list[BillReady], *, on: date) -> int:
    site = settings.SITE_URL.rstrip("/")
    return _give(ready, on=on, context_of=lambda r: {
        "bill_number": r.bill_number, "amount": fmt_dollars(r.amount), "balance": fmt_dollars(r.balance),
        "bill_on": fmt_long_day(r.bill_date), "due_on": fmt_long_day(r.due_date),
        "bill_url": site + reverse("portal:bill", kwargs={"public_id": r.public_id})},
        channels_of=lambda r: ("text",) if r.paperless else ("email", "text"))


def reminders_give(reminders: list[Reminder], *, on: date) -> int:
    """Tell each account once (a reminder already given is nothing to do), in bulk: the e-mails and texts are
    queued for a worker. Returns how many were given now."""
    return _give(reminders, on=on, context_of=lambda r: {
        "bill_number": r.bill_number, "due_on": fmt_long_day(r.due_date), "amount": fmt_dollars(r.amount),
        "past_due": fmt_dollars(r.past_due), "citation": r.citation, "next_charge": r.next_charge,
        "next_on": fmt_long_day(r.next_charge_on) if r.next_charge_on else "",
        "pay_by": fmt_long_day(r.next_charge_on - timedelta(days=1)) if r.next_charge_on else ""})


def _give(reminders: list, *, on: date, context_of, channels_of=None) -> int:
    """Each reminder (with its ``kind``, ``fact`` and ``account_id``) as a notice in its account's language, its
    own facts written by ``context_of`` in that language; ``channels_of``: the ways it may take (every way by
    default)."""
    if not reminders:
        return 0
    accounts = {a.pk: a for a in Account.objects.filter(pk__in={r.account_id for r in reminders})
                .select_related("owner", "premises")}
    utility = ordinance_on(on).utility
    items = []
    for reminder in reminders:
        account = accounts[reminder.account_id]
        with customer_language(account):
            context = {"utility": utility, "site_url": settings.SITE_URL, **context_of(reminder)}
        items.append(NoticeItem(account=account, kind=reminder.kind, fact=reminder.fact,
                                template=f"notices/email/{reminder.kind}.txt", context=context,
                                **({"channels": channels_of(reminder)} if channels_of else {})))
    return notices_give_many(items)


@dataclass(frozen=True)
class InstallmentReminder:
    kind: str
    installment_id: int
    account_id: int
    account_no: str
    number: int
    due_on: date
    amount: Decimal  # what is left of it
    keep_by: date | None  # missed: the last day of the grace

    @property
    def fact(self) -> str:
        return f"installment:{self.installment_id}"

    def as_dict(self) -> dict:
        return {"kind": self.kind, "account_no": self.account_no, "installment": self.number,
                "due_date": self.due_on.isoformat(), "amount": f"{self.amount:.2f}",
                "keep_by": self.keep_by.isoformat() if self.keep_by else None}


def installment_reminders_decide(*, on: date) -> list[InstallmentReminder]:
    """The active payment plans' installments due in the office's ``reminder_days`` and those missed yesterday, each
    with what is left of it (what paid the plan pays its installments in order)."""
    days = ordinance_on(on).utility.reminder_days
    soon_on = on + timedelta(days=days) if days else None
    missed_on = on - timedelta(days=1)
    wanted = {d for d in (soon_on, missed_on) if d is not None}
    plans = (PaymentPlan.objects.filter(status=PaymentPlan.Status.ACTIVE, installments__due_on__in=wanted)
             .distinct().select_related("account").prefetch_related("installments"))
    grace = grace_days()
    out = []
    for plan in plans:
        paid = plan_paid(plan, as_of=on)
        running = ZERO
        for installment in plan.installments.all():
            before = running
            running += installment.amount.amount
            left = min(installment.amount.amount, max(running - paid, ZERO)) if paid > before else \
                installment.amount.amount
            if installment.due_on not in wanted or left <= ZERO:
                continue
            missed = installment.due_on == missed_on
            out.append(InstallmentReminder(
                kind=CustomerNotice.Kind.INSTALLMENT_MISSED if missed else CustomerNotice.Kind.INSTALLMENT_DUE,
                installment_id=installment.pk, account_id=plan.account_id, account_no=plan.account.account_no,
                number=installment.number, due_on=installment.due_on, amount=left,
                keep_by=installment.due_on + timedelta(days=grace) if missed else None))
    return out


def installment_reminders_give(reminders: list[InstallmentReminder], *, on: date) -> int:
    return _give(reminders, on=on, context_of=lambda r: {
        "number": r.number, "amount": fmt_dollars(r.amount), "due_on": fmt_long_day(r.due_on),
        "keep_by": fmt_long_day(r.keep_by) if r.keep_by else ""})


@dataclass(frozen=True)
class Decided:
    """The notices a date calls for, by what they are about."""

    ready: list[BillReady]
    reminders: list[Reminder]
    installments: list[InstallmentReminder]

    def __len__(self) -> int:
        return len(self.ready) + len(self.reminders) + len(self.installments)

    def all(self) -> list:
        return [*self.ready, *self.reminders, *self.installments]


def day_notices_decide(*, on: date) -> Decided:
    return Decided(ready=bills_ready_decide(on=on), reminders=reminders_decide(on=on),
                   installments=installment_reminders_decide(on=on))


def day_notices_give(decided: Decided, *, on: date) -> int:
    """Give each once; returns how many were new."""
    return (bills_ready_give(decided.ready, on=on) + reminders_give(decided.reminders, on=on)
            + installment_reminders_give(decided.installments, on=on))


def nightly_customer_notices(*, as_of: date) -> dict:
    """The nightly job's step: the day's bills ready, reminders and late notices, and the plans' installments due
    and missed, each once."""
    decided = day_notices_decide(on=as_of)
    return {"reminders_decided": len(decided), "reminders_given": day_notices_give(decided, on=as_of)}
