"""``demo_bootstrap`` leaves a backflow registry under every preset: assessed non-residential premises with a
device tested within the year by a certified tester, one due within 30 days, one overdue, one flagged, one test
submitted online awaiting the clerk, a tester whose certification lapsed, and the notices the night sent
(demo/backflow.py), checked on the demo ``tests/demo/test_demo_termination.py`` makes for each preset (a demo of a
year's history takes a while to make), with ``backflow_registry_checked`` and ``backflow_registry_counts``."""

from datetime import timedelta

from backflow.models import Assessment, ComplianceNotice, Device, DeviceTest
from backflow.models import Tester as BackflowTester
from backflow.services.compliance import device_due
from core.clock import today


def backflow_registry_checked(said: str) -> None:
    assert "Demo: backflow registry: 5 devices" in said, said
    as_of = today()
    due = {device.serial: device_due(device, as_of=as_of) for device in Device.objects.select_related("account")}
    compliant = [s for s, d in due.items() if d.due_on > as_of + timedelta(days=30) and d.last_test is not None
                 and d.last_test.tested_on >= as_of - timedelta(days=365)
                 and d.last_test.tester.certification_expires >= d.last_test.tested_on]
    soon = [s for s, d in due.items() if as_of <= d.due_on <= as_of + timedelta(days=30)]
    overdue = [s for s, d in due.items() if d.overdue]
    assert compliant and soon and overdue, due
    # Every device is on non-residential premises assessed before it was installed.
    for device in Device.objects.select_related("account"):
        assert device.account.category != "one_two_family"
        assert device.account.backflow_assessments.filter(assessed_on__lte=device.installed_on).exists()
    assert Device.objects.filter(flagged=True).count() == 1
    assert DeviceTest.objects.filter(status="submitted", submitted_online=True).count() == 1
    assert BackflowTester.objects.filter(certification_expires__lt=as_of).count() == 1
    # Every test was by a tester certified on the day, and nothing is dated after today.
    for test in DeviceTest.objects.select_related("tester"):
        assert test.tester.certification_expires >= test.tested_on and test.tested_on <= as_of
    # The night sent the reminder of each device due soon and the overdue notice of the overdue one.
    sent = ComplianceNotice.objects.filter(kind__in=["test_due", "overdue"])
    assert {n.device.serial for n in sent.filter(kind="overdue")} == set(overdue)
    assert set(soon) <= {n.device.serial for n in sent.filter(kind="test_due")}
    assert all(n.served_on <= as_of for n in ComplianceNotice.objects.all())


def backflow_registry_counts() -> tuple:
    """What a second run of the demo must not add to."""
    return (Assessment.objects.count(), Device.objects.count(), DeviceTest.objects.count(),
            ComplianceNotice.objects.count(), BackflowTester.objects.count())

