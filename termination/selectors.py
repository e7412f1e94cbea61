"""What the termination pages, commands and API read: who is delinquent, a case's deadlines and stage, the
board of cases by stage, and a case as the ``termination show --json`` contract has it."""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from django.utils.translation import gettext

from accounts.models import Account
from billing.balances import accounts_that_may_owe, balances, bill_id_of, paid_since
from billing.models import Bill, PendingCharge
from billing.services.charges import charge_terms
from core.errors import ApplicationError, NotFound
from core.money import ZERO, fmt_dollars
from ordinance.selectors import installed_utility

from .models import ACTIVE, CaseBill, Notice, TerminationCase
from .policy import RECEIVED_WHEN_SERVED, TerminationPolicy, termination_policy


@dataclass(frozen=True)
class DelinquentBill:
    bill_id: int
    number: str
    bill_date: date
    due_date: date
    delinquent_from: date
    amount: Decimal  # what of the bill the ground covers: the case's amount for it
    parts: tuple[str, ...] = ()  # that amount in words, by ground


@dataclass(frozen=True)
class Delinquency:
    account_id: int
    account_no: str
    owner: str
    service_address: str
    amount: Decimal
    bills: list[DelinquentBill] = field(default_factory=list)
    case_number: str | None = None


def _fines_of(bill_ids) -> dict[int, list[tuple[date, Decimal]]]:
    """Each bill's fines, (day charged, amount), oldest first."""
    out: dict[int, list[tuple[date, Decimal]]] = defaultdict(list)
    for bill_id, charged_on, amount in (PendingCharge.objects.filter(
            bill_id__in=list(bill_ids), kind=PendingCharge.Kind.FINE, cancelled_at__isnull=True)
            .order_by("charged_on", "id").values_list("bill_id", "charged_on", "amount")):
        out[bill_id].append((charged_on, amount))
    return out


def list_floor() -> Decimal:
    """The office's floor under shut-off and relevy lists (``Utility.list_floor``, office policy)."""
    utility = installed_utility()
    return utility.list_floor if utility else ZERO


def delinquencies(*, as_of: date, account_ids=None, policy: TerminationPolicy | None = None,
                  floor: Decimal | None = None) -> list[Delinquency]:
    """Accounts a nonpayment case may be opened for on ``as_of`` under the preset's rule, each with what of
    each delinquent bill the ground covers (``Trigger.eligible``: never a fee the section does not name, never
    rents not yet eligible beside an eligible fine), as the ledger allocates payments. An account whose eligible
    amount is below ``floor`` (the office's, ``list_floor()``, unless given) is left out; so is every account
    where the chapter grants no shut-off for nonpayment. ``account_ids`` limits the look."""
    policy = policy or termination_policy()
    if not policy.nonpayment:
        return []
    floor = list_floor() if floor is None else floor
    trigger = policy.trigger
    bills = Bill.objects.exclude(status=Bill.Status.VOID).filter(issued_on__lte=as_of)
    if account_ids is not None:
        bills = bills.filter(account_id__in=list(account_ids))
    # Only bills old enough to be delinquent can be: a cheap first cut before the ledger is replayed.
    earliest_days = min(trigger.days, trigger.fine_days or trigger.days)
    bills = bills.filter(bill_date__lte=as_of - timedelta(days=earliest_days))
    rows = {b[0]: b for b in bills.values_list("id", "account_id", "number", "bill_date", "due_date")}
    if not rows:
        return []
    fines = _fines_of(rows) if trigger.fine_days is not None else {}
    # An account whose ledger nets to zero (and has no charge below zero) owes nothing on any bill: not replayed.
    accounts_with_bills = {row[1] for row in rows.values()}
    # Every account asked at once unless a few are: faster than an IN list of nearly all of them.
    may_owe = accounts_that_may_owe(through=as_of, account_ids=None if account_ids is None else accounts_with_bills)
    candidates = sorted(accounts_with_bills.intersection(may_owe))
    if not candidates:
        return []
    owed = balances(candidates, through=as_of)
    owing: dict[int, list[DelinquentBill]] = {}
    for account_id in candidates:
        found = []
        for bill_id, balance in owed[account_id].on_bills().items():
            row = rows.get(bill_id)
            if row is None or balance.unpaid_total <= ZERO:
                continue
            eligible = trigger.eligible(bill_date=row[3], due_date=row[4], unpaid=balance.unpaid,
                                        fines=fines.get(row[0], []), as_of=as_of)
            if eligible is not None:
                found.append(DelinquentBill(bill_id=row[0], number=row[2], bill_date=row[3], due_date=row[4],
                                            delinquent_from=eligible.since, amount=eligible.amount,
                                            parts=eligible.parts))
        if found and sum((b.amount for b in found), ZERO) >= floor:
            owing[account_id] = found
    if not owing:
        return []
    open_cases = dict(TerminationCase.objects.filter(account_id__in=list(owing), status__in=[*ACTIVE, "shut_off"])
                      .values_list("account_id", "number"))
    accounts = {row[0]: row[1:] for row in Account.objects.filter(id__in=list(owing)).values_list(
        "id", "account_no", "owner__name", "premises__service_address")}
    out = []
    for account_id, found in owing.items():
        account_no, owner, service_address = accounts[account_id]
        out.append(Delinquency(account_id=account_id, account_no=account_no, owner=owner,
                               service_address=service_address, amount=sum((b.amount for b in found), ZERO),
                               bills=sorted(found, key=lambda b: (b.bill_date, b.bill_id)),
                               case_number=open_cases.get(account_id)))
    return sorted(out, key=lambda d: d.account_no)


