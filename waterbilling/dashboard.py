"""The admin home for staff: today's work, in plain data the index template lays out.

Each section is what a clerk acts on today, with a count or an amount and a link to the page where they act:
readings still missing for the next billing date, billing runs not finished, bills held and other open
exceptions, today's payments by tender, bills drawing their first late charge tonight or tomorrow, termination
deadlines of the coming week, backflow tests due this month, the last nightly job, and shortcuts. A section is
built only for a user who may see its records (``has_perm``); the security and scheduler sections only for a
superuser.

Every section reads a bounded amount: counts and the few rows shown, never a replay of every account's
ledger. Money is added up in Python (SQLite sums decimals in floating point).
"""

from calendar import monthrange
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode

from backflow.models import Device, DeviceTest, ReverseFlow
from backflow.services.compliance import devices_due
from billing.balances import balances
from billing.districts import ordinances_by_account
from billing.models import AmendmentRebill, Bill, BillingException, BillingRun, Payment, PenaltyWaiver
from billing.ordinance import billing_days_on, ordinance_on
from billing.runs.candidates import billing_candidates
from billing.selectors import first_late_day
from conversion.models import ConversionJob
from core.approval import PENDING, approval_of
from core.errors import ApplicationError
from core.models import NightlyRun
from core.money import ZERO, fmt_dollars
from fieldwork.services import day_sheet
from meters.models import Installation, MissedRead, Reading, UsageAlert
from office.models import DayClose, DayReopen, Refund
from remittance.models import AchFile
from termination.models import CaseEvent, TerminationCase
from termination.selectors import case_board
from termination.services.cases import HEARD

# How far ahead the next billing date is looked for, and the termination deadlines shown.
CALENDAR_HORIZON_DAYS = 400
DEADLINE_DAYS = 7
MISSED_DAYS = 30  # how far back the meters not read are counted
REOPENED_DAYS = 30  # how long a case changed by another part's event stays on the dashboard
# Cases another part of the office changed (termination's receivers), by the kind of their event.
CHANGED_BY_EVENTS = {"reopened": "Reopened", "withdrawn": "Withdrawn, bill voided",
                     "bill_voided": "Bill voided", "account_closed": "Withdrawn, account closed",
                     "closed_owed": "Owed again after the account closed"}
ROWS_SHOWN = 8


@dataclass(frozen=True)
class Item:
    """One line of a section: what it says, the page it links to (may be empty), a detail in small type."""

    words: str
    url: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    items: list[Item]
    links: list[Item] = field(default_factory=list)  # the section's pages, under its items


@dataclass(frozen=True)
class Shortcut:
    words: str
    url: str


@dataclass(frozen=True)
class Dashboard:
    as_of: date
    sections: list[Section]
    shortcuts: list[Shortcut]
    account_search_url: str  # empty: the user may not look accounts up


def _url(name: str, *args, query: dict | None = None) -> str:
    url = reverse(name, args=args)
    return f"{url}?{urlencode(query)}" if query else url


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def _day(day: date) -> str:
    return f"{day:%a %b} {day.day}, {day.year}"


# --- readings ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReadingsWaiting:
    bill_date: date | None
    due: int  # accounts due on that date not billed yet
    without_reading: int  # of those, with a meter in place and no reading in its read window
    imported_today: int
    import_files_today: int


IMPORTED_SOURCES = ("import", "daily")


def readings_waiting(*, as_of: date) -> ReadingsWaiting:
    """The next billing date on or after ``as_of`` with accounts still to bill, how many of them have no
    reading in their read window yet, and the readings imported today."""
    bill_date, due_ids = _next_billing_date(as_of=as_of)
    without = _without_reading(due_ids, bill_date=bill_date) if bill_date else 0
    start_of_day = timezone.make_aware(datetime.combine(as_of, datetime.min.time()))
    today_ = {"entered_at__gte": start_of_day, "entered_at__lt": start_of_day + timedelta(days=1)}
    imported = Reading.objects.filter(source__in=IMPORTED_SOURCES, **today_).count()
    # Each file imported (an upload, a worker's job or the command line) names itself in its readings' history.
    files = (Reading.history.filter(history_type="+", source__in=IMPORTED_SOURCES, **today_)
             .values("history_change_reason").distinct().count())
    return ReadingsWaiting(bill_date=bill_date, due=len(due_ids), without_reading=without, imported_today=imported,
                           import_files_today=files)


