"""Demo backflow registry: a few assessed non-residential premises with devices in every state a clerk meets,
so the device list, the reports, a test awaiting the clerk and the notices have something to show.

Everything goes through the services of ``backflow.services.compliance`` on past days, as the office would
have recorded it, counting back from today (T): each premises is assessed and its device installed a month
after the account opened; two certified testers, one whose certification lapsed 40 days ago (after the
tests they did); then the nightly step is run for each of the last 75 days, so the test-due and overdue
notices are the ones the night would have sent.

    device        tests (accepted unless said)               then
    compliant     T-465, T-100 by the certified tester       next due in about 265 days
    due soon      T-345                                      due within 30 days: the reminder is sent
    overdue       T-395 by the tester since lapsed           due about 30 days ago: reminder and overdue notice
    flagged       T-465, T-100                               a type the premises' rule does not allow
    submitted     T-350; T-3 submitted online                awaiting the clerk's "Accept test"

Where the preset fines a notice, one premises has one: Lansing's certification notice (largest pipe 2")
served 200 days ago, Washingtonville's violation notice with a $50.00 daily fine served 6 days ago.

The premises are the first non-residential accounts (all other uses, then nonprofits) opened at least 520
days ago, in account-number order, so the same village on the same day gets the same registry. Made once:
a database that already has a backflow record gets nothing more.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.db import transaction

from accounts.models import Account
from backflow.models import Assessment, ComplianceNotice, Device, DeviceTest, Tester
from backflow.policy import backflow_policy
from backflow.services import compliance as svc

NIGHTS = 75
MIN_AGE_DAYS = 520  # the oldest test (T-465) must fall after the device was installed


@dataclass(frozen=True)
class DemoDevice:
    role: str
    hazard: bool  # the premises' strict conditions (else its lesser ones)
    type: str
    tests: tuple[int, ...]  # days before today, accepted
    by_lapsed: bool = False
    online: int | None = None  # days before today of a test submitted online


DEVICES = (
    DemoDevice("compliant", True, "RPZ", (465, 100)),
    DemoDevice("due_soon", False, "DCA", (345,)),
    DemoDevice("overdue", True, "RPZ", (395,), by_lapsed=True),
    DemoDevice("flagged", True, "DCA", (465, 100)),
    DemoDevice("submitted", True, "RPZ", (350,), online=3),
)

# Per preset: (strict conditions allowing no DCA, lesser conditions allowing a DCA), as the rule names them.
CONDITIONS = {
    "mineola": (["cross_connection", "back_pressure", "hazardous"], ["cross_connection", "back_pressure"]),
    "washingtonville": (["non_residential", "laundry"], ["non_residential"]),
    "south_farmingdale": (["permanent_service", "water_cooled_equipment"], ["permanent_service"]),
    "lansing": (["private_hydrant"], ["auxiliary_approved"]),
    "old_westbury": (["cross_connection"], ["boiler_feed"]),
    "smithtown": (["hazardous"], ["aesthetically_objectionable"]),
}


def _premises(as_of: date, count: int) -> list[Account]:
    old_enough = as_of - timedelta(days=MIN_AGE_DAYS)
    found = []
    for category in (Account.Category.OTHER, Account.Category.NONPROFIT):
        found += list(Account.objects.filter(category=category, status=Account.Status.ACTIVE,
                                             opened_on__lte=old_enough).order_by("account_no")[:count - len(found)])
    return found


def demo_backflow_create(*, as_of: date) -> dict | None:
    """Make the demo registry (see the module docstring); returns what was made, or None when the database
    already has backflow records or the village has no non-residential accounts old enough."""
    if Assessment.objects.exists() or Device.objects.exists() or Tester.objects.exists():
        return None
    accounts = _premises(as_of, len(DEVICES))
    if not accounts:
        return None
    policy = backflow_policy()
    strict, lesser = CONDITIONS[policy.preset]
    with transaction.atomic():
        certified = svc.tester_register(
            certification_no="NY-BPT-10421", name="Maria Alvarez", company="Alvarez Backflow Testing",
            certification_expires=as_of + timedelta(days=400), gauge_calibrated_on=as_of - timedelta(days=120),
            email="maria@alvarezbackflow.example")
        lapsed = svc.tester_register(
            certification_no="NY-BPT-08817", name="Dennis Kowalski", company="Kowalski Plumbing & Heating",
            certification_expires=as_of - timedelta(days=40), gauge_calibrated_on=as_of - timedelta(days=500))
        devices = []
        for n, (spec, account) in enumerate(zip(DEVICES, accounts, strict=False), start=1):
            installed_on = account.opened_on + timedelta(days=30)
            svc.assessment_record(account=account, codes=strict if spec.hazard else lesser, as_of=installed_on,
                                  actor=None)
            device = svc.device_register(account=account, type=spec.type, serial=f"DEMO-{spec.type}-{n:02d}",
                                         size="2" if spec.hazard else "1", installed_on=installed_on, actor=None,
                                         make="Watts" if spec.type == "RPZ" else "Febco",
                                         model="909" if spec.type == "RPZ" else "850",
                                         location="mechanical room, after the meter")
            tester = lapsed if spec.by_lapsed else certified
            for days in sorted(spec.tests, reverse=True):
                tested_on = as_of - timedelta(days=days)
                svc.test_record(device=device, tester=tester, tested_on=tested_on, result="pass", actor=None,
                                as_of=tested_on, check_valve_1="5.4", check_valve_2="2.2",
                                relief_valve="3.1" if spec.type == "RPZ" else None)
            if spec.online is not None:
                tested_on = as_of - timedelta(days=spec.online)
                svc.test_record(device=device, tester=certified, tested_on=tested_on, result="pass", actor=None,
                                as_of=tested_on, check_valve_1="5.6", check_valve_2="2.4", relief_valve="3.3",
                                online=True)
            devices.append(device)
        fined = _fine_notice(policy, accounts[min(2, len(accounts) - 1)], as_of=as_of)
    sent = {"test_due_notices": 0, "overdue_notices": 0}
    for back in range(NIGHTS, -1, -1):
        night = svc.nightly_tests_due(as_of=as_of - timedelta(days=back))
        for key in sent:
            sent[key] += night[key]
    return {"devices": devices, "testers": 2, "fine_notice": fined, **sent}


def _fine_notice(policy, account: Account, *, as_of: date) -> ComplianceNotice | None:
    fine = policy.fine
    if fine is None:
        return None
    if fine.scheme == "per_day_pipe":
        served_on = as_of - timedelta(days=200)
        return svc.notice_serve(account=account, kind="certification", served_on=served_on, actor=None,
                                method="certified_mail", as_of=served_on, article_number="9407 1000 0000 0000 0001",
                                largest_pipe=Decimal("2"))
    served_on = as_of - timedelta(days=6)
    return svc.notice_serve(account=account, kind="violation", served_on=served_on, actor=None, method="personal",
                            as_of=served_on, per_day=Decimal("50.00"))


def demo_backflow_words(made: dict) -> str:
    devices = made["devices"]
    tests = DeviceTest.objects.filter(device__in=devices)
    return (f"Demo: backflow registry: {len(devices)} devices ({', '.join(d.serial for d in devices)}), "
            f"{tests.count()} tests ({tests.filter(status='submitted').count()} awaiting the clerk), "
            f"{made['testers']} testers, {made['test_due_notices']} test-due and {made['overdue_notices']} overdue "
            "notices" + (", a notice with a fine" if made["fine_notice"] else ""))
