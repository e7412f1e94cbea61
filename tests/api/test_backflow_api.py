"""The backflow endpoints of the REST API: the device registry with each device's next test due, one device with
its tests and notices, the devices due on a date (``backflow due``), a test recorded by the office, the fine
(exactly ``backflow fine --json``) and a premises' assessment (``backflow require --json`` and its trace) — each
answer as the OpenAPI schema documents it.

Mineola, as of 2026-12-01: at account 1-0101 an RPZ (RP-1, installed 2025-03-01, last accepted test 2025-11-20,
so due 2026-11-20: overdue) and a DCA (DC-1, installed 2026-01-06, never tested: due 2027-01-06) that the
premises' rule does not allow; at 1-0102 a PVB (PV-1) tested 2026-05-02, due 2027-05-02. The annual test is
Mineola's office policy (Chapter 45 sets no frequency)."""

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from backflow.models import Assessment, Device, DeviceTest
from backflow.services import compliance as svc
from tests.backflow.steps import bf, bf_json, village
from tests.factories import AccountFactory, PremisesFactory

from .test_schema import _check, _closed, openapi

pytestmark = pytest.mark.django_db

AS_OF = "2026-12-01"
POLICY = "policy (Chapter 45 sets no backflow test frequency)"


def staff(group: str = "Backflow inspector") -> APIClient:
    user, created = get_user_model().objects.get_or_create(username=f"staff-{group}", defaults={"is_staff": True})
    if created:
        user.groups.add(Group.objects.get(name=group))
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


@pytest.fixture
def registry(mineola):
    first = AccountFactory(account_no="1-0101", premises=PremisesFactory(service_address="12 Willis Avenue"))
    second = AccountFactory(account_no="1-0102")
    svc.assessment_record(account=first, codes=["cross_connection", "back_pressure", "hazardous"],
                          as_of=date(2025, 2, 1), actor=None)
    rpz = svc.device_register(account=first, type="RPZ", serial="RP-1", size="1 1/2", installed_on=date(2025, 3, 1),
                              actor=None, make="Watts", model="909", location="Basement, after the meter")
    svc.device_register(account=first, type="DCA", serial="DC-1", size="1", installed_on=date(2026, 1, 6), actor=None)
    pvb = svc.device_register(account=second, type="PVB", serial="PV-1", size="3/4", installed_on=date(2026, 5, 1),
                              actor=None)
    pat = svc.tester_register(certification_no="NY-4471", name="Pat Tester", certification_expires=date(2027, 6, 30))
    svc.tester_register(certification_no="NY-0001", name="Lapsed Larry", certification_expires=date(2026, 6, 30))
    svc.test_record(device=rpz, tester=pat, tested_on=date(2025, 11, 20), result="pass", actor=None,
                    as_of=date(2025, 11, 20), check_valve_1=" 5.4", check_valve_2="2.2", relief_valve="3")
    svc.test_record(device=pvb, tester=pat, tested_on=date(2026, 5, 2), result="pass", actor=None,
                    as_of=date(2026, 5, 2))
    notice = svc.notice_serve(account=first, kind="overdue", served_on=date(2026, 11, 21), actor=None,
                              as_of=date(2026, 11, 21), device=rpz, due_for=date(2026, 11, 20), render=False)
    return {"first": first, "second": second, "notice": notice}


def test_the_device_list_is_paged_with_each_next_due(registry):
    data = staff().get(f"/api/v1/backflow/devices/?as_of={AS_OF}").json()
    assert (data["offset"], data["limit"], data["count"]) == (0, 100, 3)
    assert data["results"] == [
        {"serial": "DC-1", "type": "DCA", "size": "1", "account_no": "1-0101", "status": "active", "flagged": True,
         "next_due": "2027-01-06", "overdue": False},
        {"serial": "RP-1", "type": "RPZ", "size": "1 1/2", "account_no": "1-0101", "status": "active",
         "flagged": False, "next_due": "2026-11-20", "overdue": True},
        {"serial": "PV-1", "type": "PVB", "size": "3/4", "account_no": "1-0102", "status": "active", "flagged": False,
         "next_due": "2027-05-02", "overdue": False},
    ]