def case_unpaid(case: TerminationCase, *, as_of: date) -> Decimal:
    """What is still unpaid on ``as_of`` of the amount the case is for: zero ends the ground. The case is for the
    eligible amount only, so paying that amount ends it even if other charges remain, however the payment order
    allocates the money (a payment to several bills pays the oldest first): what the customer has paid since the
    case opened counts against the case's amount, and so does whatever the ledger shows paid of what the ground
    covers on the case's bills. A reversed payment never counts (``billing.balances.paid_since`` leaves it out)."""
    if case.grounds != "nonpayment":
        return ZERO
    policy = termination_policy()
    bills = dict(case.bills.values_list("bill_id", "bill__bill_date"))
    state = balances([case.account_id], through=as_of, paid_bills=True)[case.account_id]
    fines = _fines_of(bills) if policy.trigger.fine_days is not None else {}
    due_dates = dict(Bill.objects.filter(id__in=list(bills)).values_list("id", "due_date"))
    covered = ZERO
    for key, balance in state.bills.items():
        if bill_id_of(key) in bills:
            # As of the day the case opened at the latest: what became eligible since is not this case's.
            eligible = policy.trigger.eligible(bill_date=key[0], due_date=due_dates[key[1]], unpaid=balance.unpaid,
                                               fines=fines.get(key[1], []), as_of=min(as_of, max(case.opened_on,
                                                                                              key[0])))
            covered += eligible.amount if eligible else ZERO
    paid = paid_since(case.account_id, since=case.opened_on, through=as_of)
    return max(ZERO, min(covered, case.amount_delinquent - paid))


@dataclass(frozen=True)
class CasePay:
    """The one amount a nonpayment case asks of the customer on a day, named the same on the counter, the account,
    the case page, the portal and the notice. Before the shut-off it is what stops it (``case_unpaid``); once
    service is off it is what restores it (``restore_owed``): everything the account owes, the disconnect charge
    waiting for the next bill included, and the charge for restoring where the preset sets one, paid ahead so the
    restoration leaves nothing owing. ``included`` names the charges of the shut-off the amount holds."""

    restores: bool
    amount: Decimal
    included: tuple[tuple[str, Decimal], ...] = ()

    @property
    def words(self) -> str:
        return gettext("To restore service, pay") if self.restores else gettext("To stop the shut-off, pay")

    @property
    def detail(self) -> str:
        """The shut-off's charges the amount holds, in words: "the disconnect charge $50.00 and the connect charge
        $50.00 included"; empty when none."""
        if not self.included:
            return ""
        named = [f"{what.lower()} {fmt_dollars(amount)}" for what, amount in self.included]
        joined = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " " + gettext("and") + " " + named[-1]
        return gettext("%(charges)s included") % {"charges": joined}


