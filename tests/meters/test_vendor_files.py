"""Meter files as the vendors write them: numbers that are not numbers refused naming the line (never a crash), a
decimal comma and cubic feet, no-read and no-event codes, the file's own count and total, a dry run, the route file
that comes back as it went out for every shipped mapping, and a steady small leak found and told once."""

import html
import io
import re
from datetime import date, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from billing.models import BillingException
from meters.models import DailyRead, Meter, MissedRead, Reading, UsageAlert
from meters.readfiles import mapping_load, route_file, route_stops
from meters.readfiles.doc import DOC, reading_doc
from notices.models import CustomerNotice
from tests.meters.test_read_files import fixed, handheld, three_meters
from tests.office.conftest import staff

pytestmark = pytest.mark.django_db
SAMPLES = Path(settings.READ_MAPPINGS_DIR) / "samples"
DRIVE_BY = "Meter Number,Account,Read Date,Reading,Read Code,Alarms,Days No Flow\n"


def test_the_reading_doc_is_written_from_the_registry():
    assert DOC.read_text() == reading_doc(), "run `manage.py reading_docs --write`"


@pytest.mark.parametrize("value", ["NaN", "Infinity", "sNaN", "-Infinity", "1e9999", "1E3", "0x10", "²", "12,5"])
def test_a_number_that_is_not_a_number_is_refused_naming_the_line(mineola, imported, value):
    three_meters()
    with pytest.raises(CommandError, match="rejected with 1 error"):
        imported(DRIVE_BY + f"M-0000000001,x,12/01/2026,{value},REG,,0\n", "--mapping", "drive_by_csv")
    assert not Reading.objects.filter(read_on=date(2026, 12, 1)).exists()


