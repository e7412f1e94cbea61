"""Readings from the files meter systems make, through a mapping: three layouts import to the same readings as our
CSV; a fixed-width line of the wrong width is refused naming its line; the flags reach who acts on them (a leak the
clerk and the customer, reverse flow a backflow follow-up, a reading out of its range a re-read order); a change-out
in the file changes the meter; daily reads are kept by month, give billing its month-end register, and show
continuous flow; the route file out carries the ranges the history foretells."""

import io
from datetime import date, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from backflow.models import Device, ReverseFlow
from fieldwork.models import FieldOrder
from meters.models import DailyRead, Meter, Reading, UsageAlert
from meters.readfiles import mapping_load, mapping_parse, route_file, route_stops
from notices.models import CustomerNotice
from tests.billing.steps import account_with_meter, read

pytestmark = pytest.mark.django_db
SAMPLES = Path(settings.READ_MAPPINGS_DIR) / "samples"
# What each sample file says, as our CSV would: meter, day, register (gallons), read type.
EXPECTED = [("M-0000000001", date(2026, 12, 1), 1_062_500, "actual"),
            ("M-0000000002", date(2026, 12, 1), 1_031_000, "actual"),
            ("M-0000000003", date(2026, 12, 1), 1_009_000, "actual")]


def three_meters():
    """Three accounts of book 1 read at 1,000,000 on 2025-12-01 and 1,009,000 on 2026-06-01 (about 49 gal a day)."""
    made = []
    for n in (1, 2, 3):
        account, meter = account_with_meter(book=1, account_no=f"1-000{n}", start=date(2025, 12, 1))
        account.premises.route_order, account.owner.email = n, f"owner{n}@example.com"
        account.premises.save()
        account.owner.save()
        Meter.objects.filter(pk=meter.pk).update(serial=f"M-000000000{n}")
        meter.refresh_from_db()
        read(meter, date(2026, 6, 1), 1_009_000)
        made.append((account, meter))
    return made


def fixed(serial: str, day: str, reading: int, code="A", flags="", new_serial="", new_reading=None, stop=1) -> str:
    return ("R" + f"{stop:05d}" + serial.ljust(12) + " " + day + f"{reading:010d}" + code + flags.ljust(4)
            + new_serial.ljust(12) + (f"{new_reading:09d}" if new_reading is not None else " " * 9)).ljust(83)


def handheld(*records: str) -> str:
    """A handheld file of ``records``: its header, the records and the trailer that counts them."""
    return "H BOOK 01 12012026\n" + "".join(r + "\n" for r in records) + f"T{len(records):06d}\n"


