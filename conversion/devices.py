"""Backflow devices from another system, with the last test of each: checked all or nothing, registered through
backflow's own services, and taken out again whole by a rollback.

Design overview:

* **The file** (``DEVICES_LAYOUT``), one row per device: ``account_no,serial,type,size,make,model,location,
  installed_on`` and, when the old system has one, its last test ``tested_on,result`` by the tester
  ``tester_certification`` (NYS certification number); a tester not known here also needs ``tester_name`` and
  ``tester_certification_expires``. The next test falls due from that test, as from any test recorded here.
* **Checked as every import is**: every problem with its line and column, nothing saved — an unknown account, a
  serial used twice or already registered, a type that is none of AG, RPZ, DCA, AVB, PVB, a date after the day
  before the cutover, a test before the device was installed, a result that is not pass or fail, a tester
  unknown here without a name and expiry, a certification expired before the test.
* **Posted** in the conversion's transaction through backflow's services (``devices_bring_over``: in bulk,
  flagged as ``device_register`` flags a device the premises' rule does not allow, each last test accepted;
  ``tester_register`` for a tester not known here), with the ids of what it made kept on the batch for the
  rollback; a tester already registered is used as it is.
"""

from dataclasses import dataclass
from datetime import date

from backflow.models import ComplianceNotice, Device, DeviceTest, Tester
from backflow.services.brought_over import DeviceBroughtOver, devices_bring_over
from backflow.services.compliance import tester_register
from core.csvimport import (
    CsvLayout,
    ImportErrors,
    chunked,
    csv_rows,
    identifier,
    import_source_read,
    text,
)
from core.dates import iso_date
from core.errors import ApplicationError

from .opening import unknown_accounts

DEVICES_LAYOUT = CsvLayout(required=("account_no", "serial", "type", "size", "make", "model", "location",
                                     "installed_on", "tested_on", "result", "tester_certification", "tester_name",
                                     "tester_certification_expires"))


@dataclass(frozen=True)
class DeviceRow:
    line: int
    account_no: str
    serial: str
    type: str
    size: str
    make: str
    model: str
    location: str
    installed_on: date
    tested_on: date | None
    result: str
    tester_certification: str
    tester_name: str
    tester_expires: date | None