def _next_billing_date(*, as_of: date) -> tuple[date | None, list[int]]:
    calendar = billing_days_on(as_of)
    day = as_of
    for _ in range(CALENDAR_HORIZON_DAYS):
        if calendar.due_books(day) or calendar.due_frequencies(day):
            candidates = billing_candidates(run_on=day)
            billed = set(Bill.objects.filter(bill_date=day).exclude(status=Bill.Status.VOID)
                         .values_list("account_id", flat=True))
            left = [account_id for account_id in candidates if account_id not in billed]
            if left:
                return day, left
        day += timedelta(days=1)
    return None, []


def _without_reading(account_ids: list[int], *, bill_date: date) -> int:
    """Accounts with a meter in place whose frequency the calendar bills on ``bill_date`` and no reading of
    it inside that bill's read window."""
    # Each account by its district's calendar (a town's; a village's accounts all by the one calendar).
    by_account = ordinances_by_account(account_ids, on=bill_date)
    village = ordinance_on(bill_date).calendar if len(by_account) < len(account_ids) else None
    meters: dict[int, list[tuple[int, tuple[date, date]]]] = defaultdict(list)
    windows: dict[tuple[int, int, str], tuple[date, date] | None] = {}
    for account_id, book, meter_id, size, installed_on, removed_on in Installation.objects.filter(
            account_id__in=account_ids, installed_on__lte=bill_date).values_list(
            "account_id", "account__book", "meter_id", "meter__size", "installed_on", "removed_on"):
        calendar = by_account[account_id].calendar if account_id in by_account else village
        frequency = calendar.frequency_for(size)
        key = (id(calendar), book, frequency)
        if key not in windows:
            windows[key] = (calendar.cycle(book=book, frequency=frequency, bill_date=bill_date).read_window
                            if calendar.is_due(book=book, frequency=frequency, on=bill_date) else None)
        window = windows[key]
        if window is None or installed_on > window[1] or (removed_on is not None and removed_on <= window[1]):
            continue
        meters[account_id].append((meter_id, window))
    spans = [window for found in meters.values() for _, window in found]
    if not spans:
        return 0
    start, end = min(w[0] for w in spans), max(w[1] for w in spans)
    read: dict[int, list[date]] = defaultdict(list)
    for meter_id, read_on in Reading.objects.filter(
            meter_id__in={meter_id for found in meters.values() for meter_id, _ in found},
            read_on__gte=start, read_on__lte=end).values_list("meter_id", "read_on"):
        read[meter_id].append(read_on)
    return sum(1 for found in meters.values()
               if any(not any(w[0] <= day <= w[1] for day in read.get(meter_id, [])) for meter_id, w in found))


def _readings_section(*, as_of: date) -> Section:
    w = readings_waiting(as_of=as_of)
    items = []
    if w.bill_date is None:
        items.append(Item("No billing date ahead has accounts to bill."))
    else:
        items.append(Item(
            f"{_plural(w.without_reading, 'account')} due on {_day(w.bill_date)} without a reading yet",
            _url("admin:meters_reading_import"),
            f"of {_plural(w.due, 'account')} still to bill that day"))
    items.append(Item(f"{_plural(w.imported_today, 'reading')} imported today"
                      f" ({_plural(w.import_files_today, 'file')})",
                      _url("admin:core_importjob_changelist", query={"noun": "readings"})))
    alerts = UsageAlert.objects.filter(resolved_at__isnull=True).count()
    items.append(Item(f"{_plural(alerts, 'meter alert')} to look at",
                      _url("admin:meters_usagealert_changelist", query={"resolved_at__isempty": "1"}),
                      "use far above usual, leaks (one per episode), reverse flow, tamper, rollovers, readings to "
                      "re-read"))
    since = as_of - timedelta(days=MISSED_DAYS)
    missed = MissedRead.objects.filter(read_on__gt=since, read_on__lte=as_of).count()
    if missed:
        items.append(Item(f"{_plural(missed, 'meter')} the readers could not read in the last {MISSED_DAYS} days",
                          _url("admin:meters_missedread_changelist",
                               query={"read_on__gte": (since + timedelta(days=1)).isoformat()}),
                          "with the reader's code; their bills wait in the run's exceptions"))
    return Section("readings", "Readings waiting", items, [
        Item("Readings", _url("admin:meters_reading_changelist"))])