LAYOUTS = {
    None: "meter_serial,read_date,reading,read_type\n" + "".join(f"{s},{d},{v},{t}\n" for s, d, v, t in EXPECTED),
    "handheld_fixed": handheld(*(fixed(s, d.strftime("%m%d%Y"), v // 10) for s, d, v, _ in EXPECTED)),
    "drive_by_csv": "Meter Number,Account,Read Date,Reading,Read Code,Alarms,Days No Flow\n" + "".join(
        f"{s},x,{d:%m/%d/%Y},{v},REG,,0\n" for s, d, v, _ in EXPECTED),
    "ami_register_csv": "SERVICE_POINT;METER_ID;READ_DT;REGISTER_KGAL;STATUS;EVENTS\n" + "".join(
        f"SP;{s};{d:%Y%m%d};{v / 1000:.3f};OK;\n" for s, d, v, _ in EXPECTED),
}


@pytest.mark.parametrize("mapping", list(LAYOUTS))
def test_three_mapped_layouts_import_to_the_same_readings_as_our_csv(mineola, imported, mapping):
    three_meters()
    imported(LAYOUTS[mapping], *(["--mapping", mapping] if mapping else []))
    got = sorted(Reading.objects.filter(read_on=date(2026, 12, 1)).values_list("meter__serial", "read_on", "value",
                                                                                 "read_type"))
    assert got == EXPECTED
    # The same file again changes nothing.
    assert "0 created, 0 updated, 3 skipped" in imported(LAYOUTS[mapping], *(["--mapping", mapping] if mapping else []))


@pytest.mark.parametrize("sample,mapping", [("drive_by.csv", "drive_by_csv"), ("ami_register.csv", "ami_register_csv"),
                                            ("handheld_fixed.dat", "handheld_fixed")])
def test_the_shipped_samples_import_with_their_mappings(mineola, imported, sample, mapping):
    three_meters()
    out = imported((SAMPLES / sample).read_text(), "--mapping", mapping)
    assert "created" in out
    assert Reading.objects.filter(meter__serial="M-0000000001", read_on=date(2026, 12, 1), value=1_062_500).exists()
    assert UsageAlert.objects.filter(meter__serial="M-0000000002", kind="leak").exists()


def test_a_fixed_width_line_of_the_wrong_width_is_refused_naming_the_line(mineola, imported):
    three_meters()
    text = handheld(fixed("M-0000000001", "12012026", 106250), fixed("M-0000000002", "12012026", 103100)[:-2])
    with pytest.raises(CommandError, match="rejected with 1 error"):
        imported(text, "--mapping", "handheld_fixed")
    assert not Reading.objects.filter(read_on=date(2026, 12, 1)).exists()


def test_every_refusal_names_the_line_the_field_and_the_rule(mineola, tmp_path):
    three_meters()
    text = ("Meter Number,Account,Read Date,Reading,Read Code,Alarms,Days No Flow\n"
            "M-0000000001,x,13/01/2026,1062500,REG,,0\n"
            "M-0000000002,x,12/01/2026,10310x0,REG,,0\n"
            "M-0000000003,x,12/01/2026,1009000,XYZ,,0\n"
            "M-0000000009,x,12/01/2026,1009000,REG,FLOOD,0\n")
    path = tmp_path / "bad.csv"
    path.write_text(text)
    err = io.StringIO()
    with pytest.raises(CommandError, match="rejected with 4 error"):
        call_command("import_readings", str(path), "--mapping", "drive_by_csv", "--date", "2026-12-02", stderr=err)
    said = err.getvalue()
    assert "line 2" in said and "read_date (Read Date)" in said and "'13/01/2026' is not a date written %m/%d/%Y" in said
    assert "line 3" in said and "reading (Reading)" in said and "'10310x0' is not a number" in said
    assert "line 4" in said and "read_type (Read Code)" in said and "code 'XYZ'" in said
    assert "line 5" in said and "no meter with serial 'M-0000000009'" in said
    assert not Reading.objects.filter(read_on=date(2026, 12, 1)).exists()


def test_a_mapping_with_a_mistake_is_refused_naming_it():
    with pytest.raises(Exception, match=r"\[flags\] X = 'flood' is not one of leak, reverse_flow"):
        mapping_parse(b'layout = "csv"\n[columns]\nmeter_serial="a"\nread_date="b"\nreading="c"\n[flags]\nX="flood"\n',
                      name="bad")
    with pytest.raises(Exception, match=r"\[fields\] reading = a list \(\[9, 3\]\) is not \[first, last\]"):
        mapping_parse(b'layout = "fixed"\n[fields]\nmeter_serial=[1,2]\nread_date=[3,4]\nreading=[9,3]\n', name="bad")


def test_a_leak_flag_reaches_the_clerk_and_the_customer(mineola, imported):
    (account, _), *_ = three_meters()
    imported("Meter Number,Account,Read Date,Reading,Read Code,Alarms,Days No Flow\n"
             "M-0000000001,x,12/01/2026,1018000,REG,LEAK;TAMPER,0\n", "--mapping", "drive_by_csv")
    kinds = set(UsageAlert.objects.filter(account=account).values_list("kind", flat=True))
    assert kinds == {"leak", "tamper"}
    leak = UsageAlert.objects.get(account=account, kind="leak")
    assert leak.reading.value == 1_018_000 and leak.resolved_at is None
    told = CustomerNotice.objects.get(account=account, kind="usage_alert")
    assert "water running without a stop" in told.body
    assert CustomerNotice.objects.filter(account=account).count() == 1  # the tamper alarm is the office's to check


def test_reverse_flow_opens_the_backflow_follow_up_the_chapter_asks(mineola, imported):
    (account, _), (other, _), _ = three_meters()
    Device.objects.create(account=other, type="RPZ", serial="RPZ-7", size="1", installed_on=date(2025, 1, 1))
    imported("SERVICE_POINT;METER_ID;READ_DT;REGISTER_KGAL;STATUS;EVENTS\n"
             "SP;M-0000000001;20261201;1062.500;OK;REVERSE\n"
             "SP;M-0000000002;20261201;1031.000;OK;REVERSE|LEAK\n", "--mapping", "ami_register_csv")
    survey = ReverseFlow.objects.get(account=account)
    assert survey.action.startswith("survey the premises for a cross-connection") and survey.citation
    test = ReverseFlow.objects.get(account=other)
    assert test.action.startswith("test RPZ-7 now") and test.devices == ["RPZ-7"] and test.status == "open"


def test_a_reading_outside_its_expected_range_is_marked_for_a_re_read(mineola, imported):
    (account, meter), *_ = three_meters()
    # 49 gal a day foretell about 8,900 gal by Dec 1: 1,011,225 to 1,044,599 at the 4× hold factor.
    imported("Meter Number,Account,Read Date,Reading,Read Code,Alarms,Days No Flow\n"
             "M-0000000001,x,12/01/2026,1090000,REG,,0\n"
             "M-0000000002,x,12/01/2026,1018000,REG,,0\n", "--mapping", "drive_by_csv")
    alert = UsageAlert.objects.get(kind="out_of_range")
    assert alert.account == account and "outside the" in alert.detail
    order = FieldOrder.objects.get(kind="reread")
    assert order.account == account and order.status == "open" and meter.serial in order.reason
    assert Reading.objects.filter(meter=meter, value=1_090_000).exists()  # recorded, and to be re-read


def test_a_change_out_and_an_estimate_in_the_file(mineola, imported):
    *_, (account, old) = three_meters()
    imported(handheld(fixed("M-0000000003", "12012026", 100900, code="C", new_serial="N-0000000003", new_reading=0),
                      fixed("M-0000000001", "12012026", 101800, code="E")), "--mapping", "handheld_fixed")
    estimate = Reading.objects.get(meter__serial="M-0000000001", read_on=date(2026, 12, 1))
    assert (estimate.value, estimate.read_type) == (1_018_000, "estimated")
    new = Meter.objects.get(serial="N-0000000003")
    assert old.installations.get().removed_on == date(2026, 12, 1)
    assert new.installations.get().account == account
    assert old.readings.get(read_on=date(2026, 12, 1)).value == 1_009_000
    assert new.readings.get(read_on=date(2026, 12, 1)).value == 0


def daily_file(serial: str, start: date, values: list[int]) -> str:
    return "METER_ID,READ_DATE,REGISTER_GAL,EVENTS\n" + "".join(
        f"{serial},{start + timedelta(days=i)},{v},\n" for i, v in enumerate(values))


def test_daily_reads_are_kept_by_month_and_give_billing_the_month_end_register(mineola, imported):
    (account, meter), *_ = three_meters()
    registers = [1_050_000 + 150 * d for d in range(30)]
    imported(daily_file("M-0000000001", date(2026, 11, 1), registers), "--mapping", "ami_daily_csv",
             on="2026-12-01")
    row = DailyRead.objects.get(meter=meter)
    assert row.month == date(2026, 11, 1) and row.values[:30] == registers and row.values[30] is None
    # The month's last day is the meter's register reading: what billing reads.
    assert Reading.objects.get(meter=meter, read_on=date(2026, 11, 30)).value == registers[-1]
    # Imported again: nothing new. A day that runs backwards is refused naming its line.
    assert "0 created" in imported(daily_file("M-0000000001", date(2026, 11, 1), registers), "--mapping",
                                   "ami_daily_csv", on="2026-12-01")
    with pytest.raises(CommandError):
        imported(daily_file("M-0000000001", date(2026, 12, 1), [registers[-1] - 10]), "--mapping", "ami_daily_csv",
                 on="2026-12-02")
    assert not DailyRead.objects.filter(month=date(2026, 12, 1)).exists()


def test_continuous_flow_is_found_in_seven_days_of_daily_reads(mineola, imported):
    (account, meter), *_ = three_meters()
    use = [60, 140, 90, 200, 75, 130] * 5  # 30 days of ordinary use: the lowest day 60 gal
    use += [380, 400, 390, 420, 385, 410, 395]  # then a running toilet: not a day under 60 + 100
    registers, total = [], 1_050_000
    for gallons in use:
        total += gallons
        registers.append(total)
    start = date(2026, 10, 25)
    first = daily_file("M-0000000001", start, registers[:36])
    imported(first, "--mapping", "ami_daily_csv", on="2026-12-01")
    assert not UsageAlert.objects.filter(kind="continuous_flow").exists()  # six days so far
    imported(daily_file("M-0000000001", start + timedelta(days=36), registers[36:]), "--mapping", "ami_daily_csv",
             on="2026-12-01")
    alert = UsageAlert.objects.get(kind="continuous_flow")
    assert alert.account == account and alert.read_on == date(2026, 11, 30) and alert.days == 7
    assert "7 days without a day under 160 gal" in alert.detail
    assert CustomerNotice.objects.filter(account=account, kind="usage_alert").exists()


def test_the_route_file_carries_each_meters_last_reading_and_the_range_its_history_gives(mineola, tmp_path):
    three_meters()
    stops = route_stops(book=1, on=date(2026, 12, 1))
    assert [s.meter_serial for s in stops] == ["M-0000000001", "M-0000000002", "M-0000000003"]
    first = stops[0]
    # 9,000 gal in 182 days; 183 days on: 9,049.5 foretold → a quarter of it to four times it.
    assert (first.last_read_date, first.last_reading, first.low, first.high) == (date(2026, 6, 1), 1_009_000,
                                                                                  1_011_262, 1_045_198)
    text = route_file(stops, mapping_load("handheld_fixed"))
    header, line, *_, trailer = text.splitlines()
    assert header == "H" and trailer == "T000003" and len(line) == 83
    # The register in the file's unit (tens of gallons), the range rounded inwards (low up, high down).
    assert line[:6] == "R00001" and line[6:18].strip() == "M-0000000001" and line[19:27] == "06012026"
    assert line[27:37] == "0000100900" and line[37] == "A" and line[63:73] == "0000101127"
    assert line[73:83] == "0000104519"
    out = tmp_path / "route.dat"
    call_command("route_file", "--book", "1", "--date", "2026-12-01", "--mapping", "handheld_fixed", "--out", str(out),
                 stderr=io.StringIO())
    assert out.read_text() == text


def test_the_clerk_uploads_a_handheld_file_with_its_layout(mineola, client, django_capture_on_commit_callbacks):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.files.uploadedfile import SimpleUploadedFile

    from accounts.roles import roles_install

    three_meters()
    roles_install()
    clerk = get_user_model().objects.create_user("clerk", is_staff=True)
    clerk.groups.add(Group.objects.get(name="Clerk"))
    client.force_login(clerk)
    page = client.get("/admin/meters/reading/import/").content.decode()
    assert "handheld_fixed" in page and "Drive-by AMR export" in page
    upload = SimpleUploadedFile("route.dat", LAYOUTS["handheld_fixed"].encode())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/meters/reading/import/", {"file": upload, "as_of": "2026-12-02",
                                                                 "mapping": "handheld_fixed"})
    assert response.status_code == 302
    assert Reading.objects.filter(read_on=date(2026, 12, 1)).count() == 3
    bad = SimpleUploadedFile("route.dat", b"R00001M-0000000001 1201202600001\n")
    response = client.post("/admin/meters/reading/import/", {"file": bad, "as_of": "2026-12-02",
                                                             "mapping": "handheld_fixed"})
    import re

    said = re.sub(r"<[^>]+>", " ", response.content.decode())
    assert response.status_code == 200 and "is 32 characters long" in said, " ".join(said.split())[-2500:]
    alerts = client.get("/admin/meters/usagealert/")
    assert alerts.status_code == 200


def test_the_customer_sees_the_last_60_days_of_daily_use_with_a_table(mineola, imported, client):
    from accounts.models import PortalLink
    from tests.portal.conftest import customer

    (account, meter), *_ = three_meters()
    registers = [1_050_000 + 150 * d for d in range(30)]
    imported(daily_file("M-0000000001", date(2026, 11, 1), registers), "--mapping", "ami_daily_csv", on="2026-12-01")
    user = customer("dora@example.org")
    PortalLink.objects.create(user=user, account=account)
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    from unittest import mock

    with mock.patch("django.utils.timezone.localdate", return_value=date(2026, 11, 30)):
        page = client.get(f"/portal/accounts/{account.public_id}/").content.decode()
    assert "Each day, the last 60 days" in page and 'class="daily-chart"' in page
    assert "<caption>Gallons each day, last 60 days</caption>" in page
    assert "Nov 30, 2026</th><td class=\"num\">150</td>" in page
    # The scale is the customer's own: 150 gal a day on a 200 gal scale, so the bars show.
    assert 'text-anchor="end" fill="#333">200</text>' in page


def test_the_backflow_inspector_records_the_follow_up_done(mineola, imported, client):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from accounts.roles import roles_install

    (account, _), *_ = three_meters()
    imported("SERVICE_POINT;METER_ID;READ_DT;REGISTER_KGAL;STATUS;EVENTS\n"
             "SP;M-0000000001;20261201;1018.000;OK;REVERSE\n", "--mapping", "ami_register_csv")
    follow_up = ReverseFlow.objects.get()
    roles_install()
    inspector = get_user_model().objects.create_user("inspector", is_staff=True)
    inspector.groups.add(Group.objects.get(name="Backflow inspector"))
    client.force_login(inspector)
    url = f"/admin/backflow/reverseflow/{follow_up.pk}/change/"
    assert "survey the premises" in client.get(url).content.decode()
    refused = client.post(url, {"done_on": "2026-11-30", "note": ""})
    said = refused.content.decode()
    assert refused.status_code == 200 and "say what was found and done" in said and "is before the reverse flow" in said
    done = client.post(url, {"done_on": "2026-12-03", "note": "Lawn irrigation without a device; PVB required."})
    assert done.status_code == 302
    follow_up.refresh_from_db()
    assert (follow_up.status, follow_up.done_on, follow_up.done_by) == ("done", date(2026, 12, 3), inspector)
