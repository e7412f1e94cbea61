"""Reads for the customer portal. Every account, bill and termination case is fetched through the requesting
user's links, so another customer's identifiers answer 404 exactly as identifiers that do not exist."""

from datetime import date
from decimal import Decimal
from uuid import UUID

from django.http import Http404
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import get_language, gettext, gettext_lazy, gettext_noop, ngettext

from accounts.models import Account
from backflow.models import DeviceTest, Tester
from billing.balances import DEPOSIT_KINDS, AccountBalance, balances
from billing.charts import chart_points
from billing.documents.bill import line_views
from billing.documents.money_box import money_box
from billing.documents.words import charge_words
from billing.figures import bill_figures
from billing.models import Bill, Payment, PriorPayment, PriorRelevy
from billing.ordinance import Ordinance, ordinance_on
from billing.selectors import (
    account_amounts_due,
    account_charges,
    account_deposits,
    bill_balances,
    bill_status,
    consumption_history,
)
from core.dates import fmt_day, fmt_time
from core.errors import ApplicationError
from ordinance.selectors import districts
from termination.models import ACTIVE, CaseEvent, Notice, TerminationCase
from termination.policy import METHOD_WORDS, termination_policy
from termination.selectors import case_bills, case_deadlines, case_next_step, case_pay

# The bill statuses the pages show (``billing.selectors.bill_status``) and the readings' labels, for the catalog.
SHOWN_WORDS = (gettext_noop("paid"), gettext_noop("partly paid"), gettext_noop("unpaid"), gettext_noop("Previous"),
               gettext_noop("Current"))


def account_list_for_customer(user) -> list[Account]:
    if not user.is_authenticated:
        return []
    return list(Account.objects.filter(portal_links__user=user).select_related("premises")
                .order_by("account_no"))


def installed_ordinance(on: date) -> Ordinance | None:
    """The installed preset's ordinance on a date, or None before a preset is installed."""
    try:
        return ordinance_on(on)
    except ApplicationError:
        return None


def _balances(account_ids: list[int], *, as_of: date, ordinance: Ordinance | None) -> dict[int, AccountBalance]:
    """Each account as it stands at the end of ``as_of`` (``account_balances``), under the payment order of the
    ordinance the page has read already rather than the utility's row read again."""
    return balances(account_ids, through=as_of, order=ordinance.payment_order if ordinance is not None else None,
                    paid_bills=True)


def home_overview(user, *, as_of: date) -> dict:
    """The home page: each linked account with the amount due and when (``cards``), and the utility."""
    accounts = account_list_for_customer(user)
    ordinance = installed_ordinance(as_of)
    account_ids = [a.id for a in accounts]
    due = account_amounts_due(account_ids=account_ids, as_of=as_of,
                              balances=_balances(account_ids, as_of=as_of, ordinance=ordinance))
    return {"cards": [{"account": a, "due": due[a.id]} for a in accounts],
            "utility": ordinance.utility if ordinance is not None else None}


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


REVERSAL_WORDS = {
    "returned": gettext_lazy("Returned unpaid on %(day)s"),
    "debit_returned": gettext_lazy("Returned unpaid by your bank on %(day)s"),
    "refunded": gettext_lazy("Refunded on %(day)s"),
    "disputed": gettext_lazy("Disputed on %(day)s"),
    "misposted": gettext_lazy("Moved to the right account on %(day)s"),
    "error": gettext_lazy("Cancelled on %(day)s: entered in error"),
}


def payments_shown(account, *, as_of: date) -> list[dict]:
    """The account's payments, newest first, each with what became of it by ``as_of``: received; scheduled (an
    autopay debit whose settlement day has not come: the money is not taken yet); or returned, refunded, disputed,
    moved or cancelled (``off``: it no longer counts), in the customer's words."""
    rows = []
    for payment in (Payment.objects.filter(account=account, paid_on__lte=as_of)
                    .select_related("reversal", "autopay_debit__file").order_by("-paid_on", "-id")):
        reversal = getattr(payment, "reversal", None)
        debit = getattr(payment, "autopay_debit", None)
        if reversal is not None and reversal.reversed_on <= as_of:
            rows.append({"payment": payment, "off": True,
                         "status": REVERSAL_WORDS[reversal.reason] % {"day": date_format(reversal.reversed_on)}})
        elif debit is not None and debit.file.effective_on > as_of:
            rows.append({"payment": payment, "off": False,
                         "status": gettext("Scheduled: taken from your bank on %(day)s")
                         % {"day": date_format(debit.file.effective_on)}})
        else:
            rows.append({"payment": payment, "off": False, "status": gettext("Received")})
    return rows


