"""The termination endpoints of the REST API: the case list, a case as ``termination show --json`` prints it,
the delinquent accounts, a written hearing request recorded by the office, and the shut-off order refused with
every unmet condition of the guard (409) — each answer as the OpenAPI schema documents it.

The case is docs/ordinances.md's worked example (Mineola Article II): bill due 2026-03-01 left unpaid, notice served
personally 2026-04-01 for a hearing on 2026-04-16, so the request is due by 2026-04-11; a determination mailed
2026-04-20 may be appealed until 2026-05-04."""

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from rest_framework.test import APIClient

from termination.models import CaseEvent, TerminationCase, WorkOrder
from tests.termination.steps import delinquent_account, served_case, show, term, terminated_case

from .test_schema import _check, _closed, openapi

pytestmark = pytest.mark.django_db


def clerk() -> APIClient:
    user, _ = get_user_model().objects.get_or_create(username="clerk", defaults={"is_staff": True})
    user.groups.add(Group.objects.get(name="Clerk"))
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


def orderer() -> APIClient:
    """Staff who may issue shut-off orders (``termination.order_terminationcase``) and nothing else."""
    user = get_user_model().objects.create_user("foreman", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="order_terminationcase"))
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


@pytest.fixture
def served(mineola):
    account, bill = delinquent_account()
    return {"account": account, "bill": bill, "number": served_case(account)}


@pytest.fixture
def final(mineola):
    """A case whose determination to terminate is final: no request, no appeal by 2026-05-04."""
    account, _ = delinquent_account(occupant=False)
    number = terminated_case(account, occupant=False)
    term("deadlines", date_="2026-05-05")
    return {"account": account, "number": number}


def test_the_case_list_is_paged_and_filtered_with_each_next_step(served):
    api = clerk()
    data = api.get("/api/v1/termination/cases/").json()
    assert (data["offset"], data["limit"], data["count"]) == (0, 100, 1)
    assert data["results"] == [{
        "number": served["number"], "account_no": served["account"].account_no, "status": "noticed",
        "grounds": "nonpayment", "amount_delinquent": "186.13", "opened_on": "2026-03-20", "hearing_on": "2026-04-16",
        "next_step": "request window closes", "next_step_on": "2026-04-11"}]
    assert api.get("/api/v1/termination/cases/?status=noticed").json()["count"] == 1
    assert api.get("/api/v1/termination/cases/?status=active").json()["count"] == 1
    assert api.get("/api/v1/termination/cases/?status=final").json()["count"] == 0
    assert api.get(f"/api/v1/termination/cases/?account_no={served['account'].account_no}").json()["count"] == 1
    assert api.get("/api/v1/termination/cases/?account_no=9-99999").json()["count"] == 0
    response = api.get("/api/v1/termination/cases/?status=late")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "status"


def test_a_case_is_exactly_what_termination_show_prints(served):
    data = clerk().get(f"/api/v1/termination/cases/{served['number']}/").json()
    assert data == show(served["number"])
    assert data["deadlines"] == {"hearing_earliest": "2026-04-16", "request_by": "2026-04-11", "appeal_by": None}
    missing = clerk().get("/api/v1/termination/cases/T-2026-99999/")
    assert missing.status_code == 404
    assert missing.json() == {"errors": [{"field": "number", "message": "no termination case numbered 'T-2026-99999'"}]}


@pytest.mark.citation("§ 45.31")
def test_the_delinquent_accounts_on_a_date(served):
    api = clerk()
    # Due 2026-03-01: delinquent from the day after.
    assert api.get("/api/v1/termination/delinquent/?as_of=2026-03-01").json() == {
        "as_of": "2026-03-01", "count": 0, "results": []}
    data = api.get("/api/v1/termination/delinquent/?as_of=2026-03-02").json()
    (row,) = data["results"]
    assert row["account_no"] == served["account"].account_no and row["amount"] == "186.13"
    assert row["case"] == served["number"]  # opened later, but open now
    assert row["bills"] == [{"number": served["bill"].number, "bill_date": "2026-02-01", "due_date": "2026-03-01",
                             "delinquent_from": "2026-03-02", "amount": "186.13"}]
    response = api.get("/api/v1/termination/delinquent/?as_of=March")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "as_of"