def test_the_upload_page_names_the_line_of_a_nan_never_a_500(mineola, client):
    three_meters()
    client.force_login(staff("clara", "Clerk"))
    for text, mapping in ((DRIVE_BY + "M-0000000001,x,12/01/2026,NaN,REG,,0\n", "drive_by_csv"),
                          ("SERVICE_POINT;METER_ID;READ_DT;REGISTER_KGAL;STATUS;EVENTS\n"
                           "SP;M-0000000001;20261201;Infinity;OK;\n", "ami_register_csv"),
                          ("METER_ID,READ_DATE,REGISTER_GAL,EVENTS\nM-0000000001,2026-11-30,sNaN,\n", "ami_daily_csv")):
        response = client.post("/admin/meters/reading/import/", {
            "file": SimpleUploadedFile("reads.csv", text.encode()), "as_of": "2026-12-02", "mapping": mapping})
        said = html.unescape(" ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split()))
        assert response.status_code == 200 and "Rejected lines" in said, said[-500:]
        assert re.search(r"\b2 reading \([^)]*\) '\w+' is not a number", said), said[said.find("Rejected"):][:300]
    assert not Reading.objects.filter(read_on__gte=date(2026, 11, 30)).exists()


def test_decimal_comma_cubic_feet_daily_reads_give_billing_the_gallons_it_expects(mineola, imported):
    from tests.billing.steps import account_with_meter

    # A cubic-feet register that shows hundredths: 50,000.00 cu ft at installation.
    _, meter = account_with_meter(book=1, account_no="1-0004", start=date(2026, 10, 1), unit="cf", value=5_000_000)
    Meter.objects.filter(pk=meter.pk).update(serial="M-0000000004", places=2)
    out = io.StringIO()
    call_command("import_readings", str(SAMPLES / "ami_daily_cf_comma.csv"), "--mapping", "ami_daily_cf_comma",
                 "--date", "2026-12-02", stdout=out)  # Windows text: the mapping's encoding reads it
    assert "30 created" in out.getvalue(), out.getvalue()
    month = DailyRead.objects.get(meter=meter, month=date(2026, 11, 1)).values
    assert month[0] == 5_010_216 and month[1] == 5_012_253  # 50.102,16 and 50.122,53 cu ft, to the hundredth
    end = Reading.objects.get(meter=meter, read_on=date(2026, 11, 30))
    assert end.value == 5_008_216 + 2_000 * 30 + 37 * (0 + 1 + 2 + 3 + 4) * 6 and end.shown == "50,704.36"
    # The gallons billing works out: (50,704.36 − 50,000.00) cu ft × 7.48052 = 5,268.98… → 5,269 gal.
    from billing.consumption import Read, Span, usage_for_bill

    start = Reading.objects.get(meter=meter, read_on=date(2026, 10, 1))
    usage = usage_for_bill(installations=[Span(meter.pk, date(2026, 10, 1), None, "cf", "5/8", 2)],
                           readings={meter.pk: [Read(r.pk, meter.pk, r.read_on, r.value, r.read_type)
                                                for r in (start, end)]},
                           window=(date(2026, 11, 25), date(2026, 12, 5)), previous_end=None,
                           previous_period_end=None)
    assert usage.gallons == 5_269


def test_a_no_read_code_is_a_missed_read_and_the_bill_waits_in_the_exceptions(mineola, imported):
    three_meters()
    out = imported((SAMPLES / "handheld_noread.txt").read_text(), "--mapping", "handheld_noread")
    assert "2 created" in out and "1 not read" in out
    assert not Reading.objects.filter(meter__serial="M-0000000002", read_on=date(2026, 12, 1)).exists()
    missed = MissedRead.objects.get(meter__serial="M-0000000002")
    assert (missed.read_on, missed.code) == (date(2026, 12, 1), "NA") and "line 3" in missed.source
    assert UsageAlert.objects.filter(meter__serial="M-0000000003", kind="leak").exists()
    # OK is no event: no alert for the other two.
    assert not UsageAlert.objects.filter(meter__serial__in=["M-0000000001", "M-0000000002"]).exclude(
        kind__in=["out_of_range", "high"]).exists()
    from billing.runs.write import _missed_reads_named

    account_id = Meter.objects.get(serial="M-0000000002").installations.get().account_id
    held = [BillingException(account_id=account_id, bill_date=date(2026, 12, 2), kind="no_reading",
                             detail="no new reading between 2026-11-15 and 2026-12-02")]
    _missed_reads_named(held, run_on=date(2026, 12, 2))
    assert "not read on 2026-12-01 (code NA" in held[0].detail


def test_the_clerk_sees_the_missed_reads(mineola, imported, client):
    from unittest import mock

    three_meters()
    imported((SAMPLES / "handheld_noread.txt").read_text(), "--mapping", "handheld_noread")
    client.force_login(staff("clara", "Clerk"))
    page = client.get("/admin/meters/missedread/")
    assert page.status_code == 200 and "M-0000000002" in page.content.decode()
    with mock.patch("django.utils.timezone.localdate", return_value=date(2026, 12, 2)):
        dashboard = client.get("/admin/").content.decode()
    link = re.search(r'href="([^"]*missedread[^"]*)"[^>]*>([^<]*)', html.unescape(dashboard))
    assert link and "1 meter the readers could not read" in link.group(2), dashboard[:200]
    listed = client.get(link.group(1).replace("&amp;", "&"))
    assert listed.status_code == 200 and "M-0000000002" in listed.content.decode()


def test_a_truncated_file_and_an_empty_file_are_refused(mineola, imported):
    three_meters()
    records = [fixed(f"M-000000000{n}", "12012026", 106250 - n * 100) for n in (1, 2, 3)]
    cut = "H BOOK 01\n" + records[0] + "\n" + records[1] + "\n"
    with pytest.raises(CommandError, match="rejected with 1 error"):
        imported(cut, "--mapping", "handheld_fixed")
    short = "H BOOK 01\n" + records[0] + "\n" + records[1] + "\nT000003\n"
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_readings", str(_write(short)), "--mapping", "handheld_fixed", "--date", "2026-12-02",
                     stderr=err)
    assert "says 3 reading records; the file has 2" in err.getvalue()
    for empty in ("", "H BOOK 01\nT000000\n"):
        with pytest.raises(CommandError, match="rejected"):
            imported(empty, "--mapping", "handheld_fixed")
    with pytest.raises(CommandError, match="rejected"):
        imported(DRIVE_BY, "--mapping", "drive_by_csv")
    assert not Reading.objects.filter(read_on=date(2026, 12, 1)).exists()


def _write(text: str) -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "short.dat"
    path.write_text(text)
    return path