# --- billing runs and exceptions -------------------------------------------------------------------------

def _runs_section(user) -> Section:
    items = []
    if user.has_perm("billing.view_billingrun"):
        runs = (BillingRun.objects.filter(dry_run=False, status__in=[
                    BillingRun.Status.PENDING, BillingRun.Status.RUNNING, BillingRun.Status.FAILED])
                .order_by("-created_at")[:ROWS_SHOWN])
        for run in runs:
            detail = (f"failed: {run.error}" if run.status == BillingRun.Status.FAILED
                      else f"{run.progress_percent}% done")
            items.append(Item(f"Billing run {run.pk} for {_day(run.run_on)}: {run.get_status_display().lower()}",
                              _url("admin:billing_billingrun_change", run.pk), detail))
        if not items:
            items.append(Item("No billing run in progress or failed."))
    if user.has_perm("billing.view_billingexception"):
        open_ = BillingException.objects.filter(status=BillingException.Status.OPEN)
        held = open_.filter(kind=BillingException.Kind.HIGH_USAGE).count()
        other = open_.exclude(kind=BillingException.Kind.HIGH_USAGE).count()
        changelist = "admin:billing_billingexception_changelist"
        items.append(Item(f"{_plural(held, 'bill')} held for high usage",
                          _url(changelist, query={"status__exact": "open", "kind__exact": "high_usage"}),
                          "review each and release it or resolve it"))
        others = ",".join(k for k in BillingException.Kind.values if k != BillingException.Kind.HIGH_USAGE)
        items.append(Item(f"{_plural(other, 'other open exception')}",
                          _url(changelist, query={"status__exact": "open", "kind__in": others}),
                          "no reading, a lower reading, or a bill that cannot be rated"))
    links = [Item("Billing runs", _url("admin:billing_billingrun_changelist"))]
    return Section("runs", "Billing runs and exceptions", items, links)


# --- payments ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TenderTotal:
    tender: str
    label: str
    count: int
    total: Decimal


@dataclass(frozen=True)
class PaymentsToday:
    count: int
    total: Decimal
    tenders: list[TenderTotal]


def payments_today(*, as_of: date) -> PaymentsToday:
    """Payments dated ``as_of``, with their total and the totals by tender (in the tenders' order)."""
    by_tender: dict[str, list[Decimal]] = defaultdict(list)
    for tender, amount in Payment.objects.filter(paid_on=as_of).values_list("tender", "amount"):
        by_tender[tender].append(amount)
    labels = dict(Payment.Tender.choices)
    tenders = [TenderTotal(tender, labels[tender], len(by_tender[tender]), sum(by_tender[tender], ZERO))
               for tender in Payment.Tender.values if tender in by_tender]
    return PaymentsToday(count=sum(t.count for t in tenders), total=sum((t.total for t in tenders), ZERO),
                         tenders=tenders)


def _payments_section(user, *, as_of: date) -> Section:
    p = payments_today(as_of=as_of)
    today_list = _url("admin:billing_payment_changelist", query={"paid_on": as_of.isoformat()})
    items = [Item(f"{_plural(p.count, 'payment')}, {fmt_dollars(p.total)}", today_list, "dated today")]
    items += [Item(f"{t.label}: {_plural(t.count, 'payment')}, {fmt_dollars(t.total)}") for t in p.tenders]
    if user.has_perm("office.approve_refund"):
        came_back = list(Refund.objects.filter(came_back_on__gte=as_of - timedelta(days=REOPENED_DAYS))
                         .values_list("amount", flat=True))
        if came_back:
            items.append(Item(f"{_plural(len(came_back), 'refund')} ({fmt_dollars(sum(came_back, ZERO))}) paid against "
                              "a payment taken back since",
                              _url("admin:office_refund_changelist", query={"came_back_on__isempty": "0"}),
                              "the credit refunded may never have been the village's: follow each up with its payee"))
    links = [Item("Daily cash report", _url("admin:billing_payment_cash")),
             Item("Payments", _url("admin:billing_payment_changelist"))]
    return Section("payments", "Payments posted today", items, [link for link in links if link.url])


