"""``import_readings`` and the Reading admin's upload page: all or nothing, every bad line named."""

from datetime import date
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from core.csvimport import ImportRejected
from meters.imports import readings_import
from meters.models import Meter, Reading
from tests.factories import InstallationFactory, ReadingFactory

AS_OF = "2026-06-30"
HEADER = "meter_serial,read_date,reading,read_type\n"


def table_counts() -> dict[str, int]:
    return {model._meta.label: model._default_manager.count() for model in apps.get_models()}


def run(tmp_path, content: str | bytes, *args: str) -> tuple[str, str]:
    path = tmp_path / "readings.csv"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    out, err = StringIO(), StringIO()
    call_command("import_readings", str(path), "--date", AS_OF, "--no-progress", *args, stdout=out,
                 stderr=err)
    return out.getvalue(), err.getvalue()


def rejected(tmp_path, content: str | bytes) -> tuple[str, str]:
    """Run an import expected to fail; returns (the CommandError message, the listed errors)."""
    before = table_counts()
    err = StringIO()
    path = tmp_path / "bad.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(CommandError) as excinfo:
        call_command("import_readings", str(path), "--date", AS_OF, "--no-progress", stdout=StringIO(),
                     stderr=err)
    assert table_counts() == before, "a rejected file must change nothing"
    return str(excinfo.value), err.getvalue()


@pytest.fixture
def meters(db):
    """Three installed meters with their install readings: M1 (gallons), M2 (gallons), CF1 (cubic feet)."""
    for serial, unit, value in (("M1", "gal", 1000), ("M2", "gal", 50), ("CF1", "cf", 200)):
        installation = InstallationFactory(meter__serial=serial, meter__unit=unit,
                                           installed_on=date(2026, 1, 2))
        ReadingFactory(meter=installation.meter, read_on=date(2026, 1, 2), value=value, source="install")
    return {m.serial: m for m in Meter.objects.all()}


def test_imports_every_row_with_its_type_source_and_history(tmp_path, meters):
    out, err = run(tmp_path, HEADER + "M1,2026-04-01,1500,\nM1,2026-05-01,1600,estimated\n"
                                      "M2,2026-04-01,90,final\nCF1,2026-04-02,260,actual\n")
    assert "readings 4 created, 0 updated, 0 skipped" in out
    assert err == ""
    m1 = list(Reading.objects.filter(meter__serial="M1").order_by("read_on")
              .values_list("read_on", "value", "read_type", "source"))
    assert m1 == [(date(2026, 1, 2), 1000, "actual", "install"), (date(2026, 4, 1), 1500, "actual", "import"),
                  (date(2026, 5, 1), 1600, "estimated", "import")]
    assert Reading.objects.get(meter__serial="M2", read_on=date(2026, 4, 1)).read_type == "final"
    assert Reading.objects.get(meter__serial="CF1", read_on=date(2026, 4, 2)).value == 260
    history = Reading.history.filter(source="import")
    assert history.count() == 4
    # The history keeps 100 characters of the reason; a deep temporary directory is longer than that.
    assert set(history.values_list("history_change_reason", flat=True)) == {
        f"import_readings {tmp_path / 'readings.csv'}"[:100]}


def test_read_type_column_may_be_left_off(tmp_path, meters):
    out, _ = run(tmp_path, "meter_serial,read_date,reading\nM1,2026-04-01,1500\n")
    assert "1 created" in out
    assert Reading.objects.get(meter__serial="M1", read_on=date(2026, 4, 1)).read_type == "actual"


def test_utf8_byte_order_mark_is_accepted(tmp_path, meters):
    out, _ = run(tmp_path, b"\xef\xbb\xbf" + HEADER.encode() + b"M1,2026-04-01,1500,actual\r\n")
    assert "1 created" in out


@pytest.mark.citation("policy: one reading per meter and date")
def test_reimporting_the_same_file_changes_nothing(tmp_path, meters):
    content = HEADER + "M1,2026-04-01,1500,\nM2,2026-04-01,90,\n"
    run(tmp_path, content)
    before = table_counts()
    out, _ = run(tmp_path, content)
    assert "0 created, 0 updated, 2 skipped" in out
    assert table_counts() == before


def test_a_file_partly_imported_before_adds_only_the_new_rows(tmp_path, meters):
    run(tmp_path, HEADER + "M1,2026-04-01,1500,\n")
    out, _ = run(tmp_path, HEADER + "M1,2026-04-01,1500,\nM1,2026-05-01,1700,\n")
    assert "1 created, 0 updated, 1 skipped" in out


def test_user_is_recorded_as_who_entered_the_readings(tmp_path, meters):
    clerk = get_user_model().objects.create_user("clerk", password="x")
    run(tmp_path, HEADER + "M1,2026-04-01,1500,\n", "--user", "clerk")
    reading = Reading.objects.get(source="import")
    assert reading.entered_by == clerk
    assert reading.history.get().history_user == clerk