def test_the_device_list_is_filtered_by_account_and_overdue(registry):
    api = staff()

    def serials(query: str) -> list[str]:
        return [d["serial"] for d in api.get(f"/api/v1/backflow/devices/?{query}").json()["results"]]

    assert serials(f"account_no=1-0101&as_of={AS_OF}") == ["DC-1", "RP-1"]
    assert serials(f"overdue=true&as_of={AS_OF}") == ["RP-1"]
    assert serials(f"overdue=false&as_of={AS_OF}") == ["DC-1", "PV-1"]
    assert serials("overdue=true&as_of=2026-11-20") == []  # due that day: not yet overdue
    assert serials(f"account_no=1-0102&overdue=true&as_of={AS_OF}") == []
    assert serials("account_no=9-9999") == []
    for query, field in (("overdue=yes", "overdue"), ("as_of=2026-02-30", "as_of"), ("offset=-1", "offset")):
        response = api.get(f"/api/v1/backflow/devices/?{query}")
        assert response.status_code == 400 and [e["field"] for e in response.json()["errors"]] == [field], query


def test_a_device_with_its_tests_and_notices(registry):
    data = staff().get(f"/api/v1/backflow/devices/RP-1/?as_of={AS_OF}").json()
    test = DeviceTest.objects.get(device__serial="RP-1")
    notice = registry["notice"]
    assert data == {
        "serial": "RP-1", "type": "RPZ", "size": "1 1/2", "account_no": "1-0101", "status": "active",
        "flagged": False, "next_due": "2026-11-20", "overdue": True, "due_citation": POLICY,
        "service_address": "12 Willis Avenue", "make": "Watts", "model": "909", "location": "Basement, after the meter",
        "installed_on": "2025-03-01", "removed_on": None, "flag_reason": "",
        "tests": [{"id": test.pk, "tested_on": "2025-11-20", "tester": "NY-4471", "tester_name": "Pat Tester",
                   "result": "pass", "check_valve_1_psid": "5.4", "check_valve_2_psid": "2.2",
                   "relief_valve_opening_psid": "3.0", "repairs": "", "status": "accepted", "submitted_online": False,
                   "reviewed_on": "2025-11-20", "review_note": ""}],
        "notices": [{"id": notice.pk, "kind": "overdue", "citation": "policy (Chapter 45 sets no test frequency)",
                     "served_on": "2026-11-21", "method": "first_class_mail", "received_on": None,
                     "deadline": "2026-12-21", "cured_on": None}],
    }
    flagged = staff().get("/api/v1/backflow/devices/DC-1/").json()
    assert flagged["flagged"] and flagged["flag_reason"] == ("a DCA is not allowed at these premises: AG, RPZ "
                                                             "(§ 45.45 H)")
    missing = staff().get("/api/v1/backflow/devices/XX-9/")
    assert missing.status_code == 404
    assert missing.json() == {"errors": [{"field": "serial", "message": "no device with serial 'XX-9'"}]}


@pytest.mark.citation("policy")
def test_the_devices_due_are_the_rows_of_backflow_due(registry):
    api = staff()
    data = api.get(f"/api/v1/backflow/due/?as_of={AS_OF}").json()
    assert (data["as_of"], data["within"], data["count"]) == (AS_OF, 30, 1)
    assert data["results"] == [{"serial": "RP-1", "type": "RPZ", "account_no": "1-0101", "due_on": "2026-11-20",
                                "overdue": True, "citation": POLICY}]
    data = api.get(f"/api/v1/backflow/due/?as_of={AS_OF}&within=40").json()
    assert [d["serial"] for d in data["results"]] == ["RP-1", "DC-1"]
    assert data["results"] == bf_json("due", "--within", "40", date_=AS_OF)
    for query in ("within=-1", "within=ten", "within=99999", "as_of=Dec"):
        response = api.get(f"/api/v1/backflow/due/?{query}")
        assert response.status_code == 400, query
        assert [e["field"] for e in response.json()["errors"]] == [query.partition("=")[0]], query