@pytest.mark.citation("§ 45.32")
def test_the_office_records_a_written_request_in_time(served):
    response = clerk().post(f"/api/v1/termination/cases/{served['number']}/request/",
                            {"received_on": "2026-04-10", "text": "Letter of Apr 9 asking for a hearing."},
                            format="json")
    assert response.status_code == 201
    assert response.json()["status"] == "requested"
    case = TerminationCase.objects.get(number=served["number"])
    assert (case.request_received_on, case.request_via, case.request_late) == (date(2026, 4, 10), "clerk", False)
    event = CaseEvent.objects.get(case=case, kind="requested")
    assert event.by == "clerk" and not event.flagged
    assert response.json()["events"][-1] == {"on": "2026-04-10", "what": "Written request for the hearing received",
                                             "by": "clerk"}


@pytest.mark.citation("§ 45.32")
def test_a_late_request_is_accepted_and_flagged(served):
    response = clerk().post(f"/api/v1/termination/cases/{served['number']}/request/",
                            {"received_on": "2026-04-14"}, format="json")
    assert response.status_code == 201
    case = TerminationCase.objects.get(number=served["number"])
    assert case.request_late and CaseEvent.objects.get(case=case, kind="requested").flagged
    assert "after the window closed on Apr 11, 2026 (§ 45.32)" in response.json()["events"][-1]["what"]


def test_a_bad_request_is_a_400_naming_each_field_and_records_nothing(served):
    api = clerk()
    url = f"/api/v1/termination/cases/{served['number']}/request/"
    cases = [
        ({}, "received_on"),
        ({"received_on": "2026-02-30"}, "received_on"),
        ({"received_on": "2099-01-01"}, "received_on"),  # after today
        ({"received_on": "2026-04-10", "text": "x" * 5001}, "text"),
    ]
    for body, field in cases:
        response = api.post(url, body, format="json")
        assert response.status_code == 400, body
        assert [e["field"] for e in response.json()["errors"]] == [field], (body, response.json())
    assert TerminationCase.objects.get(number=served["number"]).request_received_on is None
    assert api.post(url, {"received_on": "2026-04-10"}, format="json").status_code == 201
    again = api.post(url, {"received_on": "2026-04-11"}, format="json")
    assert again.status_code == 400
    assert again.json()["errors"] == [{"field": "case", "message": "a request was already recorded on 2026-04-10"}]
    assert api.post("/api/v1/termination/cases/T-2026-99999/request/", {"received_on": "2026-04-10"},
                    format="json").status_code == 404


@pytest.mark.citation("§ 45.35")
def test_a_shut_off_order_is_refused_with_every_unmet_condition(served):
    response = orderer().post(f"/api/v1/termination/cases/{served['number']}/shutoff/", {"as_of": "2026-04-12"},
                              format="json")
    assert response.status_code == 409
    # Served and received on both recipients (1), 15 days before the hearing (2), and unpaid (5): what is
    # missing is a determination to terminate (3) and its mailed notice (4), both named with their sections.
    assert response.json()["errors"] == [
        {"field": "determination", "message": "(3) the hearing officer has not recorded a determination to "
                                              "terminate (§§ 45.33–45.34)"},
        {"field": "appeal", "message": "(4) notice of the determination has not been mailed (§ 45.35)"}]
    assert TerminationCase.objects.get(number=served["number"]).status == "noticed"
    assert not WorkOrder.objects.exists()


@pytest.mark.citation("§ 45.35")
def test_a_shut_off_order_waits_for_the_appeal_window(mineola):
    account, _ = delinquent_account(occupant=False)
    number = terminated_case(account, occupant=False)
    response = orderer().post(f"/api/v1/termination/cases/{number}/shutoff/", {"as_of": "2026-05-04"}, format="json")
    assert response.status_code == 409
    assert any("the appeal window is open until 2026-05-04" in e["message"] and "earliest order is 2026-05-05"
               in e["message"] for e in response.json()["errors"])


