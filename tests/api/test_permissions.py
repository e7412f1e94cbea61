"""Who may do what through the REST API: the staff roles' model permissions, as in the admin.

One row per operation, one column per kind of caller; a cell is the status that caller gets. A success
status means the call did its work (201 posted, 202 started); 403 means refused with nothing done; 401
means not signed in.
"""

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import URLPattern, get_resolver
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from backflow.models import Assessment, DeviceTest
from backflow.services import compliance as backflow_services
from billing.models import BillingRun, Payment
from meters.models import Reading
from termination.models import TerminationCase
from tests.termination.steps import term, terminated_case

pytestmark = pytest.mark.django_db

CALLERS = ["Clerk", "Supervisor", "Hearing officer", "Backflow inspector", "staff, no group", "superuser",
           "anonymous", "customer"]

# operation                                 Clerk Super  Hearing Backfl  staff  super  anon  customer
TABLE = {
    "GET accounts/":                          (200,  200,   200,    200,    403,   200,   401,  403),
    "GET accounts/{account_no}/":             (200,  200,   200,    200,    403,   200,   401,  403),
    "GET accounts/{account_no}/statement/":   (200,  200,   200,    403,    403,   200,   401,  403),
    "GET accounts/{account_no}/charges/":     (200,  200,   403,    403,    403,   200,   401,  403),
    "POST accounts/{account_no}/charges/":    (201,  201,   403,    403,    403,   201,   401,  403),
    "POST readings/":                         (201,  201,   403,    403,    403,   201,   401,  403),
    "POST readings/bulk/":                    (201,  201,   403,    403,    403,   201,   401,  403),
    "GET payments/":                          (200,  200,   200,    403,    403,   200,   401,  403),
    "POST payments/":                         (201,  201,   403,    403,    403,   201,   401,  403),
    "GET bills/":                             (200,  200,   200,    403,    403,   200,   401,  403),
    "GET bills/{number}/":                    (200,  200,   200,    403,    403,   200,   401,  403),
    "GET bills/{number}/pdf/":                (200,  200,   200,    403,    403,   200,   401,  403),
    "GET billing-runs/":                      (200,  200,   403,    403,    403,   200,   401,  403),
    "POST billing-runs/":                     (202,  202,   403,    403,    403,   202,   401,  403),
    "GET billing-runs/{run}/":                (200,  200,   403,    403,    403,   200,   401,  403),
    "POST penalty-runs/":                     (201,  201,   403,    403,    403,   201,   401,  403),
    "GET fees/":                              (200,  200,   403,    403,    403,   200,   401,  403),
    "GET fees/?code=tank_wagon":              (200,  200,   403,    403,    403,   200,   401,  403),
    "GET termination/cases/":                 (200,  200,   200,    403,    403,   200,   401,  403),
    "GET termination/cases/{number}/":        (200,  200,   200,    403,    403,   200,   401,  403),
    "GET termination/delinquent/":            (200,  200,   200,    403,    403,   200,   401,  403),
    "POST termination/cases/{number}/request/": (201, 201,  403,    403,    403,   201,   401,  403),
    "POST termination/cases/{number}/shutoff/": (403, 201,  403,    403,    403,   201,   401,  403),
    "GET backflow/devices/":                  (200,  200,   403,    200,    403,   200,   401,  403),
    "GET backflow/devices/{serial}/":         (200,  200,   403,    200,    403,   200,   401,  403),
    "GET backflow/due/":                      (200,  200,   403,    200,    403,   200,   401,  403),
    "POST backflow/tests/":                   (201,  201,   403,    201,    403,   201,   401,  403),
    "GET backflow/accounts/{account_no}/fine/": (200, 200,  403,    200,    403,   200,   401,  403),
    "POST backflow/accounts/{account_no}/require/": (201, 201, 403,  201,    403,   201,   401,  403),
}