@pytest.mark.citation("policy")
def test_the_office_records_a_test_and_the_device_is_due_a_year_later(registry):
    response = staff("Clerk").post("/api/v1/backflow/tests/", {
        "serial": "RP-1", "tested_on": "2026-11-30", "tester": "NY-4471", "result": "pass",
        "check_valve_1_psid": "6.1", "check_valve_2_psid": 2.4, "relief_valve_opening_psid": "",
        "repairs": "Cleaned check valve 1."}, format="json")
    assert response.status_code == 201, response.content
    test = DeviceTest.objects.get(device__serial="RP-1", tested_on=date(2026, 11, 30))
    assert response.json() == {
        "id": test.pk, "serial": "RP-1", "tested_on": "2026-11-30", "tester": "NY-4471", "tester_name": "Pat Tester",
        "result": "pass", "check_valve_1_psid": "6.1", "check_valve_2_psid": "2.4", "relief_valve_opening_psid": None,
        "repairs": "Cleaned check valve 1.", "status": "accepted", "submitted_online": False,
        "reviewed_on": test.reviewed_on.isoformat(), "review_note": "", "next_due": "2027-11-30"}
    assert test.reviewed_by.username == "staff-Clerk"
    assert staff().get(f"/api/v1/backflow/devices/RP-1/?as_of={AS_OF}").json()["overdue"] is False


def test_a_bad_test_is_a_400_naming_each_field_and_records_nothing(registry):
    api = staff()
    good = {"serial": "RP-1", "tested_on": "2026-11-30", "tester": "NY-4471", "result": "pass"}
    cases = [
        ({**good, "serial": "XX-9"}, ["serial"]),
        ({**good, "tester": "NY-9999"}, ["tester"]),
        ({**good, "serial": "XX-9", "tester": "NY-9999", "tested_on": "2026-13-01"}, ["tested_on", "serial", "tester"]),
        ({**good, "tested_on": "2099-01-01"}, ["tested_on", "tester"]),  # and Pat's certification has lapsed by then
        ({**good, "result": "ok"}, ["result"]),
        ({**good, "check_valve_1_psid": "five"}, ["check_valve_1_psid"]),
        ({**good, "relief_valve_opening_psid": "900"}, ["relief_valve_opening_psid"]),
        ({**good, "repairs": "x" * 5001}, ["repairs"]),
        ({key: value for key, value in good.items() if key != "tester"}, ["tester"]),
    ]
    for body, fields in cases:
        response = api.post("/api/v1/backflow/tests/", body, format="json")
        assert response.status_code == 400, body
        assert [e["field"] for e in response.json()["errors"]] == fields, (body, response.json())
    assert DeviceTest.objects.count() == 2  # the fixture's


@pytest.mark.citation("§ 141-4 C")
def test_a_lapsed_tester_is_refused_naming_the_certification(registry):
    response = staff().post("/api/v1/backflow/tests/", {"serial": "PV-1", "tested_on": "2026-07-01",
                                                        "tester": "NY-0001", "result": "pass"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "tester", "message": (
        "the NYS certification NY-0001 of Lapsed Larry expired on 2026-06-30, before the test on 2026-07-01: a test "
        "counts only by a certified tester")}]
    assert not DeviceTest.objects.filter(tester__certification_no="NY-0001").exists()


@pytest.mark.citation("§ 141-11 B")
def test_the_fine_is_exactly_what_backflow_fine_prints(tmp_path):
    """Lansing's worked example: notice 2026-01-01, 2" pipe, still missing on 2026-07-15 → $750.00."""
    village(tmp_path, "lansing")
    bf("notice", "1-0001", "--kind", "certification", "--served-on", "2026-01-01", "--largest-pipe", "2",
       date_="2026-01-01")
    api = staff()
    data = api.get("/api/v1/backflow/accounts/1-0001/fine/?as_of=2026-07-15").json()
    assert data == bf_json("fine", "1-0001", date_="2026-07-15")
    assert data["amount"] == "750.00" and data["lines"][0]["citation"] == "§ 141-11 B"
    assert api.get("/api/v1/backflow/accounts/1-0001/fine/?as_of=2026-06-29").json()["amount"] == "0.00"
    missing = api.get("/api/v1/backflow/accounts/9-9999/fine/")
    assert missing.status_code == 404 and missing.json()["errors"][0]["field"] == "account_no"
    assert api.get("/api/v1/backflow/accounts/1-0001/fine/?as_of=July").status_code == 400