def test_several_bad_rows_are_all_listed_and_nothing_is_saved(tmp_path, meters):
    message, listed = rejected(tmp_path, HEADER + (
        "M1,2026-04-01,1500,\n"       # line 2: fine
        "NOPE,2026-04-01,10,\n"       # line 3: unknown meter
        "M2,2026-13-01,abc,\n"        # line 4: bad date and a non-numeric reading
        "M2,2026-04-01,-5,sometimes\n"  # line 5: negative reading, bad read_type
        "M1,2026-05-01,1400,\n"       # line 6: lower than line 2
    ))
    assert "rejected with 6 error(s) on 4 line(s); nothing was saved" in message
    lines = listed.splitlines()
    assert lines == [
        "line 3: meter_serial: no meter with serial 'NOPE' is on file",
        "line 4: read_date: '2026-13-01' is not a date; use YYYY-MM-DD",
        "line 4: reading: 'abc' is not a whole number (digits only, no commas or decimals)",
        "line 5: reading: -5 is negative; must be 0 or more",
        "line 5: read_type: 'sometimes' is not one of actual, estimated, final",
        "line 6: reading: 1400 is lower than meter M1's previous reading 1500 on 2026-04-01 (line 2); "
        "a meter's readings never go down (a replaced meter is a new meter with its own serial)",
    ]
    assert not Reading.objects.filter(source="import").exists()


@pytest.mark.citation("policy: readings never go down")
@pytest.mark.citation("policy: nothing in the future")
@pytest.mark.parametrize(("row", "column", "rule"), [
    ("NOPE,2026-04-01,10,", "meter_serial", "no meter with serial 'NOPE' is on file"),
    (",2026-04-01,10,", "meter_serial", "is required"),
    ("M1,04/01/2026,1500,", "read_date", "'04/01/2026' is not a date; use YYYY-MM-DD"),
    ("M1,,1500,", "read_date", "is required"),
    ("M1,2026-07-01,1500,", "read_date", "2026-07-01 is after the import date 2026-06-30"),
    ("M1,2026-04-01,lots,", "reading", "'lots' is not a whole number"),
    ("M1,2026-04-01,1500.5,", "reading", "'1500.5' is not a whole number"),
    ("M1,2026-04-01,\"1,500\",", "reading", "'1,500' is not a whole number"),
    ("M1,2026-04-01,-1,", "reading", "-1 is negative"),
    ("M1,2026-04-01,,", "reading", "is required"),
    ("M1,2026-04-01,999,", "reading", "999 is lower than meter M1's previous reading 1000 on 2026-01-02 "
                                      "(already recorded)"),
    ("M1,2026-04-01,1500,guess", "read_type", "'guess' is not one of actual, estimated, final"),
    ("M1,2025-12-31,900,", "read_date", "2025-12-31 is before meter M1 was installed on 2026-01-02"),
    ("M1,2026-01-02,1001,", "reading",
     "meter M1 already has a reading of 1000 on 2026-01-02; the file says 1001"),
    ("M1,2026-04-01,1500,extra", "read_type", "'extra' is not one of"),
    # A clerk's slips, refused rather than read as something else.
    ("M1,2026-04-01,10000000000,", "reading",
     "10000000000 is more than a meter register holds (10 digits: at most 9,999,999,999)"),
    ("M1,2026-04-01,1_500,", "reading", "'1_500' is not a whole number"),
    ("M1,2026-04-01,١٥٠٠,", "reading", "is not a whole number"),
    ("M1,0026-04-01,1500,", "read_date", "the year 0026 is before 1900; check the year"),
    ("M1,20260401,1500,", "read_date", "'20260401' is not a date; use YYYY-MM-DD"),
    ("\"M\n1\",2026-04-01,1500,", "meter_serial", "contains a control character (U+000A, a line break)"),
])
def test_each_rule_names_line_column_and_rule(tmp_path, meters, row, column, rule):
    _, listed = rejected(tmp_path, HEADER + row + "\n")
    assert listed.startswith(f"line 2: {column}: ")
    assert rule in listed


@pytest.mark.citation("policy: one reading per meter and date")
def test_duplicate_meter_and_date_in_the_file(tmp_path, meters):
    _, listed = rejected(tmp_path, HEADER + "M1,2026-04-01,1500,\nM2,2026-04-01,60,\nM1,2026-04-01,1500,\n")
    assert listed.strip() == ("line 4: read_date: meter M1 already has a reading dated 2026-04-01 on line 2 "
                              "of this file; one reading per meter per date")