def test_a_dry_run_saves_nothing_and_the_preview_neither(mineola, imported, client):
    three_meters()
    text = handheld(fixed("M-0000000001", "12012026", 106250, flags="L"))
    out = imported(text, "--mapping", "handheld_fixed", "--dry-run")
    assert "1 created" in out and "nothing was saved" in out
    assert not Reading.objects.filter(read_on=date(2026, 12, 1)).exists() and not UsageAlert.objects.exists()
    client.force_login(staff("clara", "Clerk"))
    response = client.post("/admin/meters/reading/import/", {
        "file": SimpleUploadedFile("route.dat", text.encode()), "as_of": "2026-12-02", "mapping": "handheld_fixed",
        "preview": "1"})
    said = response.content.decode()
    assert response.status_code == 200 and 'id="import-preview"' in said and "1 created" in said
    assert not Reading.objects.filter(read_on=date(2026, 12, 1)).exists()


REGISTER_MAPPINGS = [path.stem for path in sorted(Path(settings.READ_MAPPINGS_DIR).glob("*.toml"))
                     if mapping_load(path.stem).reads == "register"]


@pytest.mark.parametrize("name", REGISTER_MAPPINGS)
def test_the_route_file_comes_back_as_it_went_out(mineola, imported, name, django_capture_on_commit_callbacks):
    three_meters()
    # One read between, none a multiple of 10: a fixed layout in tens shows them cut to its resolution.
    for n, value in ((1, 1_012_345), (2, 1_010_003), (3, 1_013_507)):
        from tests.billing.steps import read

        read(Meter.objects.get(serial=f"M-000000000{n}"), date(2026, 9, 1), value)
    before = sorted(Reading.objects.values_list("meter__serial", "read_on", "value"))
    mapping = mapping_load(name)
    text = route_file(route_stops(book=1, on=date(2026, 12, 1)), mapping)
    out = imported(text, "--mapping", name, name="route.txt")
    assert "0 created" in out and "3 skipped" in out, out
    assert sorted(Reading.objects.values_list("meter__serial", "read_on", "value")) == before
    assert not UsageAlert.objects.exists() and not CustomerNotice.objects.filter(kind="usage_alert").exists()


def test_a_daily_mapping_has_no_route(mineola):
    three_meters()
    with pytest.raises(Exception, match="no route goes out"):
        route_file(route_stops(book=1, on=date(2026, 12, 1)), mapping_load("ami_daily_csv"))


def test_a_steady_20_gallon_leak_raises_one_alert_and_one_notice_over_ten_days(mineola, imported):
    (account, meter), *_ = three_meters()
    start = date(2026, 10, 1)
    registers, value = [], 1_009_000
    # 40 days of an ordinary household that stands still some days, then 10 days of 20 gal a day and nothing else.
    for i in range(40):
        value += 0 if i % 6 == 0 else 150
        registers.append(value)
    for _ in range(10):
        value += 20
        registers.append(value)
    days = [start + timedelta(days=i) for i in range(50)]
    header = "METER_ID,READ_DATE,REGISTER_GAL,EVENTS\n"
    imported(header + "".join(f"M-0000000001,{d},{v},\n" for d, v in zip(days[:40], registers[:40], strict=True)),
             "--mapping", "ami_daily_csv", on="2026-12-02")
    for d, v in zip(days[40:], registers[40:], strict=True):  # a file a day, as a head-end sends them
        imported(header + f"M-0000000001,{d},{v},\n", "--mapping", "ami_daily_csv", on="2026-12-02",
                 name=f"{d}.csv")
    alerts = UsageAlert.objects.filter(meter=meter, kind="continuous_flow")
    assert alerts.count() == 1
    alert = alerts.get()
    # Found the day the meter had not stood still for 7 days: its last still day was day 36.
    assert alert.read_on == days[43] and alert.seen_through == days[49] and "small leak" in alert.detail
    assert CustomerNotice.objects.filter(account=account, kind="usage_alert").count() == 1
    # A day the meter stands still ends the episode; the next leak is a new one.
    imported(header + f"M-0000000001,{days[49] + timedelta(days=1)},{value},\n", "--mapping", "ami_daily_csv",
             on="2026-12-02", name="still.csv")
    alert.refresh_from_db()
    assert alert.resolved_at is not None and "stood still" in alert.note