def account_overview(*, account: Account, as_of: date) -> dict:
    """Balance, bills (newest first), payments and the consumption chart points of one account.

    The account's live bills are read once, for the list (those issued by ``as_of``), the chart (those dated
    by then) and the due dates; the ledger is replayed once for every figure. With them, the utility for the
    page's heading, from the ordinance whose payment order the replay follows."""
    ordinance = installed_ordinance(as_of)
    state = _balances([account.id], as_of=as_of, ordinance=ordinance)[account.id]
    live = list(Bill.objects.filter(account=account).exclude(status=Bill.Status.VOID).order_by("-bill_date", "-id"))
    balances = bill_balances(account=account, as_of=as_of, state=state)
    deposits = account_deposits(account=account, as_of=as_of)
    due = account_amounts_due(account_ids=[account.id], as_of=as_of, balances={account.id: state},
                              due_dates={b.id: b.due_date for b in live})
    return {
        "balance": state.balance,
        "due": due[account.id],
        "bills": [{"bill": b, "unpaid": balances[b.pk].unpaid_total if b.pk in balances else 0,
                   "status": bill_status(balances.get(b.pk))} for b in live if b.issued_on <= as_of],
        "payments": payments_shown(account, as_of=as_of),
        # Paid to the village's previous billing system: history brought over, not on the books.
        "prior_payments": list(PriorPayment.objects.filter(account=account, paid_on__lte=as_of)
                               .order_by("-paid_on", "-id")),
        # Relevied to the tax roll by the previous system: collected with the taxes, not owed here.
        "prior_relevies": list(PriorRelevy.objects.filter(account=account, relevied_on__lte=as_of)
                               .order_by("-relevied_on", "-id")),
        # Deposits are the customer's money held: shown in their own section, not among the charges.
        # Dated for people ("Feb 1, 2026"), as every other date on the page.
        "charges": [{**c, "day": date.fromisoformat(c["date"]),
                     "description": charge_words(c["kind"], c["description"])}
                    for c in account_charges(account=account, as_of=as_of) if c["kind"] not in DEPOSIT_KINDS],
        "deposits": [{**d, "received": date.fromisoformat(d["received_on"]),
                      "refunded": date.fromisoformat(d["refunded_on"]) if d["refunded_on"] else None}
                     for d in deposits],
        "deposits_held": sum((Decimal(d["amount"]) for d in deposits if d["status"] == "held"), Decimal(0)),
        "points": chart_points([(b.bill_date, b.gallons) for b in reversed(live) if b.bill_date <= as_of
                                and b.has_usage],
                               through=as_of),
        "utility": ordinance.utility if ordinance is not None else None,
    }


def bill_detail(*, bill: Bill, as_of: date) -> dict:
    """What the bill page shows: the same figures, rows and formatters as the paper bill (and the utility, for
    the page's heading, from the ordinance read for them)."""
    account_id = bill.account_id
    history = consumption_history(account_ids=[account_id], through=bill.bill_date).get(account_id, [])
    # A town's bill under its district's rules (its penalty words and late charges); a village's, the one ordinance.
    ordinance = ordinance_on(bill.bill_date, bill.district_id or "")
    summary = bill_figures(bills=[bill], ordinance=ordinance)[bill.pk]
    scheme = ordinance.penalties
    state = _balances([account_id], as_of=as_of, ordinance=ordinance)[account_id]
    balance = bill_balances(account=bill.account, as_of=as_of, state=state).get(bill.pk)
    return {
        # By position alone: the model's ordering (by bill) would join the bills and accounts to sort one bill.
        "lines": line_views(bill.lines.order_by("position")),
        "box": money_box(summary, late_charges=scheme.late_charges_label),
        "status": bill_status(balance),
        "unpaid": balance.unpaid_total if balance else 0,
        # A bill partly paid is explained: what it charged (late charges included), what remains of each.
        "charged": balance.charged_total if balance else 0,
        "unpaid_principal": balance.unpaid_principal if balance else 0,
        "unpaid_late": balance.unpaid_total - balance.unpaid_principal if balance else 0,
        "payment_order": ordinance.payment_order_words,
        "late_words": scheme.words,
        "penalty_citation": getattr(scheme, "citation", ""),
        "readings": [(label, r) for label, r in (("Previous", bill.start_reading), ("Current", bill.end_reading))
                     if r is not None],
        "points": chart_points(history, through=bill.bill_date),
        "utility": ordinance.utility,
        "district": districts(installed=ordinance.utility).get(bill.district_id or ""),
    }