def restore_owed(case: TerminationCase, *, as_of: date) -> tuple[Decimal, Decimal]:
    """What restoring service waits for on ``as_of``: the ledger's balance and the charges waiting for the next
    bill (the disconnect charge among them), as ``(owed, of it waiting)``."""
    balance = balances([case.account_id], through=as_of)[case.account_id].balance
    waiting = sum((c.amount.amount for c in PendingCharge.objects.filter(
        account_id=case.account_id, bill__isnull=True, cancelled_at__isnull=True)), ZERO)
    return balance + waiting, waiting


def case_pay(case: TerminationCase, *, as_of: date) -> CasePay | None:
    """What the customer pays on ``as_of`` to stop the shut-off (before it) or to restore service (after it);
    None for a case that is not for nonpayment or is closed."""
    if case.grounds != "nonpayment":
        return None
    if case.status in ACTIVE:
        return CasePay(restores=False, amount=case_unpaid(case, as_of=as_of))
    if case.status != "shut_off":
        return None
    policy = termination_policy(as_of)
    owed, _ = restore_owed(case, as_of=as_of)
    included = [(c.description, c.amount.amount) for c in PendingCharge.objects.filter(
        account_id=case.account_id, bill__isnull=True, cancelled_at__isnull=True, code=policy.disconnect_fee)
        .order_by("charged_on", "id")] if policy.disconnect_fee else []
    amount = max(ZERO, owed)
    if policy.restore_fee:
        try:
            terms = charge_terms(account=case.account, code=policy.restore_fee, as_of=as_of)
        except ApplicationError:
            terms = None  # the schedule in force has no such fee: nothing to pay ahead
        if terms is not None:
            amount += terms.amount
            included.append((terms.description, terms.amount))
    return CasePay(restores=True, amount=amount, included=tuple(included))


def current_notices(case: TerminationCase) -> dict[str, Notice]:
    """The latest notice served on each recipient role."""
    latest: dict[str, Notice] = {}
    for notice in sorted(case.notices.all(), key=lambda n: (n.served_on, n.pk)):
        latest[notice.role] = notice
    return {role: latest[role] for role in ("owner", "occupant") if role in latest}


def required_roles(case: TerminationCase) -> list[str]:
    """The owner always; the occupant too when the account has one who is not the owner (§ 45.32)."""
    account = case.account
    if account.occupant_id and account.occupant_id != account.owner_id:
        return ["owner", "occupant"]
    return ["owner"]


@dataclass(frozen=True)
class Deadlines:
    hearing_earliest: date | None
    request_by: date | None
    appeal_by: date | None
    appeal_hearing_earliest: date | None

    def as_dict(self) -> dict:
        return {"hearing_earliest": _iso(self.hearing_earliest), "request_by": _iso(self.request_by),
                "appeal_by": _iso(self.appeal_by)}


def _iso(day: date | None) -> str | None:
    return day.isoformat() if day else None


def case_deadlines(case: TerminationCase, *, policy: TerminationPolicy | None = None) -> Deadlines:
    """The case's days under the preset: the earliest lawful hearing (from the latest service), the last day
    for a written request (from the latest receipt), the last day to appeal (from the determination's
    mailing), and the earliest appeal hearing (from the Commission's notice)."""
    policy = policy or termination_policy()
    notices = list(current_notices(case).values())
    served = max((n.served_on for n in notices), default=None)
    received = [n.received_on for n in notices]
    request_by = (policy.request_by(max(received)) if received and all(received) else None)
    return Deadlines(
        hearing_earliest=policy.hearing_earliest(served) if served else None,
        request_by=request_by,
        appeal_by=policy.appeal_by(case.determination_mailed_on) if case.determination_mailed_on else None,
        appeal_hearing_earliest=(policy.appeal_hearing_earliest(case.appeal_notice_mailed_on)
                                 if case.appeal_notice_mailed_on else None))