def test_a_leak_flag_three_days_running_is_one_alert_and_one_letter(mineola, imported):
    (account, meter), *_ = three_meters()
    header = "METER_ID,READ_DATE,REGISTER_GAL,EVENTS\n"
    for i in range(3):
        day = date(2026, 11, 10) + timedelta(days=i)
        imported(header + f"M-0000000001,{day},{1_010_000 + 100 * i},LEAK\n", "--mapping", "ami_daily_csv",
                 name=f"{day}.csv")
    leak = UsageAlert.objects.get(meter=meter, kind="leak")
    assert leak.seen_through == date(2026, 11, 12)
    assert CustomerNotice.objects.filter(account=account, kind="usage_alert").count() == 1
    imported(header + "M-0000000001,2026-11-13,1010300,\n", "--mapping", "ami_daily_csv", name="quiet.csv")
    leak.refresh_from_db()
    assert leak.resolved_at is not None


def test_a_rollover_is_recorded_as_one_and_a_read_that_cannot_be_one_is_refused(mineola, imported):
    (account, meter), (other, second), _ = three_meters()
    Meter.objects.filter(pk__in=[meter.pk, second.pk]).update(dials=7)
    from tests.billing.steps import read

    read(meter, date(2026, 9, 1), 9_998_000)  # 7 wheels, near all nines
    read(second, date(2026, 9, 1), 1_020_000)
    out = imported(DRIVE_BY + "M-0000000001,x,12/01/2026,0004000,REG,,0\n", "--mapping", "drive_by_csv")
    assert "1 created" in out
    recorded = Reading.objects.get(meter=meter, read_on=date(2026, 12, 1))
    assert recorded.value == 10_004_000  # 6,000 gal across the turn of the wheels
    alert = UsageAlert.objects.get(meter=meter, kind="rollover")
    assert "read 4,000" in alert.detail and "10,004,000" in alert.detail
    # The next read counts the turn already recorded, with no new alert.
    imported(DRIVE_BY + "M-0000000001,x,12/02/2026,0004100,REG,,0\n", "--mapping", "drive_by_csv", on="2026-12-03")
    assert Reading.objects.get(meter=meter, read_on=date(2026, 12, 2)).value == 10_004_100
    assert UsageAlert.objects.filter(meter=meter, kind="rollover").count() == 1
    # Far below the last with no turn that fits: refused, naming the line, nothing saved.
    with pytest.raises(CommandError, match="rejected with 1 error"):
        imported(DRIVE_BY + "M-0000000002,x,12/01/2026,900000,REG,,0\n", "--mapping", "drive_by_csv")
    assert not Reading.objects.filter(meter=second, read_on=date(2026, 12, 1)).exists()


def test_a_partial_mapping_holds_only_the_refused_lines_meters(mineola, tmp_path, client):
    three_meters()
    mapping = (Path(settings.READ_MAPPINGS_DIR) / "drive_by_csv.toml").read_text() + "\n"
    mapping = mapping.replace('reads = "register"', 'reads = "register"\npartial = true')
    path = tmp_path / "partial_drive_by.toml"
    path.write_text(mapping)
    text = (DRIVE_BY + "M-0000000001,x,12/01/2026,1018000,REG,,0\n"
            "M-0000000002,x,12/01/2026,NaN,REG,,0\n"  # refused in reading
            "M-0000000003,x,12/01/2026,900000,REG,,0\n")  # refused by the rules: far below the last
    file = tmp_path / "reads.csv"
    file.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    call_command("import_readings", str(file), "--mapping", str(path), "--date", "2026-12-02", stdout=out, stderr=err)
    assert "1 created" in out.getvalue() and "2 line(s) held" in out.getvalue()
    assert "held: line 3" in err.getvalue() and "held: line 4" in err.getvalue()
    assert list(Reading.objects.filter(read_on=date(2026, 12, 1)).values_list("meter__serial", flat=True)) == [
        "M-0000000001"]
    # A dry run of it answers no (exit 1): a line held is a line refused.
    Reading.objects.filter(read_on=date(2026, 12, 1)).delete()
    with pytest.raises(CommandError, match="2 line"):
        call_command("import_readings", str(file), "--mapping", str(path), "--date", "2026-12-02", "--dry-run",
                     stdout=io.StringIO(), stderr=io.StringIO())
    assert not Reading.objects.filter(read_on=date(2026, 12, 1)).exists()
    # The file's own controls still refuse it whole: a file with no readings.
    file.write_text(DRIVE_BY)
    with pytest.raises(CommandError):
        call_command("import_readings", str(file), "--mapping", str(path), "--date", "2026-12-02",
                     stdout=io.StringIO(), stderr=io.StringIO())