# --- Termination cases ------------------------------------------------------------------------------------
# A customer sees the cases of their linked accounts: the one still open in a box on the account page, the
# closed ones in a short list, and each case on a page of its own (looked up by its number through the
# user's links, like every other portal page).

OPEN_CASE_STATUSES = (*ACTIVE, "shut_off")
# A written request for the hearing may be made online while the notice's window is open or has just
# closed without one (a late request is accepted and flagged), and only once.
REQUEST_STATUSES = ("noticed", "no_request")

# The stage of a case in the customer's words; the clerk's words are ``get_status_display()``.
CUSTOMER_STAGE = {
    "open": gettext_lazy("A termination case is open: a notice with the hearing date will be served on you"),
    "noticed": gettext_lazy("A termination notice has been served: you may ask for a hearing in writing"),
    "requested": gettext_lazy("You asked for a hearing: the hearing officer will hear you on the hearing date"),
    "no_request": gettext_lazy("No hearing was asked for in time: the hearing officer may decide without one"),
    "determined": gettext_lazy("The hearing officer decided to terminate service: you may appeal"),
    "appealed": gettext_lazy("Your appeal has been filed: the decision on it is pending"),
    "final": gettext_lazy("Termination of service is final: the water may be shut off"),
    "ordered": gettext_lazy("A shut-off order has been issued"),
    "shut_off": gettext_lazy("Water service is shut off"),
    "restored": gettext_lazy("Service was restored"),
    "paid": gettext_lazy("Paid in full: the case is closed"),
    "resolved": gettext_lazy("Closed: a payment arrangement or other action"),
    "dismissed": gettext_lazy("The case was dismissed"),
    "withdrawn": gettext_lazy("Closed: the bill was cancelled or the account closed"),
}

# The case's next step as the customer reads it (the office's own words are ``case_next_step``'s); the date is
# the office's.
CUSTOMER_NEXT_STEP = {
    "open": gettext_lazy("The village office serves the notice"),
    "noticed": gettext_lazy("The last day to ask for a hearing in writing"),
    "requested": gettext_lazy("The hearing"),
    "no_request": gettext_lazy("The hearing officer's determination"),
    "determined": gettext_lazy("The last day to appeal"),
    "appealed": gettext_lazy("The Commission's decision"),
    "final": gettext_lazy("A shut-off order may be issued"),
    "ordered": gettext_lazy("The field crew may shut off the water"),
    "shut_off": gettext_lazy("Service is restored once the conditions are met"),
}

# A case's timeline in the customer's language: the office records each step in its own words (English);
# a page in another language shows the step's kind in that language.
CUSTOMER_EVENT = {
    "opened": gettext_lazy("Case opened"),
    "served": gettext_lazy("Notice served"),
    "received": gettext_lazy("Notice received"),
    "requested": gettext_lazy("Written request for the hearing received"),
    "request_window_closed": gettext_lazy("The time to ask for a hearing closed"),
    "hearing": gettext_lazy("Hearing held"),
    "determined": gettext_lazy("Determination made"),
    "appealed": gettext_lazy("Appeal filed"),
    "appeal_window_closed": gettext_lazy("The time to appeal closed"),
    "decided": gettext_lazy("Decision on the appeal"),
    "ordered": gettext_lazy("Shut-off order issued"),
    "shut_off": gettext_lazy("Water service shut off"),
    "restored": gettext_lazy("Service restored"),
    "paid": gettext_lazy("Paid in full: case closed"),
    "dismissed": gettext_lazy("Case dismissed"),
    "withdrawn": gettext_lazy("Case closed: the bill was cancelled"),
    "bill_voided": gettext_lazy("A bill of the case was cancelled"),
    "account_closed": gettext_lazy("Case closed: the account was closed"),
    "reopened": gettext_lazy("Case reopened: a payment was taken back"),
}

