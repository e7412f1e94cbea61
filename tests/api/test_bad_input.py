"""Input the database cannot take is refused with a 400 naming it, never a 500.

PostgreSQL refuses a NUL character in text, and an integer past 64 bits; these reach it from a query
parameter, a path or a request body unless the request is checked first.
"""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

NUL_MESSAGE = "contains a NUL character (\\x00), which is not allowed"


@pytest.fixture
def root(mineola):
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_superuser("root", "root@example.org", "x"))
    return client


@pytest.mark.parametrize("url,field", [
    ("/api/v1/accounts/?q=%00", "q"),
    ("/api/v1/accounts/?offset=1&q=a%00b", "q"),
    ("/api/v1/accounts/1%00/", "account_no"),
    ("/api/v1/accounts/1%00/statement/", "account_no"),
    ("/api/v1/accounts/{account_no}/statement/?as_of=%00", "as_of"),
    ("/api/v1/payments/?account_no=%00", "account_no"),
    ("/api/v1/bills/?account_no=1%00", "account_no"),
    ("/api/v1/bills/1%00/", "number"),
    ("/api/v1/bills/1%00/pdf/", "number"),
    ("/api/v1/fees/?code=%00", "code"),
    ("/api/v1/fees/?code=construction&basis=1%00", "basis"),
    ("/api/v1/fees/?a%00b=1", "a\\x00b"),
])
def test_a_nul_in_the_path_or_query_is_a_400_naming_where(root, books, url, field):
    response = root.get(url.format(account_no=books["account"].account_no))
    assert response.status_code == 400
    assert response.json() == {"errors": [{"field": field, "message": NUL_MESSAGE}]}


def test_a_nul_in_a_body_is_a_400_naming_the_field(root, books):
    response = root.post("/api/v1/payments/", [{"account_no": books["account"].account_no, "amount": "1.00",
                                                "paid_on": "2026-05-01", "reference": "R-\x00"}], format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "[0].reference"
    readings = root.post("/api/v1/readings/", {"meter_serial": "\x00", "read_date": "2026-07-10",
                                               "reading": "1"}, format="json")
    assert readings.status_code == 400 and readings.json()["errors"][0]["field"] == "meter_serial"


def test_a_nul_in_the_credentials_is_a_400(root, books):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token abc\x00def")
    response = client.get("/api/v1/accounts/")
    assert response.status_code == 400
    assert response.json() == {"errors": [{"field": "Authorization", "message": NUL_MESSAGE}]}


@pytest.mark.parametrize("offset", ["99999999999999999999", "9" * 5000, "1000000001", "-1", "1.5", "", "١"])
def test_offset_is_bounded(root, offset):
    for url in ("/api/v1/accounts/", "/api/v1/payments/", "/api/v1/bills/", "/api/v1/billing-runs/"):
        response = root.get(url, {"offset": offset})
        assert response.status_code == 400, (url, offset)
        assert response.json() == {"errors": [{"field": "offset",
                                               "message": "must be a whole number from 0 to 1000000000"}]}


def test_the_largest_offset_is_an_empty_page(root, books):
    page = root.get("/api/v1/accounts/", {"offset": "1000000000"}).json()
    assert page == {"offset": 1_000_000_000, "limit": 100, "count": 1, "results": []}


@pytest.mark.parametrize(("amount", "message"), [
    ("99999999999", "'99999999999' is more than a single payment may be (at most $999,999.99)"),
    ("10000000000.00", "'10000000000.00' is more than a single payment may be (at most $999,999.99)"),
    ("1e30", "'1e30' is not an amount in dollars and cents (digits 0-9, like 1250.00 or $1,250.00)"),
    ("1E+400", "'1E+400' is not an amount in dollars and cents (digits 0-9, like 1250.00 or $1,250.00)"),
])
def test_an_amount_past_the_largest_is_a_400(root, books, amount, message):
    response = root.post("/api/v1/payments/", {"account_no": books["account"].account_no, "amount": amount,
                                               "paid_on": "2026-05-01", "reference": "BIG"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"errors": [{"field": "amount", "message": message}]}


def test_a_fee_basis_past_the_largest_is_a_400(root):
    response = root.get("/api/v1/fees/", {"code": "construction", "basis": "1e30"})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "basis"


@pytest.mark.parametrize("url,field", [("/api/v1/fees/?as_of=", "as_of"), ("/api/v1/bills/?bill_date=", "bill_date"),
                                       ("/api/v1/accounts/{account_no}/statement/?as_of=", "as_of")])
def test_a_blank_date_is_a_400(root, books, url, field):
    response = root.get(url.format(account_no=books["account"].account_no))
    assert response.status_code == 400
    assert response.json() == {"errors": [{"field": field, "message": "is blank; give a date (YYYY-MM-DD) or leave "
                                                                      "it out"}]}


def test_the_fee_schedule_before_any_fee_took_effect_is_empty(root):
    response = root.get("/api/v1/fees/", {"as_of": "1900-01-01"})
    assert response.status_code == 200 and response.json() == {"as_of": "1900-01-01", "results": []}


def test_a_body_nested_five_thousand_deep_is_a_400_not_a_500(root, books):
    body = "[" * 5000 + "]" * 5000
    response = root.post("/api/v1/payments/", body, content_type="application/json")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["errors"][0]["message"]