# --- penalties --------------------------------------------------------------------------------------------

def penalties_tonight(*, as_of: date) -> int:
    """Tonight's and tomorrow's first late charges: live bills whose first late day is ``as_of`` or the day
    after and whose principal is not paid in the ledger as of ``as_of``. (Later penalties of bills already
    late, and the amounts, are the penalty preview's.)"""
    scheme = ordinance_on(as_of).penalties
    window = (as_of, as_of + timedelta(days=1))
    first_late: dict[tuple[date, date], date] = {}  # bills share their dates: work each pair out once
    bills = []
    # The first late day is at most a few weeks after the due date under any preset; read only those bills.
    for bill_id, account_id, bill_date, due_date in (
            Bill.objects.filter(due_date__gte=as_of - timedelta(days=62), due_date__lte=as_of)
            .exclude(status=Bill.Status.VOID).values_list("id", "account_id", "bill_date", "due_date")):
        if (bill_date, due_date) not in first_late:
            first_late[(bill_date, due_date)] = first_late_day(scheme, bill_date=bill_date, due_date=due_date)
        if window[0] <= first_late[(bill_date, due_date)] <= window[1]:
            bills.append((bill_id, account_id))
    if not bills:
        return 0
    owed = balances(list({account_id for _, account_id in bills}), through=as_of)
    unpaid = {(account_id, bill_id) for account_id, state in owed.items()
              for bill_id, b in state.on_bills().items() if b.unpaid_principal > ZERO}
    return sum(1 for bill_id, account_id in bills if (account_id, bill_id) in unpaid)


def _penalties_section(*, as_of: date) -> Section:
    count = penalties_tonight(as_of=as_of)
    preview = _url("admin:billing_penalties_preview")
    return Section("penalties", "Penalties due tonight", [
        Item(f"{_plural(count, 'unpaid bill')} draw{'s' if count == 1 else ''} a first late charge today or "
             "tomorrow", preview, "first late charges; the penalty preview has every charge and its amount")])


# --- termination, backflow, nightly -----------------------------------------------------------------------

def _termination_section(*, as_of: date) -> Section:
    soon = as_of + timedelta(days=DEADLINE_DAYS)
    rows = [(case, step) for _, _, stage in case_board(as_of=as_of) for case, step in stage
            if step.on is not None and step.on <= soon]
    rows.sort(key=lambda r: (r[1].on, r[0].pk))
    items = [Item(f"{case.number or case.pk} · account {case.account.account_no}: {step.what}",
                  _url("admin:termination_terminationcase_change", case.pk),
                  f"{'overdue since' if step.on < as_of else 'by'} {_day(step.on)}")
             for case, step in rows[:ROWS_SHOWN]]
    head = Item(f"{_plural(len(rows), 'active case')} with a deadline by {_day(soon)}")
    changed = list(CaseEvent.objects.filter(kind__in=CHANGED_BY_EVENTS, on__gte=as_of - timedelta(days=REOPENED_DAYS))
                   .select_related("case__account").order_by("-on", "-pk")[:ROWS_SHOWN])
    items += [Item(f"{CHANGED_BY_EVENTS[e.kind]}: {e.case.number or e.case.pk} · account {e.case.account.account_no}",
                   _url("admin:termination_terminationcase_change", e.case.pk), e.what) for e in changed]
    return Section("termination", "Termination deadlines", [head, *items], [
        Item("Case board", _url("admin:termination_terminationcase_board"))])


