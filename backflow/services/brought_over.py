"""Devices brought over from a village's previous system, with their last tests, written in bulk.

A conversion checks its devices file first (every rule ``device_register`` and ``test_record`` apply: a known
type, a serial registered once, a test on or after the installation by a tester certified that day), then hands
the rows here: the devices are flagged as ``device_register`` flags one (a type the premises' current assessment
does not allow), and each last test is recorded accepted, so the next test falls due from it. One insert per
table, whatever the number of devices.
"""

from dataclasses import dataclass
from datetime import date

from ..models import Assessment, Device, DeviceTest


@dataclass(frozen=True)
class DeviceBroughtOver:
    account_id: int
    type: str
    serial: str
    size: str
    make: str
    model: str
    location: str
    installed_on: date
    tested_on: date | None  # its last test in the old system, if any
    result: str
    tester_id: int | None


def devices_bring_over(items: list[DeviceBroughtOver], *, as_of: date) -> tuple[list[int], list[int]]:
    """Register the devices and record their last tests (in the caller's transaction); their ids."""
    latest: dict[int, Assessment] = {}
    for assessment in Assessment.objects.filter(account_id__in=sorted({i.account_id for i in items})).order_by(
            "account_id", "-assessed_on", "-id"):
        latest.setdefault(assessment.account_id, assessment)
    devices = []
    for item in items:
        assessment = latest.get(item.account_id)
        flagged = assessment is not None and assessment.required and item.type not in assessment.allowed
        devices.append(Device(
            account_id=item.account_id, type=item.type, serial=item.serial, size=item.size, make=item.make,
            model=item.model, location=item.location, installed_on=item.installed_on, flagged=flagged,
            flag_reason=(f"a {item.type} is not allowed at these premises: {', '.join(assessment.allowed)} "
                         f"({assessment.citation})") if flagged else ""))
    devices = Device.objects.bulk_create(devices, batch_size=2000)
    tests = DeviceTest.objects.bulk_create([
        DeviceTest(device=device, tester_id=item.tester_id, tested_on=item.tested_on, result=item.result,
                   status=DeviceTest.Status.ACCEPTED, reviewed_on=as_of)
        for device, item in zip(devices, items, strict=True) if item.tested_on is not None], batch_size=2000)
    return [d.pk for d in devices], [t.pk for t in tests]