def test_a_final_case_gets_its_order_once(final):
    url = f"/api/v1/termination/cases/{final['number']}/shutoff/"
    api = orderer()
    response = api.post(url, {"as_of": "2026-05-06"}, format="json")
    assert response.status_code == 201
    order = WorkOrder.objects.get()
    assert response.json() == {"id": order.pk, "case": final["number"], "kind": "shut_off", "status": "issued",
                               "issued_on": "2026-05-06"}
    again = api.post(url, {"as_of": "2026-05-07"}, format="json")
    assert again.status_code == 200 and again.json()["id"] == order.pk
    assert WorkOrder.objects.count() == 1
    assert TerminationCase.objects.get(number=final["number"]).status == "ordered"


def test_a_shut_off_order_is_never_dated_in_the_future(final):
    response = orderer().post(f"/api/v1/termination/cases/{final['number']}/shutoff/", {"as_of": "2099-01-01"},
                              format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "as_of"
    assert not WorkOrder.objects.exists()


def test_a_clerk_records_requests_but_cannot_order_a_shut_off(final):
    response = clerk().post(f"/api/v1/termination/cases/{final['number']}/shutoff/", {}, format="json")
    assert response.status_code == 403
    assert not WorkOrder.objects.exists()


def test_the_case_list_is_documented_as_pages(mineola):
    root = APIClient()
    root.force_authenticate(get_user_model().objects.create_superuser("root", "root@example.org", "x"))
    schema = openapi(root)
    get = schema["paths"]["/api/v1/termination/cases/"]["get"]
    ref = get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    page = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(page["properties"]) == {"offset", "limit", "count", "results"} == set(page["required"])
    assert {p["name"] for p in get["parameters"]} == {"status", "account_no", "offset"}
    for path, method in (("/api/v1/termination/cases/{number}/request/", "post"),
                         ("/api/v1/termination/cases/{number}/shutoff/", "post")):
        assert {"400", "401", "403", "404", "409"} <= set(schema["paths"][path][method]["responses"])


def test_every_termination_response_is_what_the_schema_says(served, final):
    root = APIClient()
    root.force_authenticate(get_user_model().objects.create_superuser("root", "root@example.org", "x"))
    number, done = served["number"], final["number"]
    calls = [
        ("get", "/api/v1/termination/cases/", None, 200),
        ("get", "/api/v1/termination/cases/?status=active&offset=0", None, 200),
        ("get", "/api/v1/termination/cases/?status=nope", None, 400),
        ("get", "/api/v1/termination/cases/?offset=x", None, 400),
        ("get", f"/api/v1/termination/cases/{number}/", None, 200),
        ("get", "/api/v1/termination/cases/nope/", None, 404),
        ("get", "/api/v1/termination/delinquent/?as_of=2026-03-02", None, 200),
        ("get", "/api/v1/termination/delinquent/", None, 200),
        ("get", "/api/v1/termination/delinquent/?as_of=2026-13-01", None, 400),
        ("post", f"/api/v1/termination/cases/{number}/request/", {"received_on": "soon"}, 400),
        ("post", "/api/v1/termination/cases/nope/request/", {"received_on": "2026-04-10"}, 404),
        ("post", f"/api/v1/termination/cases/{number}/request/", {"received_on": "2026-04-10", "text": "hear me"},
         201),
        ("post", f"/api/v1/termination/cases/{number}/shutoff/", {"as_of": "2026-04-12"}, 409),
        ("post", f"/api/v1/termination/cases/{number}/shutoff/", {"as_of": "April"}, 400),
        ("post", "/api/v1/termination/cases/nope/shutoff/", {}, 404),
        ("post", f"/api/v1/termination/cases/{done}/shutoff/", {"as_of": "2026-05-06"}, 201),
        ("post", f"/api/v1/termination/cases/{done}/shutoff/", {}, 200),
    ]
    schema = openapi(root)
    components = _closed(schema["components"])
    for method, url, body, status in calls:
        response = getattr(root, method)(url, body, format="json") if body is not None else getattr(root, method)(url)
        assert response.status_code == status, (method, url, response.content[:300])
        _check(schema, components, method, url, response)
    for client, status in ((APIClient(), 401), (clerk(), 403)):
        response = client.post(f"/api/v1/termination/cases/{done}/shutoff/", {}, format="json")
        assert response.status_code == status
        _check(schema, components, "post", f"/api/v1/termination/cases/{done}/shutoff/", response)