@pytest.mark.citation("§ 45.45 H")
def test_require_records_the_assessment_and_answers_as_backflow_require(registry):
    response = staff().post("/api/v1/backflow/accounts/1-0102/require/",
                            {"conditions": ["cross_connection", "back_pressure"], "note": "", "reason": ""},
                            format="json")
    assert response.status_code == 201
    data = response.json()
    assert set(data) == {"required", "allowed", "citation", "trace"}
    assert {k: data[k] for k in ("required", "allowed", "citation")} == {
        "required": True, "allowed": ["AG", "RPZ", "DCA"], "citation": "§ 45.45 H"}
    assessment = Assessment.objects.filter(account=registry["second"]).latest()
    assert data["trace"] == assessment.trace and data["trace"]
    assert assessment.assessed_by.username == "staff-Backflow inspector"
    # The PVB at the premises is not allowed under the answer: flagged.
    assert Device.objects.get(serial="PV-1").flagged
    # The command gives the same answer for the same conditions.
    assert bf_json("require", "1-0102", "--condition", "cross_connection", "--condition", "back_pressure",
                   date_=AS_OF) == {k: data[k] for k in ("required", "allowed", "citation")}
    none = staff().post("/api/v1/backflow/accounts/1-0102/require/", {"conditions": []}, format="json").json()
    assert (none["required"], none["allowed"]) == (False, [])


def test_a_bad_assessment_is_a_400_naming_the_field(registry):
    api = staff()
    before = Assessment.objects.count()
    url = "/api/v1/backflow/accounts/1-0102/require/"
    for body, field in (({"conditions": ["swimming_pool"]}, "conditions"), ({}, "conditions"),
                        ({"conditions": "cross_connection"}, "conditions"),
                        ({"conditions": ["cross_connection"], "note": "x" * 5001}, "note")):
        response = api.post(url, body, format="json")
        assert response.status_code == 400, body
        assert [e["field"] for e in response.json()["errors"]] == [field], (body, response.json())
    unknown = api.post(url, {"conditions": ["swimming_pool"]}, format="json").json()["errors"][0]["message"]
    assert "swimming_pool" in unknown
    assert api.post("/api/v1/backflow/accounts/9-9999/require/", {"conditions": []}, format="json").status_code == 404
    assert Assessment.objects.count() == before


def test_a_hearing_officer_may_not_read_the_registry(registry):
    assert staff("Hearing officer").get("/api/v1/backflow/devices/").status_code == 403


def test_every_backflow_response_is_what_the_schema_says(registry):
    root = APIClient()
    root.force_authenticate(get_user_model().objects.create_superuser("root", "root@example.org", "x"))
    calls = [
        ("get", "/api/v1/backflow/devices/", None, 200),
        ("get", f"/api/v1/backflow/devices/?account_no=1-0101&overdue=true&as_of={AS_OF}&offset=0", None, 200),
        ("get", "/api/v1/backflow/devices/?overdue=maybe", None, 400),
        ("get", f"/api/v1/backflow/devices/RP-1/?as_of={AS_OF}", None, 200),
        ("get", "/api/v1/backflow/devices/DC-1/", None, 200),
        ("get", "/api/v1/backflow/devices/nope/", None, 404),
        ("get", f"/api/v1/backflow/due/?as_of={AS_OF}&within=365", None, 200),
        ("get", "/api/v1/backflow/due/?within=x", None, 400),
        ("get", "/api/v1/backflow/accounts/1-0101/fine/", None, 200),
        ("get", "/api/v1/backflow/accounts/nope/fine/", None, 404),
        ("get", "/api/v1/backflow/accounts/1-0101/fine/?as_of=x", None, 400),
        ("post", "/api/v1/backflow/tests/", {"serial": "DC-1", "tested_on": "2026-11-30", "tester": "NY-4471",
                                             "result": "fail", "check_valve_1_psid": "0.5"}, 201),
        ("post", "/api/v1/backflow/tests/", {"serial": "DC-1"}, 400),
        ("post", "/api/v1/backflow/accounts/1-0101/require/", {"conditions": ["cross_connection"]}, 201),
        ("post", "/api/v1/backflow/accounts/1-0101/require/", {"conditions": ["nope"]}, 400),
        ("post", "/api/v1/backflow/accounts/nope/require/", {"conditions": []}, 404),
    ]
    schema = openapi(root)
    components = _closed(schema["components"])
    for method, url, body, status in calls:
        response = getattr(root, method)(url, body, format="json") if body is not None else getattr(root, method)(url)
        assert response.status_code == status, (method, url, response.content[:300])
        _check(schema, components, method, url, response)
    for client, status in ((APIClient(), 401), (staff("Hearing officer"), 403)):
        response = client.get("/api/v1/backflow/devices/")
        assert response.status_code == status
        _check(schema, components, "get", "/api/v1/backflow/devices/", response)