# The two-person requests (core.approval): each model, the list where it is decided, and its name in a line.
REQUESTS = ((Refund, "admin:office_refund_changelist", "refund"),
            (PenaltyWaiver, "admin:billing_penaltywaiver_changelist", "penalty waiver"),
            (DayReopen, "admin:office_dayreopen_changelist", "reopening of a closed day"),
            (AchFile, "admin:remittance_achfile_changelist", "autopay debit file"),
            (AmendmentRebill, "admin:billing_amendmentrebill_changelist", "rebilling after an amendment"),
            (ConversionJob, "admin:conversion", "conversion post"))


def _decisions_section(user) -> Section | None:
    """What waits for this user to decide (asked by someone else), and their own requests waiting for another."""
    items = []
    for model, list_name, noun in REQUESTS:
        rule = approval_of(model)
        waiting = model.objects.filter(**{model.workflow.field: PENDING})
        query = {} if list_name == "admin:conversion" else {f"{model.workflow.field}__exact": PENDING}
        if user.has_perm(rule.permission):
            count = waiting.exclude(**{f"{rule.requester}_id": user.pk}).count()
            if count:
                items.append(Item(f"{_plural(count, noun)} for you to approve or refuse", _url(list_name, query=query)))
        mine = waiting.filter(**{f"{rule.requester}_id": user.pk}).count()
        if mine:
            items.append(Item(f"{_plural(mine, noun)} you asked for, waiting for another to decide",
                              _url(list_name, query=query), "you may withdraw your own from its page"))
    return Section("decisions", "Decisions waiting", items) if items else None


def _field_section(*, as_of: date) -> Section:
    """The crew's day: the stops on today's sheet, and the pages it works from."""
    stops = day_sheet(on=as_of)
    shutoffs = sum(1 for stop in stops if stop.work_order is not None)
    return Section("field", "Field work today", [
        Item(f"{_plural(len(stops), 'stop')} on today's day sheet", _url("admin:fieldwork_fieldorder_day"),
             f"{_plural(shutoffs, 'shut-off')} among them" if shutoffs else ""),
    ], [Item("Today's day sheet", _url("admin:fieldwork_fieldorder_day")),
        Item("Shut-off list", _url("admin:fieldwork_fieldorder_shutoffs"))])


def _docket_section(*, as_of: date) -> Section:
    """The hearing officer's docket: cases waiting for their hearing, and those whose day has come."""
    waiting = TerminationCase.objects.filter(status__in=HEARD, hearing_on__isnull=False)
    due = waiting.filter(hearing_on__lte=as_of).count()
    return Section("docket", "Hearings", [
        Item(f"{_plural(due, 'case')} at or past its hearing date: hearing and determination to record",
             _url("admin:termination_terminationcase_docket")),
        Item(f"{_plural(waiting.count() - due, 'hearing')} to come", _url("admin:termination_terminationcase_docket")),
    ], [Item("Hearing docket", _url("admin:termination_terminationcase_docket"))])


def _inspector_section() -> Section:
    """The backflow inspector's queue: tests submitted online to accept or reject, reverse flow to follow up."""
    submitted = DeviceTest.objects.filter(status=DeviceTest.Status.SUBMITTED).count()
    flows = ReverseFlow.objects.filter(status=ReverseFlow.Status.OPEN).count()
    return Section("inspector", "Backflow: to look at", [
        Item(f"{_plural(submitted, 'test')} submitted online to accept or reject",
             _url("admin:backflow_devicetest_changelist", query={"status__exact": "submitted"})),
        Item(f"{_plural(flows, 'reverse-flow follow-up')} open",
             _url("admin:backflow_reverseflow_changelist", query={"status__exact": "open"}))])


UNCLOSED_DAYS = 30  # how far back the days with payments and no close are looked for


def _treasurer_section(*, as_of: date) -> Section:
    """The days with payments whose books are not closed (never closed, or reopened and not closed again)."""
    since = as_of - timedelta(days=UNCLOSED_DAYS)
    paid_days = set(Payment.objects.filter(paid_on__gte=since, paid_on__lt=as_of).values_list("paid_on", flat=True))
    closed = set(DayClose.objects.filter(day__gte=since, reopened_at__isnull=True).values_list("day", flat=True))
    open_days = sorted(paid_days - closed)
    items = [Item(f"{_plural(len(open_days), 'day')} of the last {UNCLOSED_DAYS} with payments and no close",
                  _url("admin:office_dayclose_changelist"),
                  ", ".join(_day(day) for day in open_days[:ROWS_SHOWN]) + (" …" if len(open_days) > ROWS_SHOWN
                                                                              else ""))]
    return Section("books", "Books to close", items, [
        Item("Deposits reconciliation", _url("admin:deposits")),
        Item("Days closed", _url("admin:office_dayclose_changelist"))])


