"""One reading writer: the admin's reading form refuses what the importer refuses, in the importer's words;
a reading that a bill in force used is final, in Python and (on PostgreSQL) in the database."""

from datetime import date

import pytest
from django.contrib.auth.models import Group, User
from django.db import IntegrityError, connection, transaction
from django.urls import reverse
from rest_framework.test import APIClient

from billing.models import Bill
from billing.services.adjustments import bill_void
from core.csvimport import ImportRejected
from core.errors import ApplicationError
from meters.imports import readings_import
from meters.models import Reading
from meters.services import reading_change, reading_delete
from tests.billing.test_runs import account_with_meter, read, run
from tests.factories import clerk_user

pytestmark = pytest.mark.django_db

HEADER = "meter_serial,read_date,reading,read_type\n"


@pytest.fixture
def clerk(mineola):
    return User.objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-only-9")


@pytest.fixture
def clerk_client(client, clerk):
    client.force_login(clerk)
    return client


@pytest.fixture
def billed(mineola):
    """A meter installed 2025-07-10 at 1,000,000 gallons, read 1,062,500 on 2026-01-12, billed 2026-02-01."""
    _, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get()
    return meter, bill


def form(meter, read_on, value, read_type="actual", note=""):
    return {"meter": meter.pk, "read_on": read_on, "value": str(value), "read_type": read_type,
            "source": "manual", "note": note}


def importer_says(meter, read_on, value, as_of=date(2026, 6, 30)) -> str:
    """What the CSV importer answers for the same reading (it must refuse it)."""
    with pytest.raises(ImportRejected) as refused:
        readings_import(file=f"{HEADER}{meter.serial},{read_on},{value},\n".encode(), as_of=as_of, actor=None)
    [error] = refused.value.errors
    return error.message


# --- a reading a bill in force used is final ------------------------------------------------------------

@pytest.mark.citation("policy: a billed reading is final")
def test_admin_shows_a_billed_reading_read_only_naming_the_bill_and_refuses_changes(clerk_client, billed):
    meter, bill = billed
    for reading in (bill.start_reading, bill.end_reading):
        url = reverse("admin:meters_reading_change", args=[reading.pk])
        page = clerk_client.get(url)
        html = page.content.decode()
        assert page.status_code == 200
        assert "This reading is final" in html and f"bill {bill.number}" in html
        assert reverse("admin:billing_bill_change", args=[bill.pk]) in html
        assert 'name="value"' not in html and 'name="read_on"' not in html
        assert reverse("admin:meters_reading_delete", args=[reading.pk]) not in html
        changed = clerk_client.post(url, form(meter, "2026-01-12", 1_050_000))
        assert changed.status_code == 403
        assert clerk_client.post(reverse("admin:meters_reading_delete", args=[reading.pk]),
                                 {"post": "yes"}).status_code == 403
        version = reading.history.first()
        revert = clerk_client.post(reverse("admin:meters_reading_simple_history", args=[reading.pk, version.pk]),
                                   form(meter, "2026-01-12", 1_050_000))
        assert revert.status_code == 403
    assert list(Reading.objects.order_by("read_on").values_list("value", flat=True)) == [1_000_000, 1_062_500]


@pytest.mark.citation("policy: a billed reading is final")
def test_the_writer_refuses_to_change_or_delete_a_billed_reading(billed, clerk):
    meter, bill = billed
    with pytest.raises(ApplicationError) as refused:
        reading_change(reading=bill.end_reading, meter=meter, read_on=date(2026, 1, 12), value=1_050_000,
                       read_type="actual", source="manual", note="misread", as_of=date(2026, 6, 30), actor=clerk)
    message = str(refused.value)
    assert f"used by bill {bill.number} and is final" in message
    assert "record a new reading and correct the bill with a credit or debit memo, or void the bill" in message
    with pytest.raises(ApplicationError, match=f"used by bill {bill.number} and is final"):
        reading_delete(reading=bill.start_reading, actor=clerk)
    assert Reading.objects.get(pk=bill.end_reading_id).value == 1_062_500


