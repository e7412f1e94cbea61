"""Backflow compliance: assessments, devices, testers and tests, notices, and what they put on the bill.

Every refusal names its field and the section; nothing is recorded in the future. Fines and fees reach the
bill as billing's pending charges (``billing.services.charges.charge_add``) with their computation and
citation, and a ``NoticeCharge`` per charge so a day of a fine, or a fee, is charged once.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.db import IntegrityError, transaction

from accounts.models import Account
from core.clock import after_errors, refuse_future, today
from core.dates import fmt_day
from core.errors import ApplicationError, FieldError, NotFound, refuse_any, refuse_nul
from core.money import fmt_dollars
from core.workflow import transition

from ..documents import notice_pdf_store
from ..models import Assessment, ComplianceNotice, Device, DeviceTest, ReverseFlow, Tester
from ..policy import BackflowPolicy, backflow_policy, device_rule, device_test_frequency
from ..schedule import next_test_due
from ..signals import noncompliance_found
from .fines import demand_fees_post

TEXT_MAX = 5000


def _actor(actor):
    return actor if getattr(actor, "pk", None) else None


# --- Assessment and devices ---------------------------------------------------------------------------------

@transaction.atomic
def assessment_record(*, account: Account, codes: list[str], as_of: date, actor, note: str = "",
                      reason: str = "") -> Assessment:
    """Record the conditions found at the account's premises and the preset's answer; the account's devices
    are flagged again against it."""
    refuse_future(as_of, doing="recorded")
    try:
        answer = device_rule(as_of).assess(set(codes), note=note, reason=reason)
    except ValueError as exc:
        raise ApplicationError(str(exc), field=getattr(exc, "field", "condition")) from None
    assessment = Assessment.objects.create(
        account=account, conditions=sorted(codes), note=note.strip(), reason=reason.strip(),
        required=answer.required, allowed=list(answer.allowed), citation=answer.citation, trace=list(answer.trace),
        assessed_on=as_of, assessed_by=_actor(actor))
    for device in account.backflow_devices.exclude(status=Device.Status.REMOVED):
        _flag(device, assessment)
    return assessment


def current_assessment(account: Account) -> Assessment | None:
    return account.backflow_assessments.order_by("-assessed_on", "-id").first()


def _flag(device: Device, assessment: Assessment | None) -> None:
    if assessment is not None and assessment.required and device.type not in assessment.allowed:
        device.flagged = True
        device.flag_reason = (f"a {device.type} is not allowed at these premises: {', '.join(assessment.allowed)} "
                              f"({assessment.citation})")
    else:
        device.flagged, device.flag_reason = False, ""
    device.save(update_fields=["flagged", "flag_reason"])


@transaction.atomic
def device_register(*, account: Account, type: str, serial: str, size: str, installed_on: date, actor,
                    make: str = "", model: str = "", location: str = "") -> Device:
    refuse_future(installed_on, field="installed_on", doing="recorded")
    refuse_nul(type=type, serial=serial, size=size, make=make, model=model, location=location)
    errors = []
    if type not in Device.Type.values:
        errors.append(FieldError("type", f"'{type}' is not a device type; use {', '.join(Device.Type.values)}"))
    serial = (serial or "").strip()
    if not serial:
        errors.append(FieldError("serial", "is required"))
    elif Device.objects.filter(serial=serial).exists():
        errors.append(FieldError("serial", f"a device with serial {serial} is already registered"))
    if not (size or "").strip():
        errors.append(FieldError("size", "is required (inches)"))
    refuse_any(errors)
    device = Device.objects.create(account=account, type=type, serial=serial, size=size.strip(), make=make.strip(),
                                   model=model.strip(), location=location.strip(), installed_on=installed_on)
    _flag(device, current_assessment(account))
    return device


# --- Testers and tests --------------------------------------------------------------------------------------

@transaction.atomic
def tester_register(*, certification_no: str, name: str, certification_expires: date,
                    gauge_calibrated_on: date | None = None, company: str = "", email: str = "") -> Tester:
    certification_no = (certification_no or "").strip()
    errors = []
    if not certification_no:
        errors.append(FieldError("certification_no", "is required"))
    if not (name or "").strip():
        errors.append(FieldError("name", "is required"))
    refuse_any(errors)
    tester, _ = Tester.objects.update_or_create(
        certification_no=certification_no,
        defaults={"name": name.strip(), "certification_expires": certification_expires,
                  "gauge_calibrated_on": gauge_calibrated_on, "company": company.strip(), "email": email.strip()})
    return tester


@transaction.atomic(durable=True)
def tester_save(*, tester: Tester | None, certification_no: str, name: str, certification_expires: date,
                gauge_calibrated_on: date | None = None, company: str = "", email: str = "", phone: str = "",
                user=None) -> Tester:
    """Add a tester (``tester`` None) or change one, with the login the tester submits tests online with.
    Unlike ``tester_register`` (the command's, keyed on the certification number), a certification number
    may be corrected here; one that belongs to another tester, or a login linked to another tester, is
    refused."""
    certification_no, name = (certification_no or "").strip(), (name or "").strip()
    errors = []
    if not certification_no:
        errors.append(FieldError("certification_no", "is required"))
    else:
        other = Tester.objects.filter(certification_no=certification_no).exclude(pk=getattr(tester, "pk", None))
        if other.exists():
            errors.append(FieldError("certification_no", f"NYS certification {certification_no} is already "
                                                         f"registered to {other.first().name}"))
    if not name:
        errors.append(FieldError("name", "is required"))
    if user is not None:
        linked = Tester.objects.filter(user=user).exclude(pk=getattr(tester, "pk", None)).first()
        if linked is not None:
            errors.append(FieldError("user", f"the login {user.get_username()} is already linked to {linked}"))
    errors += after_errors(today(), "record the calibration once done", gauge_calibrated_on=gauge_calibrated_on)
    refuse_any(errors)
    tester = tester or Tester()
    tester.certification_no, tester.name, tester.certification_expires = certification_no, name, certification_expires
    tester.gauge_calibrated_on, tester.company = gauge_calibrated_on, (company or "").strip()
    tester.email, tester.phone, tester.user = (email or "").strip(), (phone or "").strip(), user
    tester.save()
    return tester


def tester_get(certification_no: str) -> Tester:
    refuse_nul(tester=certification_no)
    tester = Tester.objects.filter(certification_no=(certification_no or "").strip()).first()
    if tester is None:
        raise NotFound(f"no tester with NYS certification number '{certification_no}'", field="tester")
    return tester


def device_get(serial: str) -> Device:
    refuse_nul(serial=serial)
    device = Device.objects.select_related("account").filter(serial=(serial or "").strip()).first()
    if device is None:
        raise NotFound(f"no device with serial '{serial}'", field="serial")
    return device


def _psid(value, field: str, errors: list) -> Decimal | None:
    if value in (None, ""):
        return None
    text = str(value).strip()
    # Decimal() reads any script's digits ("١٢٫٥"); a gauge reading is written in ASCII digits only.
    if not text.isascii():
        errors.append(FieldError(field, f"'{value}' is not a number of psid (digits 0–9 and a point)"))
        return None
    try:
        number = Decimal(text)
    except ArithmeticError:
        errors.append(FieldError(field, f"'{value}' is not a number of psid"))
        return None
    if not number.is_finite() or number < 0 or number > 200:
        errors.append(FieldError(field, f"{value} psid is not a reading (0 to 200)"))
        return None
    return number


@transaction.atomic
def test_record(*, device: Device, tester: Tester, tested_on: date, result: str, actor, as_of: date | None = None,
                check_valve_1=None, check_valve_2=None, relief_valve=None, repairs: str = "",
                online: bool = False, by_department: bool = False) -> DeviceTest:
    """Record a test. A tester whose certification had lapsed on the test day is refused (NYS certification
    is what makes a test count). Submitted online, the test waits for the clerk to accept it."""
    as_of = as_of or today()
    errors = after_errors(as_of, "a test is recorded once done", tested_on=tested_on)
    if result not in DeviceTest.Result.values:
        errors.append(FieldError("result", f"'{result}' is not a result; use pass or fail"))
    if tester.certification_expires < tested_on:
        errors.append(FieldError("tester", (
            f"the NYS certification {tester.certification_no} of {tester.name} expired on "
            f"{tester.certification_expires}, before the test on {tested_on}: a test counts only by a certified "
            "tester")))
    if tested_on < device.installed_on:
        errors.append(FieldError("tested_on",
                                 f"{tested_on} is before the device was installed ({device.installed_on})"))
    readings = {name: _psid(value, name, errors) for name, value in (
        ("check_valve_1_psid", check_valve_1), ("check_valve_2_psid", check_valve_2),
        ("relief_valve_opening_psid", relief_valve))}
    if DeviceTest.objects.filter(device=device, tester=tester, tested_on=tested_on).exists():
        errors.append(FieldError("tested_on", f"a test of {device.serial} by {tester.certification_no} on "
                                              f"{tested_on} is already recorded"))
    refuse_any(errors)
    return DeviceTest.objects.create(
        device=device, tester=tester, tested_on=tested_on, result=result, repairs=(repairs or "").strip()[:TEXT_MAX],
        status=DeviceTest.Status.SUBMITTED if online else DeviceTest.Status.ACCEPTED, submitted_online=online,
        by_department=by_department and not online,
        reviewed_by=None if online else _actor(actor), reviewed_on=None if online else as_of, **readings)


@transaction.atomic(durable=True)
def test_review(*, test: DeviceTest, accept: bool, actor, as_of: date, note: str = "") -> DeviceTest:
    """The clerk accepts (or rejects, with a note) a test a tester submitted online."""
    note = (note or "").strip()
    if not accept and not note:
        raise ApplicationError("a rejected test says why", field="note")
    return transition(test, to=DeviceTest.Status.ACCEPTED if accept else DeviceTest.Status.REJECTED, actor=actor,
                      note=note or "accepted", changes={"reviewed_by": _actor(actor), "reviewed_on": as_of,
                                                        "review_note": note})


@dataclass(frozen=True)
class Due:
    device: Device
    due_on: date
    citation: str
    last_test: DeviceTest | None
    overdue: bool


def device_due(device: Device, *, as_of: date) -> Due:
    """When the device's next test is due: from its last accepted passing test (or its installation), by the
    preset's frequency; a failed last test is due at once."""
    tests = [t for t in device.tests.all() if t.status == DeviceTest.Status.ACCEPTED and t.tested_on <= as_of]
    last = max(tests, key=lambda t: (t.tested_on, t.pk), default=None)
    defective = _defective_certification_on(device.account_id, as_of=as_of)
    if last is not None and last.result == DeviceTest.Result.FAIL:
        due_on, citation = last.tested_on, "failed test: repair and retest"
    else:
        tested_on = last.tested_on if last else device.installed_on
        due_on, citation = next_test_due(device_test_frequency(tested_on), tested_on=tested_on,
                                         defective_certification_on=defective)
    return Due(device=device, due_on=due_on, citation=citation, last_test=last, overdue=due_on < as_of)


def _defective_certification_on(account_id: int, *, as_of: date) -> date | None:
    notice = (ComplianceNotice.objects.filter(account_id=account_id, kind="deficiency", served_on__lte=as_of)
              .order_by("-served_on").first())
    return notice.served_on if notice else None


def devices_due(*, as_of: date, within_days: int = 30) -> list[Due]:
    """Devices in service whose test is overdue or due within ``within_days``, soonest first."""
    out = []
    for device in (Device.objects.filter(status=Device.Status.ACTIVE, installed_on__lte=as_of)
                   .select_related("account", "account__owner", "account__premises").prefetch_related("tests")):
        due = device_due(device, as_of=as_of)
        if due.due_on <= as_of + timedelta(days=within_days):
            out.append(due)
    return sorted(out, key=lambda d: (d.due_on, d.device.serial))


# --- Notices ------------------------------------------------------------------------------------------------

def notice_deadline(notice: ComplianceNotice, *, policy: BackflowPolicy | None = None) -> date | None:
    policy = policy or backflow_policy()
    rule = policy.notices.get(notice.kind)
    if rule is None:
        return None
    if notice.kind == "test_due" and notice.due_for:
        return notice.due_for
    start = notice.received_on if rule.counted_from == "received" else notice.served_on
    if start is None:
        return None
    deadline = start + timedelta(days=rule.days)
    return min(deadline, notice.shortened_to) if notice.shortened_to else deadline


@transaction.atomic
def notice_serve(*, account: Account, kind: str, served_on: date, actor, method: str = "", as_of: date | None = None,
                 received_on: date | None = None, article_number: str = "", device: Device | None = None,
                 largest_pipe: Decimal | None = None, per_day: Decimal | None = None, due_for: date | None = None,
                 test: DeviceTest | None = None, render: bool = True) -> ComplianceNotice:
    """Serve a compliance notice of the preset; its deadline follows the preset (``backflow.policy``)."""
    as_of = as_of or today()
    policy = backflow_policy()
    errors = []
    rule = policy.notice(kind)
    method = method or rule.methods[0]
    if method not in rule.methods:
        errors.append(FieldError("method", f"a {kind.replace('_', ' ')} notice is served by "
                                           + " or ".join(m.replace("_", " ") for m in rule.methods)
                                           + f" ({rule.citation})"))
    errors += after_errors(as_of, "record the notice once served", served_on=served_on, received_on=received_on)
    if received_on is not None and received_on < served_on:
        errors.append(FieldError("received_on", f"{received_on} is before service on {served_on}"))
    fine = policy.fine
    if fine and fine.scheme == "per_day_pipe" and kind in fine.on_kinds:
        if largest_pipe is None or largest_pipe <= 0 or largest_pipe > 48:
            errors.append(FieldError("largest_pipe", "the fine is counted by the inches of the largest pipe "
                                                     f"supplying the premises: give --largest-pipe ({fine.citation})"))
    if per_day is not None:
        if not (fine and fine.scheme == "clerk_per_day" and kind in fine.on_kinds):
            errors.append(FieldError("per_day", f"a {kind} notice carries no daily fine under {policy.citation}"))
        elif per_day <= 0 or per_day > fine.per_day:
            errors.append(FieldError("per_day", f"the daily fine is more than $0 and at most "
                                                f"{fmt_dollars(fine.per_day)} ({fine.citation})"))
    if device is not None and device.account_id != account.pk:
        errors.append(FieldError("device", f"device {device.serial} is not at account {account.account_no}"))
    if kind == "demand" and policy.demand is not None:
        if test is None and device is not None:
            # The device's latest test by the Department's agents on or before the demand, not yet demanded.
            test = (device.tests.filter(by_department=True, tested_on__lte=served_on, demands__isnull=True)
                    .order_by("-tested_on", "-id").first()
                    or device.tests.filter(by_department=True).order_by("-tested_on", "-id").first())
        errors.extend(demand_refusals(account=account, test=test, served_on=served_on, policy=policy))
    elif test is not None:
        errors.append(FieldError("test", f"only a demand for the test fee names a test ({rule.citation})"))
    refuse_any(errors)
    if method in ("personal", "suitable_age_and_mail") and received_on is None:
        received_on = served_on
    notice = ComplianceNotice(
        account=account, device=device, kind=kind, citation=rule.citation, served_on=served_on, method=method,
        article_number=(article_number or "").strip(), received_on=received_on, largest_pipe_inches=largest_pipe,
        per_day=per_day, due_for=due_for, served_by=_actor(actor), test=test if kind == "demand" else None,
        amount=policy.demand.amount if kind == "demand" and policy.demand else None)
    notice.deadline = notice_deadline(notice, policy=policy)
    notice.save()
    if render:
        transaction.on_commit(lambda: notice_pdf_store(notice_id=notice.pk))
    return notice


@transaction.atomic(durable=True)
def notice_shorten(*, notice: ComplianceNotice, to: date, by: str, reason: str) -> ComplianceNotice:
    """Old Westbury: the Board or the Superintendent may shorten the 7-day window for exigent circumstances;
    who and why are recorded."""
    policy = backflow_policy()
    rule = policy.notice(notice.kind)
    errors = []
    if not rule.shortenable:
        errors.append(FieldError("kind", f"a {notice.kind} notice's window cannot be shortened ({rule.citation})"))
    if not (by or "").strip():
        errors.append(FieldError("by", "who shortened it: the Board of Trustees or the Superintendent"))
    if not (reason or "").strip():
        errors.append(FieldError("reason", "the exigent circumstances, threatening health, safety or welfare"))
    if notice.deadline and to >= notice.deadline:
        errors.append(FieldError("to", f"{to} does not shorten the window ending {notice.deadline}"))
    if to < notice.served_on:
        errors.append(FieldError("to", f"{to} is before the notice was served ({notice.served_on})"))
    refuse_any(errors)
    notice.shortened_to, notice.shortened_by, notice.shortened_reason = to, by.strip(), reason.strip()
    notice.deadline = notice_deadline(notice, policy=policy)
    notice.save(update_fields=["shortened_to", "shortened_by", "shortened_reason", "deadline"])
    return notice


@transaction.atomic(durable=True)
def notice_cure(*, notice: ComplianceNotice, cured_on: date, actor=None) -> ComplianceNotice:
    """The owner complied (or paid the fee demanded): the fine stops and nothing more is charged. A cure date
    already recorded may be corrected only while no fine has been charged to it: a fine's days are counted up to
    the day before the cure, so moving it would leave charged days the facts no longer make owed (or owed days
    never charged)."""
    refuse_future(cured_on, field="cured_on", doing="recorded")
    if cured_on < notice.served_on:
        raise ApplicationError(f"{cured_on} is before the notice ({notice.served_on})", field="cured_on")

    def guard(locked: ComplianceNotice) -> list[FieldError]:
        charged = locked.charges.exclude(last_day__isnull=True).order_by("-last_day").first()
        if charged is None:
            return []
        if locked.cured_on is not None and locked.cured_on != cured_on:
            return [FieldError("cured_on", (
                f"the cure date {fmt_day(locked.cured_on)} cannot move: fines were charged to it (through "
                f"{fmt_day(charged.last_day)}, {charged.computation})"))]
        if charged.last_day >= cured_on:
            return [FieldError("cured_on", (
                f"fines are already charged through {fmt_day(charged.last_day)} ({charged.computation}); a cure on "
                f"{fmt_day(cured_on)} would leave days charged after the owner complied"))]
        return []

    moved = notice.cured_on is not None and notice.cured_on != cured_on
    what = (f"cure date moved from {fmt_day(notice.cured_on)} to {fmt_day(cured_on)}" if moved
            else f"complied with on {fmt_day(cured_on)}")
    return transition(notice, to=ComplianceNotice.Status.CURED, actor=actor, note=what, guard=guard,
                      changes={"cured_on": cured_on})


@transaction.atomic(durable=True)
def notice_hearing_request(*, notice: ComplianceNotice, received_on: date, actor, as_of: date) -> ComplianceNotice:
    """The owner's written request for a hearing, received by the office (Old Westbury: before the Board of Zoning
    Appeals, within 7 days of receipt of the notice). One received after the window is recorded, and says so; the
    Department's test and its fee follow only where no request came in time."""
    refuse_future(received_on, field="received_on", doing="recorded")
    errors = after_errors(as_of, received_on=received_on)
    if received_on < notice.served_on:
        errors.append(FieldError("received_on", f"{received_on} is before the notice was served ({notice.served_on})"))
    refuse_any(errors)
    late = notice.deadline is not None and received_on > notice.deadline
    what = (f"written request for a hearing received {fmt_day(received_on)}"
            + (f", after the window closed on {fmt_day(notice.deadline)}" if late else ""))
    return transition(notice, to=ComplianceNotice.Status.HEARING_REQUESTED, actor=actor, note=what,
                      changes={"hearing_requested_on": received_on})


def demand_refusals(*, account: Account, test: DeviceTest | None, served_on: date,
                    policy: BackflowPolicy) -> list[FieldError]:
    """Why a demand for the test fee may not be served (Old Westbury, backflow enforcement B(3)): the fee is for a
    test the Department's agents performed after the owner, served a violation notice, neither asked for a hearing
    nor cured within 7 days of receipt; one fee per test performed, never one per demand. Every reason, each
    naming the section."""
    cite = policy.demand.citation
    if test is None:
        return [FieldError("test", f"a demand is for a test the Department's agents performed: name the device whose "
                                   f"test it was ({cite})")]
    out = []
    if test.device.account_id != account.pk:
        out.append(FieldError("test", f"the test of {test.device.serial} is not at account {account.account_no}"))
    if not test.by_department:
        out.append(FieldError("test", f"the test of {test.device.serial} on {fmt_day(test.tested_on)} was not "
                                      f"performed by the Department's agents: no fee is due for it ({cite})"))
    if test.tested_on > served_on:
        out.append(FieldError("served_on", f"the demand ({fmt_day(served_on)}) comes before the test it is for "
                                           f"({fmt_day(test.tested_on)})"))
    if ComplianceNotice.objects.filter(kind="demand", test=test).exists():
        out.append(FieldError("test", f"the test of {test.device.serial} on {fmt_day(test.tested_on)} was already "
                                      f"demanded: one fee per test performed, never one per demand ({cite})"))
    violation = (account.backflow_notices.filter(kind="violation", served_on__lt=test.tested_on)
                 .order_by("-served_on", "-id").first())
    if violation is None:
        out.append(FieldError("test", f"no violation notice was served before the test on "
                                      f"{fmt_day(test.tested_on)}: the Department tests only after one ({cite})"))
        return out
    if violation.deadline is None:
        out.append(FieldError("test", f"the violation notice of {fmt_day(violation.served_on)} has no receipt date "
                                      f"recorded: its 7 days run from receipt ({violation.citation})"))
    elif test.tested_on <= violation.deadline:
        out.append(FieldError("test", f"the test on {fmt_day(test.tested_on)} came within the owner's 7 days, which "
                                      f"end {fmt_day(violation.deadline)} ({violation.citation})"))
    if violation.hearing_requested_on is not None and (violation.deadline is None
                                                       or violation.hearing_requested_on <= violation.deadline):
        out.append(FieldError("test", f"the owner asked for a hearing on {fmt_day(violation.hearing_requested_on)}, "
                                      f"within the 7 days: no test fee while the Board of Zoning Appeals hears it "
                                      f"({cite})"))
    if violation.cured_on is not None and violation.cured_on <= test.tested_on:
        out.append(FieldError("test", f"the owner cured the violation on {fmt_day(violation.cured_on)}, before the "
                                      f"test: no fee is due ({cite})"))
    return out



# --- Noncompliance ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Noncompliance:
    account: Account
    reasons: list[str]
    section: str


def noncompliance(*, as_of: date) -> list[Noncompliance]:
    """Premises that qualify for discontinuance: a required device missing, a test overdue past its notice's
    deadline, a failed test not retested, or a notice's deadline passed uncured."""
    policy = backflow_policy()
    out = []
    accounts = Account.objects.filter(backflow_assessments__isnull=False).distinct().select_related("premises")
    for account in accounts:
        reasons = []
        assessment = current_assessment(account)
        devices = [d for d in account.backflow_devices.exclude(status=Device.Status.REMOVED).prefetch_related("tests")]
        if assessment and assessment.required and not any(d.type in assessment.allowed for d in devices):
            reasons.append(f"no allowed device installed ({', '.join(assessment.allowed)}; {assessment.citation})")
        for device in devices:
            due = device_due(device, as_of=as_of)
            if due.last_test is not None and due.last_test.result == "fail":
                reasons.append(f"device {device.serial} failed its test on {due.last_test.tested_on}")
        for notice in account.backflow_notices.filter(cured_on__isnull=True, deadline__lt=as_of).exclude(
                kind__in=["test_due", "demand"]):
            reasons.append(f"{notice.get_kind_display().lower()} notice of {notice.served_on} not complied with by "
                           f"{notice.deadline} ({notice.citation})")
        if reasons:
            out.append(Noncompliance(account=account, reasons=reasons,
                                     section=policy.termination_section or policy.citation))
    return out


def noncompliance_act(*, account: Account, as_of: date, actor) -> Noncompliance:
    """Announce the account's noncompliance so the termination app opens a case on violation grounds (or, in
    Old Westbury, logs the health hazard); refused when the premises comply."""
    found = next((n for n in noncompliance(as_of=as_of) if n.account.pk == account.pk), None)
    if found is None:
        raise ApplicationError(f"account {account.account_no} is in compliance on {as_of}", field="account_no")
    policy = backflow_policy()
    noncompliance_found.send(sender=Device, account_id=account.pk, section=found.section,
                             detail="; ".join(found.reasons), as_of=as_of, actor=actor,
                             emergency_kind=policy.emergency_kind)
    return found


# --- The night ----------------------------------------------------------------------------------------------

def nightly_tests_due(*, as_of: date) -> dict:
    """Send each test-due (30 days ahead) and overdue notice once, and put unpaid demanded fees on the
    November bill."""
    refuse_future(as_of, doing="sent")
    if not Device.objects.exists() and not ComplianceNotice.objects.exists():
        return {"test_due_notices": 0, "overdue_notices": 0, "fees_charged": 0}
    sent = {"test_due": 0, "overdue": 0}
    for due in devices_due(as_of=as_of, within_days=30):
        kind = "overdue" if due.overdue else "test_due"
        if ComplianceNotice.objects.filter(device=due.device, kind=kind, due_for=due.due_on).exists():
            continue
        notice_serve(account=due.device.account, kind=kind, served_on=as_of, actor=None, as_of=as_of,
                     device=due.device, due_for=due.due_on)
        sent[kind] += 1
    fees = demand_fees_post(as_of=as_of)
    return {"test_due_notices": sent["test_due"], "overdue_notices": sent["overdue"], "fees_charged": len(fees)}


# --- Reverse flow a meter reported --------------------------------------------------------------------------

def reverse_flow_follow_up(*, alert) -> ReverseFlow | None:
    """Open the follow-up of a meter's reverse-flow alert, once: the chapter's rule says what the office does now
    (test the premises' devices, or survey the premises for the cross-connection and assess the device required).
    None where the installed preset has no backflow rule."""
    existing = ReverseFlow.objects.filter(alert=alert).first()
    if existing is not None:
        return existing
    try:
        policy = backflow_policy(alert.read_on)
    except ApplicationError:
        return None
    devices = list(Device.objects.filter(account_id=alert.account_id, status=Device.Status.ACTIVE,
                                         installed_on__lte=alert.read_on).values_list("serial", flat=True))
    if devices:
        action = (f"test {', '.join(devices)} now: water flowed back through the meter on {fmt_day(alert.read_on)}, "
                  "so the device may have failed")
    else:
        action = (f"survey the premises for a cross-connection (water flowed back through the meter on "
                  f"{fmt_day(alert.read_on)}) and assess the device the rule requires")
    try:
        with transaction.atomic():
            return ReverseFlow.objects.create(account_id=alert.account_id, alert=alert, read_on=alert.read_on,
                                              action=action, citation=policy.citation, devices=devices)
    except IntegrityError:  # opened by a concurrent delivery of the same alert
        return ReverseFlow.objects.get(alert=alert)


def reverse_flow_done(*, follow_up: ReverseFlow, done_on: date, note: str, actor) -> ReverseFlow:
    """The inspector followed it up: what was found and done, dated."""
    errors = reverse_flow_problems(follow_up=follow_up, done_on=done_on, note=note)
    if errors:
        raise ApplicationError(errors=errors)
    return transition(follow_up, to=ReverseFlow.Status.DONE, actor=_actor(actor), note=note.strip()[:200],
                       changes={"done_on": done_on, "note": note.strip(), "done_by": _actor(actor)})


def reverse_flow_problems(*, follow_up: ReverseFlow, done_on: date | None, note: str) -> list[FieldError]:
    errors = []
    if done_on is None:
        return [FieldError(field="done_on", message="the day it was followed up is needed")]
    if not (note or "").strip():
        errors.append(FieldError(field="note", message="say what was found and done"))
    try:
        refuse_future(done_on, field="done_on", doing="recorded")
    except ApplicationError as exc:
        errors.extend(exc.errors)
    if done_on < follow_up.read_on:
        errors.append(FieldError(field="done_on", message=f"{done_on} is before the reverse flow "
                                                          f"({follow_up.read_on})"))
    if follow_up.status == ReverseFlow.Status.DONE:
        errors.append(FieldError(field="", message=f"followed up already on {follow_up.done_on}"))
    return errors