# The case's grounds, and how a notice was served, in the customer's words.
CUSTOMER_GROUNDS = {"nonpayment": gettext_lazy("Nonpayment"), "violation": gettext_lazy("A violation of the rules")}
CUSTOMER_ROLE = {"owner": gettext_lazy("owner"), "occupant": gettext_lazy("occupant")}


def case_get_for_customer(user, number: str) -> TerminationCase:
    if not user.is_authenticated:
        raise Http404("no such case")
    case = (TerminationCase.objects.select_related("account__premises", "account__owner", "account__occupant")
            .filter(number=number, account__portal_links__user=user).first())
    if case is None:
        raise Http404("no such case")
    return case


def notice_get_for_customer(user, number: str, notice_id: int) -> Notice:
    case = case_get_for_customer(user, number)
    notice = case.notices.filter(pk=notice_id).first()
    if notice is None:
        raise Http404("no such notice")
    return notice


def case_request_open(case: TerminationCase) -> bool:
    """Whether the customer may still ask for the hearing online."""
    return case.status in REQUEST_STATUSES and case.request_received_on is None


def account_cases(*, account: Account, as_of: date) -> dict:
    """The account page's termination part: the open case (or None) with its stage, the amount delinquent and
    what is still unpaid on its bills today; and the closed cases, newest first."""
    cases = list(TerminationCase.objects.filter(account=account).order_by("-opened_on", "-id"))
    open_case = next((c for c in cases if c.status in OPEN_CASE_STATUSES), None)
    box = None
    if open_case is not None:
        box = {"case": open_case, "stage": CUSTOMER_STAGE[open_case.status],
               "pay": case_pay(open_case, as_of=as_of),
               "can_request": case_request_open(open_case)}
    return {"termination": box, "closed_cases": [c for c in cases if c.status not in OPEN_CASE_STATUSES]}


def _event_by(event: CaseEvent, user) -> str:
    """Who did a step, as the customer is told: never the name of the staff member who recorded it."""
    if event.actor_id is not None and event.actor_id == user.pk:
        return gettext("You (online)")
    if event.by == "customer online":
        return gettext("Online")
    return gettext("Village office")


def _event_what(event: CaseEvent) -> str:
    """What a step was: as the office recorded it, or its kind in the customer's language."""
    if get_language().startswith("en") or event.kind not in CUSTOMER_EVENT:
        return event.what
    return str(CUSTOMER_EVENT[event.kind])


def case_detail(*, case: TerminationCase, user, as_of: date) -> dict:
    """What the case page shows: the grounds, the bills, the hearing, the deadlines, the stage and next step,
    the papers served and the timeline."""
    policy = termination_policy()
    deadlines = case_deadlines(case, policy=policy)
    step = case_next_step(case, as_of=as_of, policy=policy)
    notices = [{"notice": n, "method": gettext(METHOD_WORDS[n.method]), "role": CUSTOMER_ROLE[n.role]}
               for n in case.notices.order_by("served_on", "id")]
    events = [{"on": e.on, "what": _event_what(e), "by": _event_by(e, user)} for e in case.events.all()]
    if case.status in CUSTOMER_NEXT_STEP:
        step = {"what": CUSTOMER_NEXT_STEP[case.status], "on": step.on}
    else:
        step = {"what": gettext("None: the case is closed"), "on": step.on}
    request = None
    if case.request_received_on is not None:
        request = {"received_on": case.request_received_on, "late": case.request_late,
                   "online": case.request_via == TerminationCase.RequestVia.PORTAL,
                   "recorded_at": case.request_recorded_at, "text": case.request_text}
    return {
        "case": case, "account": case.account, "policy": policy,
        "stage": CUSTOMER_STAGE[case.status], "grounds": CUSTOMER_GROUNDS[case.grounds],
        # The office words a nonpayment case's grounds in English; in another language the bills below name them.
        "grounds_detail": case.grounds_detail if case.grounds != "nonpayment" or get_language().startswith("en")
        else "",
        "next_step": step, "deadlines": deadlines,
        "bills": list(case_bills(case)),
        "pay": case_pay(case, as_of=as_of),
        "hearing_place": case.hearing_place or policy.hearing_place,
        "notices": notices, "events": events, "request": request,
        "can_request": case_request_open(case),
        "is_open": case.status in OPEN_CASE_STATUSES,
    }


