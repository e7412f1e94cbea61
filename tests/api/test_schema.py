"""The OpenAPI schema: staff-only in production, and exactly what each operation answers.

Real responses of every operation — successes and errors — are checked against the schema with every
object closed (no property the schema does not name) and every documented property required, so the
schema can neither miss nor invent a field.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from jsonschema import Draft202012Validator
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

ERRORS = {"$ref": "#/components/schemas/Errors"}


def staff(*, superuser: bool = False, group: str | None = None) -> APIClient:
    users = get_user_model().objects
    user = users.create_superuser("root", "root@example.org", "x") if superuser else \
        users.create_user(f"staff-{group}", "staff@example.org", "x", is_staff=True)
    if group:
        user.groups.add(Group.objects.get(name=group))
    client = APIClient()
    client.force_authenticate(user)
    return client


def openapi(client: APIClient) -> dict:
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/"])
def test_schema_and_docs_are_staff_only_in_production(mineola, url, settings):
    settings.DEBUG = False
    assert APIClient().get(url).status_code == 401
    customer = APIClient()
    customer.force_authenticate(get_user_model().objects.create_user("customer@example.org"))
    assert customer.get(url).status_code == 403
    assert staff(group="Backflow inspector").get(url).status_code == 200


def test_schema_is_open_while_developing(mineola, settings):
    settings.DEBUG = True
    assert APIClient().get("/api/schema/").status_code == 200


def test_every_operation_documents_its_errors(mineola):
    schema = openapi(staff())
    assert schema["components"]["schemas"]["Errors"]["properties"]["errors"]["items"] == {
        "$ref": "#/components/schemas/FieldError"}
    assert set(schema["components"]["schemas"]["FieldError"]["properties"]) == {"field", "message", "line"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            codes = {"400", "401", "403"} | ({"404"} if "{" in path else set())
            for code in codes:
                assert operation["responses"][code]["content"]["application/json"]["schema"] == ERRORS, (
                    method, path, code)


def test_lists_are_documented_as_pages(mineola):
    schema = openapi(staff())
    for path in ("/api/v1/accounts/", "/api/v1/payments/", "/api/v1/bills/", "/api/v1/billing-runs/"):
        get = schema["paths"][path]["get"]
        ref = get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        page = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert set(page["properties"]) == {"offset", "limit", "count", "results"} == set(page["required"]), path
        assert page["properties"]["results"]["type"] == "array"
        (offset,) = [p for p in get["parameters"] if p["name"] == "offset"]
        assert offset["schema"]["minimum"] == 0 and offset["schema"]["maximum"] > 0


def _closed(node):
    """An OpenAPI 3.0 schema as strict JSON Schema: nullable spelled out, objects closed and complete."""
    if isinstance(node, list):
        return [_closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _closed(value) for key, value in node.items()}
    if node.get("type") == "object" and "properties" in node:
        node.setdefault("additionalProperties", False)
    if node.pop("nullable", False):
        node = {"anyOf": [node, {"type": "null"}]}
    return node


def _refs(node) -> set[str]:
    if isinstance(node, dict):
        own = {node["$ref"].rsplit("/", 1)[1]} if "$ref" in node else set()
        return own.union(*(_refs(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(item) for item in node))
    return set()


def test_every_field_of_a_response_is_documented_as_always_there(mineola):
    schema = openapi(staff())
    components = schema["components"]["schemas"]
    names = set().union(*(_refs(operation["responses"]) for operations in schema["paths"].values()
                          for operation in operations.values()))
    while True:  # and the components those refer to
        more = set().union(*(_refs(components[name]) for name in names)) - names
        if not more:
            break
        names |= more
    for name in names:
        if "properties" in components[name]:
            optional = {"line"} if name == "FieldError" else set()
            assert set(components[name]["required"]) == set(components[name]["properties"]) - optional, name


def _operation(schema: dict, method: str, url: str) -> tuple[str, dict]:
    path = url.partition("?")[0]
    for template, operations in schema["paths"].items():
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path) and method in operations:
            return template, operations[method]
    raise AssertionError(f"{method.upper()} {path} is not in the schema")


def test_every_response_is_what_the_schema_says(books):
    account, meter, bill, run = books["account"], books["meter"], books["bill"], books["run"]
    no, number = account.account_no, bill.number
    calls = [
        ("get", "/api/v1/accounts/", None, 200),
        ("get", f"/api/v1/accounts/?q={no}&offset=0", None, 200),
        ("get", "/api/v1/accounts/?offset=x", None, 400),
        ("get", f"/api/v1/accounts/{no}/", None, 200),
        ("get", "/api/v1/accounts/nope/", None, 404),
        ("get", f"/api/v1/accounts/{no}/statement/?as_of=2026-05-10", None, 200),
        ("get", f"/api/v1/accounts/{no}/statement/?as_of=2026-02-30", None, 400),
        ("get", "/api/v1/accounts/nope/statement/", None, 404),
        ("post", "/api/v1/readings/", {"meter_serial": meter.serial, "read_date": "2026-07-10",
                                       "reading": "1100000"}, 201),
        ("post", "/api/v1/readings/", {"meter_serial": meter.serial, "read_date": "2026-07-11",
                                       "reading": "5"}, 400),
        ("post", "/api/v1/readings/bulk/", [{"meter_serial": meter.serial, "read_date": "2026-08-10",
                                             "reading": "1110000"}], 201),
        ("post", "/api/v1/readings/bulk/", {"meter_serial": meter.serial}, 400),
        ("post", "/api/v1/payments/", {"account_no": no, "amount": "10.00", "paid_on": "2026-05-01",
                                       "reference": "S-1"}, 201),
        ("post", "/api/v1/payments/", [{"account_no": no, "amount": "10.00", "paid_on": "2026-05-01",
                                        "reference": "S-2"}], 201),
        ("post", "/api/v1/payments/", {"account_no": no, "amount": "11.00", "paid_on": "2026-05-01",
                                       "reference": "S-1"}, 400),
        ("get", "/api/v1/payments/", None, 200),
        ("get", f"/api/v1/payments/?account_no={no}", None, 200),
        ("get", "/api/v1/bills/?bill_date=2026-02-01", None, 200),
        ("get", "/api/v1/bills/?bill_date=soon", None, 400),
        ("get", f"/api/v1/bills/{number}/", None, 200),
        ("get", "/api/v1/bills/nope/", None, 404),
        ("get", f"/api/v1/bills/{number}/pdf/", None, 200),
        ("get", "/api/v1/bills/nope/pdf/", None, 404),
        ("get", "/api/v1/billing-runs/", None, 200),
        ("get", f"/api/v1/billing-runs/{run.pk}/", None, 200),
        ("get", "/api/v1/billing-runs/999999/", None, 404),
        ("post", "/api/v1/billing-runs/", {"run_on": "2026-02-01"}, 202),
        ("post", "/api/v1/billing-runs/", {"run_on": "2099-02-01"}, 400),
        ("post", "/api/v1/penalty-runs/", {"as_of": "2026-05-10"}, 201),
        ("post", "/api/v1/penalty-runs/", {"as_of": "May"}, 400),
        ("get", "/api/v1/fees/", None, 200),
        ("get", "/api/v1/fees/?as_of=2026-01-01", None, 200),
        ("get", "/api/v1/fees/?code=construction&basis=250000", None, 200),
        ("get", "/api/v1/fees/?code=tank_wagon", None, 200),
        ("get", "/api/v1/fees/?code=construction", None, 400),
        ("get", "/api/v1/fees/?code=nope", None, 404),
        ("get", "/api/v1/fees/?code=sprinkler&size=4", None, 200),
        ("get", "/api/v1/fees/?code=sprinkler&size=7", None, 400),
        ("post", f"/api/v1/accounts/{no}/charges/", {"code": "construction", "base": "250000",
                                                      "charged_on": "2026-05-01"}, 201),
        ("post", f"/api/v1/accounts/{no}/charges/", {"code": "sprinkler", "size": "7"}, 400),
        ("post", "/api/v1/accounts/nope/charges/", {"code": "connect"}, 404),
        ("get", f"/api/v1/accounts/{no}/charges/", None, 200),
        ("get", f"/api/v1/accounts/{no}/charges/?status=all&offset=0", None, 200),
        ("get", f"/api/v1/accounts/{no}/charges/?status=old", None, 400),
    ]
    root = staff(superuser=True)
    schema = openapi(root)
    components = _closed(schema["components"])
    for method, url, body, status in calls:
        response = getattr(root, method)(url, body, format="json") if body is not None else getattr(root, method)(url)
        assert response.status_code == status, (method, url, response.content[:300])
        _check(schema, components, method, url, response)
    for client, status in ((APIClient(), 401), (staff(group="Backflow inspector"), 403)):
        response = client.get("/api/v1/bills/")
        assert response.status_code == status
        _check(schema, components, "get", "/api/v1/bills/", response)


def _check(schema, components, method, url, response):
    template, operation = _operation(schema, method, url)
    documented = operation["responses"].get(str(response.status_code))
    assert documented, f"{method.upper()} {template} answers {response.status_code}, which is not documented"
    media_type = response["Content-Type"].partition(";")[0]
    assert media_type in documented["content"], (method, template, response.status_code, media_type)
    if media_type == "application/json":
        validator = Draft202012Validator({**_closed(documented["content"][media_type]["schema"]),
                                          "components": components})
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(response.json())]
        assert not errors, (method, url, response.status_code, errors)


def test_the_schema_is_valid_openapi_without_warnings(db, tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