@pytest.mark.citation("policy: a billed reading is final")
def test_a_reading_under_a_void_bill_can_be_corrected_in_the_admin(clerk_client, billed, clerk):
    meter, bill = billed
    bill_void(bill=bill, reason="Misread meter", as_of=date(2026, 2, 10), actor=clerk)
    url = reverse("admin:meters_reading_change", args=[bill.end_reading_id])
    assert "This reading is final" not in clerk_client.get(url).content.decode()
    response = clerk_client.post(url, form(meter, "2026-01-12", 1_050_000, note="misread; re-read"))
    assert response.status_code == 302
    reading = Reading.objects.get(pk=bill.end_reading_id)
    assert (reading.value, reading.note, reading.entered_by) == (1_050_000, "misread; re-read", clerk)
    assert reading.history.first().history_user == clerk


@pytest.mark.citation("policy: a billed reading is final")
@pytest.mark.postgres
def test_the_database_refuses_to_change_or_delete_a_billed_reading(billed):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL): the trigger is PostgreSQL's")
    _, bill = billed
    end = Reading.objects.filter(pk=bill.end_reading_id)
    for attempt in (lambda: end.update(value=1_050_000),
                    lambda: end.update(read_on=date(2026, 1, 13)),
                    lambda: end.update(read_type="estimated"),
                    lambda: Reading.objects.filter(pk=bill.start_reading_id).update(value=999_999),
                    lambda: connection.cursor().execute("DELETE FROM meters_reading WHERE id = %s", [bill.end_reading_id])):
        with pytest.raises(IntegrityError, match=f"used by bill {bill.number} and is final"), transaction.atomic():
            attempt()
    end.update(note="the note is not what the bill rests on")
    Bill.objects.filter(pk=bill.pk).update(status="void", void_reason="allowed: voiding")
    end.update(value=1_050_000)
    assert end.get().value == 1_050_000


# --- the admin's form, the importer and the API hold readings to the same rules ------------------------

@pytest.mark.citation("policy: readings never go down")
def test_admin_add_refuses_a_lower_reading_with_the_importers_message(clerk_client, billed):
    meter, _ = billed
    expected = importer_says(meter, "2026-03-01", 1_050_000)
    assert "1050000 is lower than meter" in expected and "previous reading 1062500 on 2026-01-12" in expected
    response = clerk_client.post(reverse("admin:meters_reading_add"), form(meter, "2026-03-01", 1_050_000))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {"value": [expected]}
    assert Reading.objects.count() == 2


@pytest.mark.citation("policy: readings never go down")
@pytest.mark.parametrize(("read_on", "value", "field"), [
    ("2025-07-01", 1_000_000, "read_on"),  # before the meter was installed
    ("2026-01-12", 1_062_600, "read_on"),  # the meter already has a reading that day
    ("2025-12-01", 1_070_000, "value"),  # higher than the later reading on file
])
def test_admin_add_refuses_what_the_importer_refuses_in_its_words(clerk_client, billed, read_on, value, field):
    meter, _ = billed
    expected = importer_says(meter, read_on, value).replace("the file says", "this reading says")
    response = clerk_client.post(reverse("admin:meters_reading_add"), form(meter, read_on, value))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {field: [expected]}
    assert Reading.objects.count() == 2


@pytest.mark.citation("policy: nothing in the future")
def test_admin_add_refuses_a_future_date(clerk_client, billed):
    meter, _ = billed
    response = clerk_client.post(reverse("admin:meters_reading_add"), form(meter, "2999-01-01", 1_100_000))
    assert response.status_code == 200
    [message] = response.context["adminform"].form.errors["read_on"]
    assert message.startswith("2999-01-01 is after today ") and "nothing is recorded in the future" in message


