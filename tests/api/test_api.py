"""The staff REST API: statement contract, readings, payments, runs, penalties, fees; JSON errors, no 500s."""

from datetime import date

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from billing.models import Bill, Payment
from meters.models import Reading
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db


def clerk_client() -> APIClient:
    clerk = User.objects.create_user("clerk", is_staff=True)
    clerk.groups.add(Group.objects.get(name="Clerk"))
    client = APIClient()
    client.force_authenticate(User.objects.get(pk=clerk.pk))
    return client


@pytest.fixture
def api(mineola):
    return clerk_client()


@pytest.fixture
def billed(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    run("assess_penalties", "--date", "2026-05-10")
    return account, meter


def test_anonymous_and_customers_are_refused(mineola, billed):
    account, _ = billed
    assert APIClient().get(f"/api/v1/accounts/{account.account_no}/").status_code == 401
    customer = APIClient()
    customer.force_authenticate(User.objects.create_user("customer"))
    response = customer.get(f"/api/v1/accounts/{account.account_no}/statement/")
    assert response.status_code == 403 and "errors" in response.json()


def test_statement_contract(api, billed):
    account, _ = billed
    data = api.get(f"/api/v1/accounts/{account.account_no}/statement/?as_of=2026-05-10").json()
    assert data["balance"] == "199.16" and data["as_of"] == "2026-05-10"
    assert set(data) == {"account_no", "as_of", "balance", "bills", "charges", "payments"}
    bill = data["bills"][0]
    assert {"number", "bill_date", "due_date", "period_start", "period_end", "gallons", "total", "balance",
            "lines"} <= set(bill)
    assert set(data["charges"][0]) >= {"kind", "date", "amount", "citation", "bill"}


def test_errors_are_json_with_field(api, billed):
    assert api.get("/api/v1/accounts/nope/statement/").json() == {
        "errors": [{"field": "account_no", "message": "no account 'nope'"}]}
    bad_date = api.get(f"/api/v1/accounts/{billed[0].account_no}/statement/?as_of=2026-02-30")
    assert bad_date.status_code == 400 and bad_date.json()["errors"][0]["field"] == "as_of"


def test_readings_bulk_all_or_nothing(api, billed):
    _, meter = billed
    before = Reading.objects.count()
    response = api.post("/api/v1/readings/bulk/", [
        {"meter_serial": meter.serial, "read_date": "2026-07-10", "reading": "1100000"},
        {"meter_serial": "NOPE", "read_date": "2026-07-10", "reading": "5"},
        {"meter_serial": meter.serial, "read_date": "2026-07-11", "reading": "-4"}], format="json")
    assert response.status_code == 400
    fields = [e["field"] for e in response.json()["errors"]]
    assert fields == ["[1].meter_serial", "[2].reading"]
    assert Reading.objects.count() == before
    ok = api.post("/api/v1/readings/", {"meter_serial": meter.serial, "read_date": "2026-07-10",
                                        "reading": "1100000"}, format="json")
    assert ok.status_code == 201 and Reading.objects.count() == before + 1


def test_payments_post_skip_and_conflict(api, billed):
    account, _ = billed
    body = {"account_no": account.account_no, "amount": "50.00", "paid_on": "2026-05-01", "reference": "W-1"}
    assert api.post("/api/v1/payments/", body, format="json").json() == {"posted": 1, "skipped": 0}
    assert api.post("/api/v1/payments/", body, format="json").json() == {"posted": 0, "skipped": 1}
    conflict = api.post("/api/v1/payments/", {**body, "amount": "60.00"}, format="json")
    assert conflict.status_code == 400 and conflict.json()["errors"][0]["field"] == "reference"
    assert Payment.objects.count() == 1
    listed = api.get(f"/api/v1/payments/?account_no={account.account_no}").json()
    assert listed["results"][0]["amount"] == "50.00"


def test_billing_run_start_and_poll(api, mineola, django_capture_on_commit_callbacks):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post("/api/v1/billing-runs/", {"run_on": "2026-02-01"}, format="json")
    assert started.status_code == 202
    polled = api.get(f"/api/v1/billing-runs/{started.json()['id']}/").json()
    assert polled["status"] == "done" and polled["bills_created"] == 1 and polled["total_billed"] == "186.13"
    future = api.post("/api/v1/billing-runs/", {"run_on": "2099-02-01"}, format="json")
    assert future.status_code == 400 and future.json()["errors"][0]["field"] == "date"
    assert Bill.objects.count() == 1


def test_billing_run_on_sample_rates_needs_accept_sample_rates(mineola_real_site,
                                                               django_capture_on_commit_callbacks):
    api = clerk_client()
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    refused = api.post("/api/v1/billing-runs/", {"run_on": "2026-02-01"}, format="json")
    assert refused.status_code == 400
    (error,) = refused.json()["errors"]
    assert error["field"] == "accept_sample_rates" and "sample rates are not for real bills" in error["message"]
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post("/api/v1/billing-runs/", {"run_on": "2026-02-01", "accept_sample_rates": True},
                           format="json")
    assert started.status_code == 202 and started.json()["accept_sample_rates"] is True
    polled = api.get(f"/api/v1/billing-runs/{started.json()['id']}/").json()
    assert polled["status"] == "done" and polled["total_billed"] == "186.13" and polled["accept_sample_rates"]


def test_penalty_run(api, mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    response = api.post("/api/v1/penalty-runs/", {"as_of": "2026-05-10"}, format="json").json()
    assert response["posted"] == 3 and response["total"] == "13.03"


def test_bills_list_and_detail(api, billed):
    account, _ = billed
    listed = api.get(f"/api/v1/bills/?account_no={account.account_no}").json()
    number = listed["results"][0]["number"]
    detail = api.get(f"/api/v1/bills/{number}/").json()
    assert detail["total"] == "186.13" and detail["lines"][2]["amount"] == "48.13"
    assert api.get("/api/v1/bills/none/").status_code == 404


@pytest.mark.citation("§ 45.28 A(3)")
@pytest.mark.citation("§ 45.28 B")
@pytest.mark.citation("§ 45.28 D")
@pytest.mark.parametrize("query,amount", [("code=construction&basis=250000", "375.00"),
                                          ("code=construction&basis=1234567", "1851.85"),
                                          ("code=tank_wagon", "25.00"), ("code=connect", "50.00")])
def test_fee_quotes(api, query, amount):
    assert api.get(f"/api/v1/fees/?{query}").json()["amount"] == amount


def test_fee_quote_errors(api):
    assert api.get("/api/v1/fees/?code=construction").json()["errors"][0]["field"] == "basis"
    assert api.get("/api/v1/fees/?code=construction&basis=abc").status_code == 400
    assert api.get("/api/v1/fees/?code=nope").status_code == 404
    assert len(api.get("/api/v1/fees/").json()["results"]) == 5


def test_openapi_schema_renders(api):
    assert api.get("/api/schema/").status_code == 200


def test_as_of_is_yyyy_mm_dd_from_1900(api, billed):
    for given in ("20260510", "0026-05-10"):
        refused = api.get(f"/api/v1/accounts/{billed[0].account_no}/statement/?as_of={given}")
        assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "as_of"