def interval_file(serial: str, start, uses: list[int], register: int = 1_010_000) -> str:
    lines = ["METER_ID,INTERVAL_END,REGISTER_GAL,EVENTS"]
    for hour, use in enumerate(uses):
        register += use
        lines.append(f"{serial},{start + timedelta(hours=hour):%Y-%m-%d %H:%M},{register},")
    return "\n".join(lines) + "\n"


def test_hourly_reads_find_a_trickle_daily_reads_cannot_and_keep_each_days_register(mineola, imported):
    from datetime import datetime

    (account, meter), *_ = three_meters()
    start = datetime(2026, 11, 10, 0, 0)
    # 30 hours of 1 gal an hour (a running toilet): never an hour at zero.
    imported(interval_file("M-0000000001", start, [1] * 30), "--mapping", "ami_interval_csv")
    alert = UsageAlert.objects.get(meter=meter, kind="continuous_flow")
    assert "24 hours with water through the meter in every interval" in alert.detail
    told = CustomerNotice.objects.get(account=account, kind="usage_alert")
    assert "every hour for 24 hours, never stopping" in told.body
    month = DailyRead.objects.get(meter=meter, month=date(2026, 11, 1)).values
    assert month[9] == 1_010_024 and month[10] == 1_010_030  # each day's last hour
    # The next day's hours, one at zero: the episode ends; no second alert.
    imported(interval_file("M-0000000001", datetime(2026, 11, 11, 6, 0), [1, 0, 1], register=1_010_030),
             "--mapping", "ami_interval_csv", name="next.csv")
    alert.refresh_from_db()
    assert alert.resolved_at is not None and UsageAlert.objects.filter(kind="continuous_flow").count() == 1


def test_an_ordinary_day_of_hours_is_not_continuous_flow(mineola, imported):
    from datetime import datetime

    (account, meter), *_ = three_meters()
    uses = [0 if hour % 8 == 3 else 12 for hour in range(48)]
    imported(interval_file("M-0000000001", datetime(2026, 11, 10, 0, 0), uses), "--mapping", "ami_interval_csv")
    assert not UsageAlert.objects.filter(meter=meter, kind="continuous_flow").exists()


@pytest.mark.parametrize("multiplier", ["-10", "0", "x", "1.5"])
def test_a_records_own_multiplier_must_be_a_whole_number_of_one_or_more(mineola, imported, tmp_path, multiplier):
    three_meters()
    shipped = (Path(settings.READ_MAPPINGS_DIR) / "drive_by_csv.toml").read_text()
    custom = tmp_path / "drive_by_with_multiplier.toml"
    custom.write_text(shipped.replace('no_flow_days = "Days No Flow"',
                                      'no_flow_days = "Days No Flow"\nmultiplier = "Mult"'))
    with pytest.raises(CommandError, match="rejected with 1 error"):
        imported("Meter Number,Account,Read Date,Reading,Read Code,Alarms,Days No Flow,Mult\n"
                 f"M-0000000001,x,12/01/2026,101800,REG,,0,{multiplier}\n", "--mapping", str(custom))
    assert not Reading.objects.filter(read_on=date(2026, 12, 1)).exists()


def test_a_records_own_multiplier_scales_its_register(mineola, imported, tmp_path):
    three_meters()
    shipped = (Path(settings.READ_MAPPINGS_DIR) / "drive_by_csv.toml").read_text()
    custom = tmp_path / "drive_by_with_multiplier.toml"
    custom.write_text(shipped.replace('no_flow_days = "Days No Flow"',
                                      'no_flow_days = "Days No Flow"\nmultiplier = "Mult"'))
    imported("Meter Number,Account,Read Date,Reading,Read Code,Alarms,Days No Flow,Mult\n"
             "M-0000000001,x,12/01/2026,101800,REG,,0,10\n", "--mapping", str(custom))
    assert Reading.objects.get(meter__serial="M-0000000001", read_on=date(2026, 12, 1)).value == 1_018_000
