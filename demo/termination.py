"""Demo termination cases: a few delinquent demo accounts taken through due process to different stages, so
the case board, a case's pages and papers, and the customer's notice in the portal have something to show.

Each case is walked through the services of ``termination.services.cases`` as the office would have done
it, on past days that fit the demo's bills and the installed preset's periods, so every step is lawful and
the timeline reads like a real one: opened a few days before the notice is served in person (on a weekday),
the hearing on the first weekday at least the preset's notice period later, no written request (the
nightly job closes the window the day after it ends), a determination by default on the hearing date, the
appeal window closing the same way, then the shut-off order and the crew's visit. Working back from today:

    stage        notice served     then
    shut_off     ~50 days ago      determined, final, ordered and shut off
    ordered      ~40 days ago      determined, final, shut-off order issued
    determined   ~25 days ago      determined by default; the appeal window is open
    requested    ~30 days ago      a written request came two days after; the hearing is today (or the last
                                   weekday): on the hearing officer's docket, to record
    requested    ~8 days ago       a written request came by mail 4 days ago; the hearing is ahead
    noticed      ~3 days ago       the request window is open
    open         —                 opened yesterday: the notice is to serve

An account is taken only when at least $20.00 is delinquent on the day its case opens (a bill, not a late
charge left behind by a late payment) and those bills are still unpaid today (a later payment in full would
have closed the case), in account-number order, so the same village on the same day gets the same cases. A
stage whose steps are refused for an account (rolled back) takes the next one.
"""

from dataclasses import dataclass
from datetime import date, time, timedelta
from decimal import Decimal

from django.db import transaction

from accounts.models import Account
from billing.models import LedgerEntry
from core.errors import ApplicationError
from termination.models import TerminationCase
from termination.policy import termination_policy
from termination.selectors import case_unpaid, delinquencies, required_roles
from termination.services import cases as svc
from termination.services import shutoff
from termination.services.nightly import nightly_deadlines

HEARING_TIME = time(10, 0)
# An unpaid bill, not the late charge a customer who paid late left behind: the demo's cases are for water.
MIN_AMOUNT = Decimal("20.00")
TRIES_PER_STAGE = 10


@dataclass(frozen=True)
class Stage:
    status: str
    served_days_ago: int | None  # None: opened, not served
    hearing_today: bool = False  # the hearing set for today (the last weekday), not the earliest lawful day


STAGES = (Stage("shut_off", 50), Stage("ordered", 40), Stage("determined", 25),
          Stage("requested", 30, hearing_today=True), Stage("requested", 8), Stage("noticed", 3), Stage("open", None))


def _weekday_on_or_before(day: date) -> date:
    while day.weekday() >= 5:
        day -= timedelta(days=1)
    return day


def _weekday_on_or_after(day: date) -> date:
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def demo_cases_create(*, as_of: date) -> list[TerminationCase]:
    """Open and advance one case for each stage of ``STAGES`` on delinquent demo accounts; returns the cases
    made (fewer when the village has too few delinquent accounts)."""
    if TerminationCase.objects.exists():
        return []  # the demo's cases are made once, with the village
    policy = termination_policy()
    if not policy.nonpayment:
        raise ApplicationError(f"none for nonpayment: {policy.no_nonpayment}", field="grounds")
    unpaid_today = {d.account_id: {b.bill_id for b in d.bills} for d in delinquencies(as_of=as_of, policy=policy)}
    used: set[int] = set()
    made = []
    for stage in STAGES:
        if stage.served_days_ago is None:
            served_on, opened_on = None, _weekday_on_or_before(as_of - timedelta(days=1))
        else:
            served_on = _weekday_on_or_before(as_of - timedelta(days=stage.served_days_ago))
            opened_on = _weekday_on_or_before(served_on - timedelta(days=3))
        found_then = [d for d in delinquencies(as_of=opened_on, policy=policy)
                      if d.case_number is None and d.account_id not in used and d.amount >= MIN_AMOUNT
                      and {b.bill_id for b in d.bills} <= unpaid_today.get(d.account_id, set())]
        # A case ends when its amount is paid, however the payments were allocated: only accounts that have not
        # paid that much since.
        paid = _paid_since([d.account_id for d in found_then], opened_on)
        candidates = [d for d in found_then if paid.get(d.account_id, Decimal(0)) < d.amount]
        for found in candidates[:TRIES_PER_STAGE]:
            try:
                with transaction.atomic():
                    case = _walk(stage, Account.objects.get(pk=found.account_id), opened_on=opened_on,
                                 served_on=served_on, as_of=as_of, policy=policy)
                    if case_unpaid(case, as_of=as_of) <= 0:
                        # Paid since it opened (the case's amount, however later payments were allocated):
                        # its ground has ended, so it is no case to show.
                        raise ApplicationError("the case's amount is paid", field="amount_delinquent")
            except ApplicationError:
                continue  # refused for this account (rolled back): the next one
            used.add(found.account_id)
            made.append(case)
            break
    return made


def _paid_since(account_ids: list[int], day: date) -> dict[int, Decimal]:
    """What each account paid (payments and credits) on or after ``day``; summed in Python, exactly."""
    out: dict[int, Decimal] = {}
    for account_id, amount in LedgerEntry.objects.filter(account_id__in=account_ids, kind__in=["payment", "credit"],
                                                         posted_on__gte=day).values_list("account_id", "amount"):
        out[account_id] = out.get(account_id, Decimal(0)) - amount
    return out


def _walk(stage: Stage, account: Account, *, opened_on: date, served_on: date | None, as_of: date,
          policy) -> TerminationCase:
    case = svc.case_open(account=account, grounds="nonpayment", as_of=opened_on, actor=None, policy=policy)
    if served_on is None:
        return case
    hearing_on = _weekday_on_or_after(policy.hearing_earliest(served_on))
    if stage.hearing_today:
        hearing_on = max(hearing_on, _weekday_on_or_before(as_of))
    for role in required_roles(case):
        svc.notice_serve(case=case, role=role, method="personal", served_on=served_on, hearing_on=hearing_on,
                         actor=None, hearing_time=HEARING_TIME, as_of=as_of)
    case.refresh_from_db()
    if stage.status == "noticed":
        return case
    if stage.status == "requested":
        received_on = served_on + timedelta(days=2) if stage.hearing_today else as_of - timedelta(days=4)
        svc.hearing_request(case=case, received_on=received_on, actor=None, via="clerk",
                            text="I received the notice and ask for the hearing. The bill is higher than usual "
                                 "and I would like to be heard.", as_of=as_of)
        return case
    # No written request: the nightly job closes the window, and the determination by default follows on
    # the hearing date, its notice mailed that day.
    request_by = policy.request_by(served_on)
    nightly_deadlines(as_of=request_by + timedelta(days=1))
    case.refresh_from_db()
    svc.determination_record(case=case, outcome="terminate", mailed_on=hearing_on, actor=None, as_of=hearing_on,
                             notes="No written request for a hearing was received.")
    if stage.status == "determined":
        return case
    order_on = policy.appeal_by(hearing_on) + timedelta(days=1)
    nightly_deadlines(as_of=order_on)
    case.refresh_from_db()
    shutoff.shutoff_order(case=case, as_of=order_on, actor=None)
    case.refresh_from_db()
    if stage.status == "ordered":
        return case
    shutoff.shutoff_carry_out(case=case, done_on=order_on + timedelta(days=1), actor=None)
    case.refresh_from_db()
    return case