def caller(kind: str) -> APIClient:
    client = APIClient()
    if kind == "anonymous":
        return client
    users = get_user_model().objects
    if kind == "superuser":
        user = users.create_superuser("root", "root@example.org", "x")
    elif kind == "customer":
        user = users.create_user("customer@example.org", "customer@example.org", "x")
    else:
        user = users.create_user("staff", "staff@example.org", "x", is_staff=True)
        if kind != "staff, no group":
            user.groups.add(Group.objects.get(name=kind))
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def call(client: APIClient, operation: str, books: dict):
    method, _, path = operation.partition(" ")
    account, meter = books["account"], books["meter"]
    number = books["case"] if path.startswith("termination/") else books["bill"].number
    url = "/api/v1/" + path.format(account_no=account.account_no, number=number, run=books["run"].pk,
                                   serial=books["device"].serial)
    bodies = {
        "readings/": {"meter_serial": meter.serial, "read_date": "2026-07-10", "reading": "1100000"},
        "readings/bulk/": [{"meter_serial": meter.serial, "read_date": "2026-08-10", "reading": "1110000"}],
        "payments/": {"account_no": account.account_no, "amount": "0.01", "paid_on": "2026-11-29",
                      "reference": "X-1"},
        "billing-runs/": {"run_on": "2026-02-01"},
        "penalty-runs/": {"as_of": "2026-05-10"},
        "accounts/{account_no}/charges/": {"code": "tank_wagon"},
        # A letter that arrived long after the window closed: accepted and flagged.
        "termination/cases/{number}/request/": {"received_on": "2026-11-29", "text": "Please hear me."},
        "termination/cases/{number}/shutoff/": {"as_of": "2026-11-30"},
        "backflow/tests/": {"serial": books["device"].serial, "tested_on": "2026-11-29",
                            "tester": books["tester"].certification_no, "result": "pass"},
        "backflow/accounts/{account_no}/require/": {"conditions": ["cross_connection", "hazardous"]},
    }
    if method == "POST":
        return client.post(url, bodies[path], format="json")
    return client.get(url)


@pytest.fixture
def books_and_case(books):
    """The books, and a termination case on their account whose determination to terminate is final: served
    personally 2026-04-01, no request, determined by default and mailed 2026-04-20, no appeal by 2026-05-04;
    and a backflow device at the account with a certified tester."""
    number = terminated_case(books["account"], occupant=False)
    term("deadlines", date_="2026-05-05")
    device = backflow_services.device_register(account=books["account"], type="RPZ", serial="RP-1", size="1",
                                               installed_on=date(2025, 6, 1), actor=None)
    tester = backflow_services.tester_register(certification_no="NY-1", name="Pat Tester",
                                               certification_expires=date(2027, 12, 31))
    return {**books, "case": number, "device": device, "tester": tester}


@pytest.mark.parametrize("kind", CALLERS)
def test_each_caller_gets_what_its_role_allows(books_and_case, kind):
    books = books_and_case
    client = caller(kind)
    readings, payments, runs = Reading.objects.count(), Payment.objects.count(), BillingRun.objects.count()
    backflow = DeviceTest.objects.count(), Assessment.objects.count()
    got = {operation: call(client, operation, books).status_code for operation in TABLE}
    expected = {operation: row[CALLERS.index(kind)] for operation, row in TABLE.items()}
    assert got == expected
    case = TerminationCase.objects.get(number=books["case"])
    if kind not in ("Clerk", "Supervisor", "superuser"):
        # Refused writes wrote nothing.
        assert (Reading.objects.count(), Payment.objects.count(), BillingRun.objects.count()) == (
            readings, payments, runs)
        assert case.request_received_on is None
    if kind not in ("Clerk", "Supervisor", "Backflow inspector", "superuser"):
        assert (DeviceTest.objects.count(), Assessment.objects.count()) == backflow
    assert case.orders.exists() == (kind in ("Supervisor", "superuser"))


def test_a_refusal_is_json_errors(books):
    response = caller("Backflow inspector").post("/api/v1/payments/", {
        "account_no": books["account"].account_no, "amount": "0.01", "paid_on": "2026-11-29",
        "reference": "X-1"}, format="json")
    assert response.status_code == 403
    assert response.json() == {"errors": [{"field": "", "message": "You do not have permission to perform this "
                                                                    "action."}]}
    anonymous = APIClient().get("/api/v1/accounts/")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"] == "Token"
    assert anonymous.json()["errors"][0]["field"] == ""


def _api_views():
    """Every route under /api/v1/, through the apps' ``api_urls`` it includes."""
    (api,) = [p for p in get_resolver().url_patterns if str(p.pattern) == "api/v1/"]

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern.callback.cls
            else:
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))

    yield from walk(api.url_patterns)


def test_every_api_operation_is_in_the_table():
    """A new endpoint or method must name its permissions here (and in the view) before it ships."""
    listed = {(op.partition(" ")[0], op.partition(" ")[2].partition("?")[0]) for op in TABLE}
    routes = {
        (method.upper(), route.replace("<str:", "{").replace("<int:pk>", "{run}").replace(">", "}"))
        for route, view in _api_views() for method in ("get", "post", "put", "patch", "delete")
        if hasattr(view, method)
    }
    assert routes == listed


def test_every_api_view_declares_its_permissions_per_method():
    for route, view in _api_views():
        declared = getattr(view, "required_permissions", {})
        for method in ("get", "post", "put", "patch", "delete"):
            assert hasattr(view, method) == (method.upper() in declared), (route, method)