def _backflow_section(*, as_of: date) -> Section | None:
    if not Device.objects.exists():
        return None
    month_end = date(as_of.year, as_of.month, monthrange(as_of.year, as_of.month)[1])
    due = devices_due(as_of=as_of, within_days=(month_end - as_of).days)
    overdue = sum(1 for d in due if d.overdue)
    reports = _url("admin:backflow_device_reports")
    return Section("backflow", "Backflow tests", [
        Item(f"{_plural(overdue, 'device')} overdue for its test", reports),
        Item(f"{_plural(len(due) - overdue, 'device')} due by {_day(month_end)}", reports)])


def _readiness_section() -> Section | None:
    """What is still sample, default or missing before going live, for who settles it; nothing once ready."""
    from .readiness import readiness_findings

    findings = readiness_findings()
    if not findings:
        return None
    url = _url("admin:readiness")
    return Section("readiness", "Before going live", [
        Item(f"{_plural(len(findings), 'thing')} to settle before going live", url),
        *(Item(f"{f.area}: {f.what}", url) for f in findings[:ROWS_SHOWN])])


def _nightly_section() -> Section:
    run = NightlyRun.objects.prefetch_related("steps").first()
    if run is None:
        return Section("nightly", "Last nightly job", [Item("The nightly job has not run yet.")])
    items = [Item(f"{_day(run.run_on)}: {run.get_status_display().lower()}",
                  _url("admin:core_nightlyrun_change", run.pk))]
    for step in run.steps.all():
        counts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in (step.counts or {}).items())
        items.append(Item(f"{step.name}: {step.get_status_display().lower()}",
                          detail=step.error if step.error else counts))
    return Section("nightly", "Last nightly job", items,
                   [Item("Nightly jobs", _url("admin:core_nightlyrun_changelist"))])


# --- superusers: security and the scheduler ----------------------------------------------------------------