def received_on_for(method: str, *, served_on: date, received_on: date | None) -> date | None:
    """Personal service (and delivery to a suitable person) is received the day it is served; mail when the
    return receipt says."""
    if received_on is None and method in RECEIVED_WHEN_SERVED:
        return served_on
    return received_on


@dataclass(frozen=True)
class NextStep:
    what: str
    on: date | None


def case_next_step(case: TerminationCase, *, as_of: date, policy: TerminationPolicy | None = None) -> NextStep:
    """The next thing the calendar or someone must do on the case, and by when."""
    policy = policy or termination_policy()
    d = case_deadlines(case, policy=policy)
    status = case.status
    if status == "open":
        return NextStep("serve the notice on every recipient", None)
    if status == "noticed":
        missing = [r for r in required_roles(case) if r not in current_notices(case)]
        if missing:
            return NextStep(f"serve the notice on the {' and '.join(missing)}", None)
        if d.request_by is None:
            return NextStep("record the date the mailed notice was received", None)
        return NextStep("request window closes", d.request_by)
    if status == "requested":
        return NextStep("hold the hearing and record the determination", case.hearing_on)
    if status == "no_request":
        return NextStep("default determination due", case.hearing_on)
    if status == "determined":
        return NextStep("appeal window closes", d.appeal_by)
    if status == "appealed":
        return NextStep("the Commission's decision", case.appeal_hearing_on)
    if status == "final":
        return NextStep("a shut-off order may be issued", as_of)
    if status == "ordered":
        return NextStep("field crew to carry out the shut-off order", None)
    if status == "shut_off":
        return NextStep("restore when the conditions hold", None)
    return NextStep("closed", case.closed_on)


def case_board(*, as_of: date) -> list[tuple[str, str, list[tuple[TerminationCase, NextStep]]]]:
    """Active cases grouped by stage, in the workflow's order, each with its next step."""
    policy = termination_policy()
    cases = (TerminationCase.objects.filter(status__in=[*ACTIVE, "shut_off"])
             .select_related("account", "account__owner", "account__occupant").prefetch_related("notices"))
    by_status: dict[str, list] = {}
    for case in cases:
        by_status.setdefault(case.status, []).append((case, case_next_step(case, as_of=as_of, policy=policy)))
    out = []
    for status, label in TerminationCase.Status.choices:
        if status in by_status:
            rows = sorted(by_status[status], key=lambda r: (r[1].on or date.max, r[0].pk))
            out.append((status, label, rows))
    return out


def case_show(case: TerminationCase) -> dict:
    """The case as ``termination show --json`` prints it (docs/termination.md; the API gives the same JSON)."""
    deadlines = case_deadlines(case)
    recipients = [{"role": n.role, "method": n.method, "served_on": n.served_on.isoformat(),
                   "received_on": _iso(n.received_on)} for n in current_notices(case).values()]
    return {
        "number": case.number,
        "account_no": case.account.account_no,
        "status": case.status,
        "grounds": case.grounds,
        "amount_delinquent": f"{case.amount_delinquent:.2f}",
        "recipients": recipients,
        "deadlines": deadlines.as_dict(),
        "events": [{"on": e.on.isoformat(), "what": e.what, "by": e.by} for e in case.events.all()],
    }


def case_get(number: str) -> TerminationCase:
    case = (TerminationCase.objects.select_related("account", "account__owner", "account__occupant")
            .filter(number=number.strip()).first())
    if case is None:
        raise NotFound(f"no termination case numbered '{number}'", field="case")
    return case


def case_bills(case: TerminationCase):
    return CaseBill.objects.filter(case=case).select_related("bill")