@pytest.mark.citation("policy: readings never go down")
def test_admin_change_of_an_unbilled_reading_is_checked_without_counting_itself(clerk_client, billed, clerk):
    meter, _ = billed
    march = read(meter, date(2026, 3, 2), 1_080_000)
    url = reverse("admin:meters_reading_change", args=[march.pk])
    lower = clerk_client.post(url, form(meter, "2026-03-02", 1_062_000))
    assert lower.context["adminform"].form.errors == {"value": [
        f"1062000 is lower than meter {meter.serial}'s previous reading 1062500 on 2026-01-12 (already recorded); "
        "a meter's readings never go down (a replaced meter is a new meter with its own serial)"]}
    assert clerk_client.post(url, form(meter, "2026-03-03", 1_070_000)).status_code == 302
    march.refresh_from_db()
    assert (march.read_on, march.value, march.entered_by) == (date(2026, 3, 3), 1_070_000, clerk)


def test_admin_add_records_a_good_reading_with_who_entered_it(clerk_client, billed, clerk):
    meter, _ = billed
    response = clerk_client.post(reverse("admin:meters_reading_add"), form(meter, "2026-03-02", 1_080_000))
    assert response.status_code == 302
    reading = Reading.objects.get(read_on=date(2026, 3, 2))
    assert (reading.value, reading.source, reading.entered_by) == (1_080_000, "manual", clerk)
    assert reading.history.get().history_user == clerk


def test_the_meter_page_lists_readings_without_editing_them(clerk_client, billed):
    meter, _ = billed
    html = clerk_client.get(reverse("admin:meters_meter_change", args=[meter.pk])).content.decode()
    assert "1062500" in html or "1,062,500" in html
    assert 'name="readings-0-value"' not in html and 'name="readings-TOTAL_FORMS" value="2"' in html


def test_api_readings_go_through_the_writer(billed):
    meter, _ = billed
    clerk = User.objects.create_user("clerk", is_staff=True)
    clerk.groups.add(Group.objects.get(name="Clerk"))
    api = APIClient()
    api.force_authenticate(User.objects.get(pk=clerk.pk))
    lower = api.post("/api/v1/readings/", {"meter_serial": meter.serial, "read_date": "2026-03-01",
                                           "reading": "1050000"}, format="json")
    assert lower.status_code == 400
    assert lower.json()["errors"] == [{"field": "[0].reading", "message": importer_says(meter, "2026-03-01",
                                                                                         1_050_000)}]
    ok = api.post("/api/v1/readings/", {"meter_serial": meter.serial, "read_date": "2026-03-01",
                                        "reading": "1080000"}, format="json")
    assert ok.status_code == 201
    assert Reading.objects.get(read_on=date(2026, 3, 1)).source == "api"


@pytest.mark.citation("policy: a register holds its digits")
def test_a_reading_beyond_the_register_is_refused_everywhere_in_the_same_words(clerk_client, billed):
    meter, _ = billed
    expected = importer_says(meter, "2026-03-01", 10_000_000_000)
    assert expected == "10000000000 is more than a meter register holds (10 digits: at most 9,999,999,999)"
    response = clerk_client.post(reverse("admin:meters_reading_add"), form(meter, "2026-03-01", 10_000_000_000))
    assert response.context["adminform"].form.errors == {"value": [expected]}
    api = APIClient()
    api.force_authenticate(clerk_user("staff"))
    refused = api.post("/api/v1/readings/", {"meter_serial": meter.serial, "read_date": "2026-03-01",
                                             "reading": "10000000000"}, format="json")
    assert refused.status_code == 400 and refused.json()["errors"] == [{"field": "[0].reading", "message": expected}]
    assert Reading.objects.count() == 2
    # A full 10-digit register is a reading.
    assert clerk_client.post(reverse("admin:meters_reading_add"),
                             form(meter, "2026-03-01", 9_999_999_999)).status_code == 302


def test_the_meter_page_refuses_a_serial_with_a_control_character(clerk_client, billed):
    meter, _ = billed
    response = clerk_client.post(reverse("admin:meters_meter_add"), {
        "serial": "M\n77", "make": "", "size": "5/8", "unit": "gal", "dials": "6", "places": "0",
        "installations-TOTAL_FORMS": "0", "installations-INITIAL_FORMS": "0",
        "readings-TOTAL_FORMS": "0", "readings-INITIAL_FORMS": "0"})
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {
        "serial": ["contains a control character (U+000A, a line break) at character 2; type the value again "
                   "without it"]}