def request_confirmation(case: TerminationCase) -> str:
    """What the customer is told once their written request is recorded."""
    at = timezone.localtime(case.request_recorded_at)
    values = {"day": fmt_day(case.request_received_on), "time": fmt_time(at)}
    text = gettext("Your request was received on %(day)s at %(time)s.") % values
    if case.request_late:
        deadline = case_deadlines(case).request_by
        values = {"deadline": fmt_day(deadline) if deadline else "", "officer": termination_policy().hearing_officer}
        text += " " + (gettext("It was received after the deadline of %(deadline)s to ask for a hearing: it has been "
                               "accepted and will be put before %(officer)s, who decides whether you will be heard.")
                       if deadline else
                       gettext("It was received after the deadline to ask for a hearing: it has been accepted and "
                               "will be put before %(officer)s, who decides whether you will be heard.")) % values
    elif case.hearing_on:
        text += " " + gettext("It was received in time: come to the hearing on %(day)s.") % {
            "day": fmt_day(case.hearing_on)}
    else:
        text += " " + gettext("It was received in time.")
    return text


# --- Backflow testers -------------------------------------------------------------------------------------

# A tester is told ahead of time that their certification runs out: a test done after it is refused.
CERTIFICATION_WARNING_DAYS = 30
TESTS_LISTED = 100


def tester_for_user(user) -> Tester | None:
    """The certified tester this login belongs to (``Tester.user``), or None."""
    if not user.is_authenticated:
        return None
    return Tester.objects.filter(user=user).first()


def tester_certification(tester: Tester, *, as_of: date) -> dict:
    """The certification as the tester page states it: lapsed, running out within 30 days, or in force."""
    days_left = (tester.certification_expires - as_of).days
    expires = fmt_day(tester.certification_expires)
    values = {"number": tester.certification_no, "day": expires, "days": days_left}
    if days_left < 0:
        warning = gettext("Your NYS certification %(number)s expired on %(day)s. A test done after that date is "
                          "refused: send the village office your renewed certificate.") % values
    elif days_left == 0:
        warning = gettext("Your NYS certification %(number)s expires on %(day)s, today. A test done after that date "
                          "is refused until the village office has your renewed certificate.") % values
    elif days_left <= CERTIFICATION_WARNING_DAYS:
        warning = ngettext("Your NYS certification %(number)s expires on %(day)s, in %(days)s day. A test done after "
                           "that date is refused until the village office has your renewed certificate.",
                           "Your NYS certification %(number)s expires on %(day)s, in %(days)s days. A test done "
                           "after that date is refused until the village office has your renewed certificate.",
                           days_left) % values
    else:
        warning = ""
    return {"lapsed": days_left < 0, "expires_soon": 0 <= days_left <= CERTIFICATION_WARNING_DAYS,
            "days_left": days_left, "warning": warning}


def tester_overview(*, tester: Tester, as_of: date) -> dict:
    """The tester page: the certification and gauge, and the tester's own tests, newest first."""
    tests = (DeviceTest.objects.filter(tester=tester).select_related("device__account__premises")
             .order_by("-tested_on", "-id"))
    listed = list(tests[:TESTS_LISTED + 1])
    return {"tester": tester, "certification": tester_certification(tester, as_of=as_of),
            "tests": listed[:TESTS_LISTED], "more_tests": len(listed) > TESTS_LISTED, "tests_listed": TESTS_LISTED}


def tester_test_get(tester: Tester, test_id: int) -> DeviceTest:
    """One of the tester's own tests; another tester's, like one that does not exist, is 404."""
    test = (DeviceTest.objects.select_related("device__account__premises").filter(pk=test_id, tester=tester)
            .first())
    if test is None:
        raise Http404("no such test")
    return test
