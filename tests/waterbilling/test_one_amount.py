"""One amount stops a shut-off, named the same everywhere: the customer's case page and account page, the counter
(with a button that fills it), the account's page in the office, the case's page and the notice served all say
"To stop the shut-off, pay" the same dollars (``termination.selectors.case_unpaid``)."""

import json
import shutil
import subprocess
from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from billing.services.payments import payment_post
from core.clock import today
from core.money import fmt_dollars
from termination.documents import notice_pdf
from termination.models import TerminationCase
from termination.selectors import case_unpaid
from tests.office.conftest import staff
from tests.termination.steps import delinquent_account, served_case

pytestmark = pytest.mark.django_db


def test_the_counter_and_the_account_name_the_amount_that_stops_the_shutoff(mineola, client):
    account, _ = delinquent_account(occupant=False)
    case = TerminationCase.objects.get(number=served_case(account, occupant=False))
    payment_post(account_no=account.account_no, amount=Decimal("50.00"), paid_on=date(2026, 4, 2),
                 reference="CHK-50")
    stop = case_unpaid(case, as_of=today())
    assert stop == Decimal("136.13")  # $186.13 the case is for, less the $50.00 paid since
    client.force_login(staff("clara", "Clerk"))
    counter = client.get(reverse("admin:billing_payment_counter"), {"account": account.account_no}).content.decode()
    assert f'To stop the shut-off, pay</th><td id="counter-stop">{fmt_dollars(stop)} (case {case.number})' in counter
    assert f'data-amount="{stop}">To stop the shut-off, pay: {fmt_dollars(stop)}</button>' in counter
    looked_up = json.loads(client.get(reverse("admin:billing_payment_counter_lookup"),
                                      {"account": account.account_no}).content)
    assert looked_up["stop"] == {"case": case.number, "amount": "136.13", "amount_text": "$136.13",
                                 "words": "To stop the shut-off, pay", "detail": "", "restores": False}
    page = client.get(reverse("admin:accounts_account_change", args=[account.pk])).content.decode()
    assert f"— to stop the shut-off, pay {fmt_dollars(stop)}" in page
    case_page = client.get(reverse("admin:termination_terminationcase_change", args=[case.pk])).content.decode()
    assert "to pay (today)" in case_page.lower() and f"To stop the shut-off, pay: {fmt_dollars(stop)}" in case_page
    # An account with no case: no such line, no such button.
    other, _ = delinquent_account(occupant=False)
    assert "counter-stop" not in client.get(reverse("admin:billing_payment_counter"),
                                            {"account": other.account_no}).content.decode()
    assert json.loads(client.get(reverse("admin:billing_payment_counter_lookup"),
                                 {"account": other.account_no}).content)["stop"] is None


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_the_notice_names_it_the_same(mineola):
    account, _ = delinquent_account(occupant=False)
    case = TerminationCase.objects.get(number=served_case(account, occupant=False))
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=notice_pdf(case.notices.first()),
                          capture_output=True, check=True).stdout.decode()
    assert "To stop the shut-off, pay" in text and "$186.13" in text
