"""Reads of the backflow registry for the API and the pages: devices with their next test due, and one device
with its tests and notices. The due date is always ``services.compliance.device_due``'s (accepted tests only)."""

from datetime import date

from django.db.models import QuerySet

from .models import Device
from .services.compliance import Due, device_due


def device_list(*, as_of: date, account_no: str = "", overdue: bool | None = None) -> QuerySet[Device]:
    """Devices by account and serial; with ``overdue``, only those whose test is (or is not) overdue on
    ``as_of`` — computed, so each device's tests are read once here."""
    rows = (Device.objects.select_related("account").prefetch_related("tests")
            .order_by("account__account_no", "serial"))
    if account_no:
        rows = rows.filter(account__account_no=account_no)
    if overdue is not None:
        wanted = [d.pk for d in rows if device_due(d, as_of=as_of).overdue == overdue]
        rows = rows.filter(pk__in=wanted)
    return rows


def _psid(value) -> str | None:
    return None if value is None else f"{value:f}"


def device_test_row(test) -> dict:
    return {"id": test.pk, "tested_on": test.tested_on, "tester": test.tester.certification_no,
            "tester_name": test.tester.name, "result": test.result,
            "check_valve_1_psid": _psid(test.check_valve_1_psid), "check_valve_2_psid": _psid(test.check_valve_2_psid),
            "relief_valve_opening_psid": _psid(test.relief_valve_opening_psid), "repairs": test.repairs,
            "status": test.status, "submitted_online": test.submitted_online, "reviewed_on": test.reviewed_on,
            "review_note": test.review_note}


def device_row(device: Device, *, as_of: date, due: Due | None = None) -> dict:
    """A device as the list gives it: what it is, where, and when its next test is due."""
    due = due or device_due(device, as_of=as_of)
    return {"serial": device.serial, "type": device.type, "size": device.size,
            "account_no": device.account.account_no, "status": device.status, "flagged": device.flagged,
            "next_due": due.due_on, "overdue": due.overdue}


def device_show(device: Device, *, as_of: date) -> dict:
    """One device: the list's fields, its details, every test (newest first) and every notice about it."""
    due = device_due(device, as_of=as_of)
    tests = device.tests.select_related("tester").order_by("-tested_on", "-id")
    notices = device.notices.order_by("-served_on", "-id")
    return {
        **device_row(device, as_of=as_of, due=due), "due_citation": due.citation,
        "service_address": device.account.premises.service_address, "make": device.make, "model": device.model,
        "location": device.location, "installed_on": device.installed_on, "removed_on": device.removed_on,
        "flag_reason": device.flag_reason,
        "tests": [device_test_row(t) for t in tests],
        "notices": [{"id": n.pk, "kind": n.kind, "citation": n.citation, "served_on": n.served_on,
                     "method": n.method, "received_on": n.received_on, "deadline": n.deadline, "cured_on": n.cured_on}
                    for n in notices],
    }
