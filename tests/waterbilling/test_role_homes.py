"""Each role's home page opens on its own queue: the decisions waiting for a supervisor or an approver (and a clerk's
own requests), the crew's day, the hearing officer's docket, the inspector's tests and follow-ups, the treasurer's
days to close."""

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.urls import reverse

from billing.services.payments import payment_post
from core.clock import today
from office.services import day_close, refund_request
from tests.office.conftest import staff
from tests.termination.steps import delinquent_account, served_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: roles")]


def home(client, user) -> dict:
    client.force_login(user)
    page = client.get(reverse("admin:index"))
    assert page.status_code == 200
    return {s.key: [item.words for item in s.items] for s in page.context["dashboard"].sections}


def test_each_role_opens_on_its_queue(client, mineola):
    clerk, boss = staff("clara", "Clerk"), staff("sam", "Supervisor")
    mayor, crew = staff("mayor", "Approver"), staff("fred", "Field crew")
    officer, treasurer = staff("olga", "Hearing officer"), staff("tess", "Treasurer")
    inspector = staff("ivan", "Backflow inspector")
    account, _ = delinquent_account(occupant=False)
    payment_post(account_no=account.account_no, amount=Decimal("250.00"), paid_on=date(2026, 2, 20), reference="C-1")
    refund_request(account=account, amount=Decimal("10.00"), reason="asked", as_of=date(2026, 3, 2), actor=clerk)
    served_case(delinquent_account(occupant=False)[0], occupant=False)

    assert home(client, boss)["decisions"] == ["1 refund for you to approve or refuse"]
    assert home(client, mayor)["decisions"] == ["1 refund for you to approve or refuse"]
    assert home(client, clerk)["decisions"] == ["1 refund you asked for, waiting for another to decide"]
    crew_home = home(client, crew)
    assert crew_home["field"][0].endswith("stops on today's day sheet") and "decisions" not in crew_home
    assert home(client, officer)["docket"] == [
        "1 case at or past its hearing date: hearing and determination to record", "0 hearings to come"]
    assert home(client, inspector)["inspector"] == ["0 tests submitted online to accept or reject",
                                                    "0 reverse-flow follow-ups open"]
    yesterday = today() - timedelta(days=1)
    payment_post(account_no=account.account_no, amount=Decimal("5.00"), paid_on=yesterday, reference="C-2")
    assert home(client, treasurer)["books"] == ["1 day of the last 30 with payments and no close"]
    day_close(on=yesterday, counted_cash=Decimal("0"), counted_checks=Decimal("5.00"), note="", actor=clerk)
    assert home(client, treasurer)["books"] == ["0 days of the last 30 with payments and no close"]
    for user in (crew, officer, inspector, mayor):
        client.force_login(user)
        assert "Reports" not in [s.words for s in client.get(reverse("admin:index")).context["dashboard"].shortcuts]