@pytest.mark.citation("policy: readings never go down")
def test_reading_lower_than_an_earlier_row_of_the_same_file(tmp_path, meters):
    # Rows are compared in date order, not file order: the May row (line 2) comes after the April row.
    _, listed = rejected(tmp_path, HEADER + "M1,2026-05-01,1400,\nM1,2026-04-01,1500,\n")
    assert listed.strip() == ("line 2: reading: 1400 is lower than meter M1's previous reading 1500 on "
                              "2026-04-01 (line 3); a meter's readings never go down (a replaced meter is a "
                              "new meter with its own serial)")


@pytest.mark.citation("policy: readings never go down")
def test_reading_inserted_between_must_not_exceed_the_later_recorded_reading(tmp_path, meters):
    ReadingFactory(meter=meters["M1"], read_on=date(2026, 5, 1), value=1600)
    _, listed = rejected(tmp_path, HEADER + "M1,2026-04-01,1700,\n")
    assert listed.strip() == ("line 2: reading: 1700 is higher than meter M1's later reading 1600 already "
                              "recorded on 2026-05-01; a meter's readings never go down")
    out, _ = run(tmp_path, HEADER + "M1,2026-04-01,1550,\n")
    assert "1 created" in out


@pytest.mark.citation("policy: read while installed")
def test_reading_after_the_meter_was_removed(tmp_path, meters):
    installation = meters["M2"].installations.get()
    installation.removed_on = date(2026, 3, 31)
    installation.save()
    _, listed = rejected(tmp_path, HEADER + "M2,2026-04-01,90,\n")
    assert listed.strip() == ("line 2: read_date: meter M2 was removed on 2026-03-31 and has no open "
                              "installation; a removed meter takes no readings after its removal")
    out, _ = run(tmp_path, HEADER + "M2,2026-03-31,80,final\n")  # the final reading on the removal day
    assert "1 created" in out


@pytest.mark.citation("policy: read while installed")
def test_meter_never_installed(tmp_path, db):
    Meter.objects.create(serial="STOCK1", size="5/8")
    _, listed = rejected(tmp_path, HEADER + "STOCK1,2026-04-01,0,\n")
    assert "line 2: read_date: meter STOCK1 has never been installed on an account" in listed


@pytest.mark.citation("policy: readings never go down")
def test_readings_on_a_meter_with_a_later_history_still_never_go_down(tmp_path, meters):
    ReadingFactory(meter=meters["M2"], read_on=date(2026, 3, 1), value=70)
    out, _ = run(tmp_path, HEADER + "M2,2026-02-01,60,\nM2,2026-04-01,80,\n")
    assert "2 created" in out


def test_wrong_header_is_one_error_naming_expected_and_found(tmp_path, meters):
    message, listed = rejected(tmp_path, "serial,date,reading\nM1,2026-04-01,1500\n")
    assert "1 error(s)" in message
    assert listed.strip() == ("line 1: header: expected columns meter_serial,read_date,reading[,read_type]; "
                              "found serial,date,reading "
                              "(missing meter_serial, read_date; unexpected serial, date)")


def test_empty_file(tmp_path, meters):
    _, listed = rejected(tmp_path, "")
    assert "found (nothing: the file is empty)" in listed


def test_row_with_the_wrong_number_of_values(tmp_path, meters):
    _, listed = rejected(tmp_path, HEADER + "M1,2026-04-01,1500,actual,extra\n")
    assert listed.strip() == ("line 2: has 5 values; the header has 4 columns "
                              "(meter_serial,read_date,reading,read_type)")


def test_not_utf8_is_one_clear_error(tmp_path, meters):
    content = (HEADER + "M1,2026-04-01,1500,actual\nM2,2026-04-01,90,\n").encode() + "M\xe9ter,x,1,\n".encode(
        "latin-1")
    message, listed = rejected(tmp_path, content)
    assert "1 error(s)" in message
    assert listed.startswith("line 4: file: the file is not UTF-8 text: byte 0xE9 in this row")
    assert "CSV UTF-8" in listed


def test_missing_file(tmp_path, db):
    with pytest.raises(CommandError, match="nothing was saved"):
        call_command("import_readings", str(tmp_path / "nope.csv"), "--date", AS_OF, stdout=StringIO(),
                     stderr=StringIO())


@pytest.mark.citation("policy: nothing in the future")
def test_future_date_is_refused(tmp_path, meters):
    with pytest.raises(CommandError, match="--date: 2999-01-01 is after today"):
        call_command("import_readings", str(tmp_path / "x.csv"), "--date", "2999-01-01", stdout=StringIO(),
                     stderr=StringIO())


def test_service_raises_import_rejected_with_field_errors(meters):
    with pytest.raises(ImportRejected) as excinfo:
        readings_import(file=(HEADER + "M1,2026-04-01,x,\n").encode(), as_of=date(2026, 6, 30), actor=None)
    [error] = excinfo.value.errors
    assert (error.line, error.field) == (2, "reading")
    assert excinfo.value.as_dict()["errors"][0]["line"] == 2