def _security_section(*, now) -> Section:
    from axes.models import AccessAttempt, AccessFailureLog

    since = now - timedelta(days=7)
    limit = getattr(settings, "AXES_FAILURE_LIMIT", 5)
    attempts = AccessAttempt.objects.filter(attempt_time__gte=since)
    locked = attempts.filter(failures_since_start__gte=limit).count()
    failures = AccessFailureLog.objects.filter(attempt_time__gte=since).count()
    items = [Item(f"{_plural(failures, 'failed login')} in the last 7 days",
                  _url("admin:axes_accessfailurelog_changelist")),
             Item(f"{_plural(locked, 'lockout')} "
                  f"({_plural(attempts.count(), 'login with failures', 'logins with failures')})",
                  _url("admin:axes_accessattempt_changelist"), f"locked out after {limit} failures")]
    for a in attempts.order_by("-attempt_time")[:ROWS_SHOWN // 2]:
        items.append(Item(f"{a.username or '(no username)'} from {a.ip_address or 'unknown address'}",
                          detail=f"{_plural(a.failures_since_start, 'failure')}, last "
                                 f"{timezone.localtime(a.attempt_time):%b %-d %H:%M}"))
    return Section("security", "Security", items)


def _scheduler_section() -> Section:
    from django_celery_beat.models import PeriodicTask

    items = []
    for task in PeriodicTask.objects.order_by("name")[:ROWS_SHOWN]:
        last = f"last run {timezone.localtime(task.last_run_at):%b %-d %H:%M}" if task.last_run_at else "not run yet"
        items.append(Item(f"{task.name}: {'enabled' if task.enabled else 'disabled'}",
                          _url("admin:django_celery_beat_periodictask_change", task.pk), last))
    if not items:
        items.append(Item("No scheduled tasks."))
    return Section("scheduler", "Scheduler", items, [
        Item("Scheduled tasks", _url("admin:django_celery_beat_periodictask_changelist"))])


# --- shortcuts and the whole ------------------------------------------------------------------------------

def _shortcuts(user) -> list[Shortcut]:
    wanted = (
        ("billing.add_payment", "Post a payment", "admin:billing_payment_counter"),
        ("billing.add_payment", "Import payments", "admin:billing_payment_import"),
        ("meters.add_reading", "Import readings", "admin:meters_reading_import"),
        ("billing.add_billingrun", "Start or preview a billing run", "admin:billing_billingrun_start"),
        ("reports.run_reportfile", "Reports", "admin:reports"),
        ("termination.view_terminationcase", "Termination case board", "admin:termination_terminationcase_board"),
        ("termination.determine_terminationcase", "Hearing docket", "admin:termination_terminationcase_docket"),
        ("fieldwork.change_fieldorder", "Today's day sheet", "admin:fieldwork_fieldorder_day"),
        ("auth.add_user", "Add a member of staff", "admin:staff_add"),
    )
    out = []
    for perm, words, name in wanted:
        if user.has_perm(perm) and (url := _url(name)):
            out.append(Shortcut(words, url))
    return out


def _unless_refused(key: str, title: str, build) -> Section | None:
    """The section, or a line saying why the installed preset cannot give it."""
    try:
        return build()
    except ApplicationError as exc:
        return Section(key, title, [Item(f"Not available: {exc}")])


def dashboard_for(*, user, as_of: date) -> Dashboard:
    """The sections ``user`` may see, as of ``as_of``. A section whose rules the installed preset lacks (or
    before any preset is installed) says so instead of failing the page."""
    wanted = (
        (True, "decisions", "Decisions waiting", lambda: _decisions_section(user)),
        (user.has_perm("fieldwork.change_fieldorder") and not user.has_perm("fieldwork.add_fieldorder"), "field",
         "Field work today", lambda: _field_section(as_of=as_of)),
        (user.has_perm("termination.determine_terminationcase"), "docket", "Hearings",
         lambda: _docket_section(as_of=as_of)),
        (user.has_perm("backflow.change_devicetest") and user.has_perm("backflow.change_reverseflow"), "inspector",
         "Backflow: to look at", _inspector_section),
        (user.has_perm("office.view_dayclose") and not user.has_perm("office.add_dayclose"), "books", "Books to close",
         lambda: _treasurer_section(as_of=as_of)),
        (user.has_perm("meters.view_reading"), "readings", "Readings waiting",
         lambda: _readings_section(as_of=as_of)),
        (user.has_perm("billing.view_billingrun") or user.has_perm("billing.view_billingexception"), "runs",
         "Billing runs and exceptions", lambda: _runs_section(user)),
        (user.has_perm("billing.view_payment"), "payments", "Payments posted today",
         lambda: _payments_section(user, as_of=as_of)),
        (user.has_perm("billing.view_ledgerentry"), "penalties", "Penalties due tonight",
         lambda: _penalties_section(as_of=as_of)),
        (user.has_perm("termination.view_terminationcase"), "termination", "Termination deadlines",
         lambda: _termination_section(as_of=as_of)),
        (user.has_perm("backflow.view_device"), "backflow", "Backflow tests", lambda: _backflow_section(as_of=as_of)),
        (user.has_perm("core.view_nightlyrun"), "nightly", "Last nightly job", _nightly_section),
        (user.has_perm("ordinance.change_utility"), "readiness", "Before going live", _readiness_section),
        (user.is_superuser, "security", "Security", lambda: _security_section(now=timezone.now())),
        (user.is_superuser, "scheduler", "Scheduler", _scheduler_section),
    )
    sections = [_unless_refused(key, title, build) for allowed, key, title, build in wanted if allowed]
    return Dashboard(as_of=as_of, sections=[s for s in sections if s is not None], shortcuts=_shortcuts(user),
                     account_search_url=_url("admin:accounts_account_changelist")
                     if user.has_perm("accounts.view_account") else "")
