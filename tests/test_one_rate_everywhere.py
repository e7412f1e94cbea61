"""One set of formatters: a line billed at $3.10 per 1,000 gal prints its rate as ``3.10`` in the statement
JSON, the API's bill, the portal's bill page and the PDF — never ``3.1`` or ``3.100000``."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from billing.models import Bill
from billing.selectors import account_statement
from billing.services.bill_pdfs import bill_pdf_render
from tests.api.test_api import clerk_client
from tests.billing.test_pdf import needs_poppler, text_of
from tests.portal.conftest import billed_account, customer

pytestmark = pytest.mark.django_db

# The worked example (docs/ordinances.md, Mineola): 62,500 gal, of which 30,000 gal in the block at $3.10.
BLOCK = "§ 45.28 A(1)"


def _no_other_spelling(text: str) -> None:
    assert not re.search(r"(?<![\d.])3\.1(?!\d)|3\.100+", text), "a rate printed as 3.1 or 3.100000"


@needs_poppler
def test_the_rate_prints_as_3_10_in_the_statement_the_api_the_portal_and_the_pdf(mineola, media):
    account = billed_account()
    bill = Bill.objects.get(account=account)

    statement = account_statement(account=account, as_of=bill.bill_date)
    (statement_line,) = [x for x in statement["bills"][0]["lines"] if x["quantity"] == "30000"]
    assert (statement_line["rate"], statement_line["amount"], statement_line["citation"]) == ("3.10", "93.00", BLOCK)

    api_bill = clerk_client().get(f"/api/v1/bills/{bill.number}/").json()
    (api_line,) = [x for x in api_bill["lines"] if x["quantity"] == "30000"]
    assert api_line == statement_line

    user = customer("rate@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    page = client.get(reverse("portal:bill", kwargs={"public_id": bill.public_id})).content.decode()
    assert "30,000 gal × 3.10 per 1,000" in page and "$93.00" in page

    text = text_of(bill_pdf_render(bill=bill))
    assert "30,000 gal × 3.10 per 1,000" in text and "$93.00" in text

    for printed in (str(statement), str(api_bill), page, text):
        _no_other_spelling(printed)
