"""Backflow reports: devices by hazard, and the annual summary the Health Department asks a water supplier
for (every device in service in the year, its hazard, its tests and their results, and the notices served)."""

import io
from collections import Counter
from datetime import date

from django.utils import timezone

from core.csvout import csv_dict_rows
from core.papers import Paper, paper_pdf
from ordinance.selectors import utility_required

from .models import ComplianceNotice, Device, DeviceTest
from .services.compliance import current_assessment, device_due

COLUMNS = ["serial", "type", "size", "account_no", "service_address", "hazard_allowed", "citation", "flagged",
           "tests_in_year", "last_test_on", "last_result", "tester_certification", "next_due", "overdue_at_year_end"]


def _devices_in(year: int):
    start, end = date(year, 1, 1), date(year, 12, 31)
    return (Device.objects.filter(installed_on__lte=end).exclude(removed_on__lt=start)
            .select_related("account", "account__premises").prefetch_related("tests", "tests__tester")
            .order_by("account__account_no", "serial"))


def annual_rows(*, year: int, as_of: date) -> list[dict]:
    end = min(date(year, 12, 31), as_of)
    rows = []
    for device in _devices_in(year):
        tests = [t for t in device.tests.all() if t.status == DeviceTest.Status.ACCEPTED and t.tested_on.year == year]
        last = max(tests, key=lambda t: (t.tested_on, t.pk), default=None)
        assessment = current_assessment(device.account)
        due = device_due(device, as_of=end)
        rows.append({
            "serial": device.serial, "type": device.type, "size": device.size,
            "account_no": device.account.account_no, "service_address": device.account.premises.service_address,
            "hazard_allowed": " ".join(assessment.allowed) if assessment and assessment.required else "",
            "citation": assessment.citation if assessment else "", "flagged": "yes" if device.flagged else "",
            "tests_in_year": len(tests), "last_test_on": last.tested_on.isoformat() if last else "",
            "last_result": last.result if last else "",
            "tester_certification": last.tester.certification_no if last else "",
            "next_due": due.due_on.isoformat(), "overdue_at_year_end": "yes" if due.overdue else "",
        })
    return rows


def annual_summary_csv(*, year: int, as_of: date) -> str:
    out = io.StringIO()
    csv_dict_rows(out, columns=list(COLUMNS), rows=annual_rows(year=year, as_of=as_of), lineterminator="\n")
    return out.getvalue()


def annual_summary_pdf(*, year: int, as_of: date) -> bytes:
    utility = utility_required()
    rows = annual_rows(year=year, as_of=as_of)
    by_type = Counter(r["type"] for r in rows)
    notices = Counter(ComplianceNotice.objects.filter(served_on__year=year).values_list("kind", flat=True))
    table = [("Devices in service during the year", str(len(rows)))]
    table += [(f"  {kind}", str(n)) for kind, n in sorted(by_type.items())]
    table += [("Devices tested in the year", str(sum(1 for r in rows if r["tests_in_year"]))),
              ("  of which the last test passed", str(sum(1 for r in rows if r["last_result"] == "pass"))),
              ("  of which the last test failed", str(sum(1 for r in rows if r["last_result"] == "fail"))),
              ("Devices not tested in the year", str(sum(1 for r in rows if not r["tests_in_year"]))),
              ("Devices overdue at the end of the year", str(sum(1 for r in rows if r["overdue_at_year_end"]))),
              ("Devices of a type the premises' rule does not allow", str(sum(1 for r in rows if r["flagged"])))]
    table += [(f"Notices served: {ComplianceNotice.Kind(kind).label.lower()}", str(n))
              for kind, n in sorted(notices.items())]
    return paper_pdf(Paper(
        title=f"BACKFLOW PREVENTION ANNUAL SUMMARY {year}", utility_name=utility.name,
        utility_header="\n".join([utility.office_address, utility.phone]).strip(),
        facts=[("Year", str(year)), ("As of", as_of.isoformat())],
        addressee="Department of Health\nBureau of Water Supply Protection",
        paragraphs=["Cross-connection control program: devices in service, tests and notices for the year. The "
                    "device-by-device list is the CSV of the same report."],
        table=table, warning="", footer=f"{utility.name}.", created_at=timezone.now().replace(microsecond=0),
        table_total=False))


def devices_by_hazard(*, as_of: date) -> dict[str, list[Device]]:
    out: dict[str, list[Device]] = {}
    for device in Device.objects.filter(status=Device.Status.ACTIVE).select_related("account"):
        assessment = current_assessment(device.account)
        key = " / ".join(assessment.allowed) if assessment and assessment.required else "no assessment"
        out.setdefault(key, []).append(device)
    return out