def devices_read(source, *, as_of: date) -> list[DeviceRow]:
    """The devices checked, all or nothing (``ImportRejected``, each problem naming ``devices.<column>``)."""
    file = import_source_read(source)
    errors = ImportErrors(columns=DEVICES_LAYOUT.columns)
    number, serial_of = identifier(max_length=20), identifier(max_length=60)
    short, words = text(max_length=80, required=False), text(max_length=200, required=False)
    rows: list[DeviceRow] = []
    serials: dict[str, int] = {}
    first_line: dict[str, int] = {}
    testers = dict(Tester.objects.values_list("certification_no", "certification_expires"))
    for row in csv_rows(text=file.text, layout=DEVICES_LAYOUT, errors=errors):
        account_no = errors.parse(row, "account_no", number)
        serial = errors.parse(row, "serial", serial_of)
        kind = row["type"]
        if kind not in Device.Type.values:
            errors.add(line=row.line, field="type", message=f"'{kind}' is not a device type; use "
                                                            f"{', '.join(Device.Type.values)}")
        size = errors.parse(row, "size", text(max_length=10))
        make, model = errors.parse(row, "make", short), errors.parse(row, "model", short)
        location = errors.parse(row, "location", words)
        installed_on = errors.parse(row, "installed_on", iso_date)
        tested_on = errors.parse(row, "tested_on", iso_date) if row["tested_on"] else None
        expires = (errors.parse(row, "tester_certification_expires", iso_date)
                   if row["tester_certification_expires"] else None)
        for column, day in (("installed_on", installed_on), ("tested_on", tested_on)):
            if day is not None and day > as_of:
                errors.add(line=row.line, field=column, message=f"{day} is after {as_of}: history is before the "
                                                                "cutover")
        certification = row["tester_certification"]
        if tested_on is not None:
            if installed_on is not None and tested_on < installed_on:
                errors.add(line=row.line, field="tested_on", message=f"{tested_on} is before the device was "
                                                                     f"installed ({installed_on})")
            if row["result"] not in DeviceTest.Result.values:
                errors.add(line=row.line, field="result", message=f"'{row['result']}' is not a result; use pass or "
                                                                  "fail")
            if not certification:
                errors.add(line=row.line, field="tester_certification", message="is required: a test counts only "
                                                                                "by a certified tester")
            elif certification not in testers and (not row["tester_name"] or expires is None):
                errors.add(line=row.line, field="tester_name", message=(
                    f"tester {certification} is not registered here: give the name and the certification's "
                    "expiry"))
            if certification in testers and testers[certification] < tested_on:
                errors.add(line=row.line, field="tester_certification", message=(
                    f"the certification {certification} registered here expired on {testers[certification]}, before "
                    f"the test on {tested_on}: a test counts only by a certified tester"))
            elif certification not in testers and expires is not None and expires < tested_on:
                errors.add(line=row.line, field="tester_certification_expires", message=(
                    f"{expires} is before the test on {tested_on}: a test counts only by a certified tester"))
        elif row["result"] or certification:
            errors.add(line=row.line, field="tested_on", message="is required with a result or a tester")
        if serial is not None:
            if serial in serials:
                errors.add(line=row.line, field="serial", message=f"serial {serial} is on line {serials[serial]} "
                                                                  "too; a device is registered once")
            serials.setdefault(serial, row.line)
        if account_no is not None:
            first_line.setdefault(account_no, row.line)
        if None in (account_no, serial, size, installed_on) or kind not in Device.Type.values:
            continue
        rows.append(DeviceRow(row.line, account_no, serial, kind, size, make or "", model or "", location or "",
                              installed_on, tested_on, row["result"], certification, row["tester_name"], expires))
    unknown_accounts(errors, first_line)
    for chunk in chunked(sorted(serials), 20_000):
        for serial in Device.objects.filter(serial__any=list(chunk)).values_list("serial", flat=True):
            errors.add(line=serials[serial], field="serial", message=f"a device with serial {serial} is already "
                                                                     "registered")
    errors.raise_if_any(file="devices")
    return rows


def devices_post(rows: list[DeviceRow], *, accounts: dict[str, int], as_of: date) -> dict[str, list[int]]:
    """Register the checked devices and their last tests (in the caller's transaction), the testers not known
    here first; the ids made, by kind."""
    made: dict[str, list[int]] = {"devices": [], "tests": [], "testers": []}
    testers = dict(Tester.objects.filter(certification_no__in=sorted({r.tester_certification for r in rows
                                                                      if r.tested_on})).values_list(
        "certification_no", "id"))
    for row in rows:
        if row.tested_on is not None and row.tester_certification not in testers:
            tester = tester_register(certification_no=row.tester_certification, name=row.tester_name,
                                     certification_expires=row.tester_expires)
            testers[row.tester_certification] = tester.pk
            made["testers"].append(tester.pk)
    made["devices"], made["tests"] = devices_bring_over([DeviceBroughtOver(
        account_id=accounts[r.account_no], type=r.type, serial=r.serial, size=r.size, make=r.make, model=r.model,
        location=r.location, installed_on=r.installed_on, tested_on=r.tested_on, result=r.result,
        tester_id=testers.get(r.tester_certification) if r.tested_on else None) for r in rows], as_of=as_of)
    return made


def devices_remove(made: dict) -> None:
    """Delete what ``devices_post`` made; refused once anything else refers to those devices or testers (a test
    or a notice since)."""
    devices, tests, testers = made.get("devices", []), made.get("tests", []), made.get("testers", [])
    later = (DeviceTest.objects.filter(device_id__in=devices).exclude(id__in=tests).count()
             + DeviceTest.objects.filter(tester_id__in=testers).exclude(id__in=tests).count()
             + ComplianceNotice.objects.filter(device_id__in=devices).count())
    if later:
        raise ApplicationError(f"{later} backflow test(s) or notice(s) refer to its devices or testers since; a "
                               "conversion is rolled back only while nothing else refers to what it brought over",
                               field="batch")
    DeviceTest.objects.filter(id__in=tests).delete()
    Device.objects.filter(id__in=devices).delete()
    Tester.objects.filter(id__in=testers).delete()