def test_a_reading_saved_by_another_writer_after_the_checks_is_a_conflict(meters, monkeypatch):
    from core.errors import Conflict
    from meters import services

    checked = services._rows_check

    def check_then_another_writer_records(*args, **kwargs):
        result = checked(*args, **kwargs)
        Reading.objects.create(meter=meters["M2"], read_on=date(2026, 4, 1), value=80)
        return result

    monkeypatch.setattr(services, "_rows_check", check_then_another_writer_records)
    with pytest.raises(Conflict, match="another reading was recorded for one of these meters while the file"):
        readings_import(file=(HEADER + "M1,2026-04-01,1500,\nM2,2026-04-01,90,\n").encode(),
                        as_of=date(2026, 6, 30), actor=None)
    assert not Reading.objects.filter(read_on=date(2026, 4, 1)).exists()
    assert not Reading.history.filter(source="import").exists()

# --- the admin upload page ------------------------------------------------------------------------------

@pytest.fixture
def admin_client(client, db):
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw-for-tests-only")
    client.force_login(user)
    return client


def upload(content: str | bytes, name: str = "readings.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content.encode() if isinstance(content, str) else content, "text/csv")


def test_changelist_has_an_import_button(admin_client):
    response = admin_client.get(reverse("admin:meters_reading_changelist"))
    assert response.status_code == 200
    assert reverse("admin:meters_reading_import").encode() in response.content
    assert b"Import CSV" in response.content


def test_admin_upload_success(admin_client, meters):
    url = reverse("admin:meters_reading_import")
    assert admin_client.get(url).status_code == 200
    response = admin_client.post(url, {"file": upload(HEADER + "M1,2026-04-01,1500,\n"), "as_of": AS_OF},
                                 follow=True)
    assert response.redirect_chain[-1][0] == reverse("admin:meters_reading_changelist")
    assert "Imported readings.csv: readings 1 created, 0 updated, 0 skipped" in response.content.decode()
    reading = Reading.objects.get(source="import")
    assert reading.entered_by.username == "boss"
    assert reading.history.get().history_user.username == "boss"


def test_admin_upload_failure_lists_every_line(admin_client, meters):
    before = table_counts()
    response = admin_client.post(reverse("admin:meters_reading_import"), {
        "file": upload(HEADER + "NOPE,2026-04-01,10,\nM1,2026-04-01,1500,\nM2,2026-04-01,abc,\n"),
        "as_of": AS_OF})
    assert response.status_code == 200
    page = response.content.decode()
    assert "The file was rejected and nothing was saved: 2 errors on 2 lines." in page
    assert ('<td class="line">2</td><td>meter_serial</td>'
            "<td>no meter with serial &#x27;NOPE&#x27; is on file") in page
    assert '<td class="line">4</td><td>reading</td><td>&#x27;abc&#x27; is not a whole number' in page
    assert table_counts() == before


def test_admin_upload_not_utf8(admin_client, meters):
    response = admin_client.post(reverse("admin:meters_reading_import"), {
        "file": upload((HEADER + "M1,2026-04-01,1500,\n").encode() + "Caf\xe9".encode("latin-1")),
        "as_of": AS_OF})
    assert "the file is not UTF-8 text" in response.content.decode()


def test_admin_upload_refuses_a_future_date(admin_client, meters):
    response = admin_client.post(reverse("admin:meters_reading_import"), {
        "file": upload(HEADER + "M1,2026-04-01,1500,\n"), "as_of": "2999-01-01"})
    assert "is after today" in response.content.decode()
    assert not Reading.objects.filter(source="import").exists()


def test_admin_import_needs_the_add_reading_permission(client, meters):
    clerk = get_user_model().objects.create_user("clerk", password="pw", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_reading"))
    client.force_login(clerk)
    assert client.get(reverse("admin:meters_reading_import")).status_code == 403
    assert b"Import CSV" not in client.get(reverse("admin:meters_reading_changelist")).content
    clerk.user_permissions.add(Permission.objects.get(codename="add_reading"))
    assert client.get(reverse("admin:meters_reading_import")).status_code == 200


@pytest.mark.citation("policy: read while installed")
def test_reading_between_a_removal_and_a_reinstallation(tmp_path, meters):
    installation = meters["M2"].installations.get()
    installation.removed_on = date(2026, 2, 1)
    installation.save()
    InstallationFactory(meter=meters["M2"], installed_on=date(2026, 5, 1))
    _, listed = rejected(tmp_path, HEADER + "M2,2026-03-01,60,\n")
    assert listed.strip() == ("line 2: read_date: meter M2 was not installed on 2026-03-01: "
                              "removed 2026-02-01, installed again 2026-05-01")
