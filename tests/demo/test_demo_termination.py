"""``demo_bootstrap`` leaves a few termination cases at different stages on delinquent demo accounts, under
every preset, each step taken lawfully on past days through the services (demo/termination.py); and, on the same
demo, the backflow registry (``tests/demo/backflow_checks.py``)."""

import io
import re

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from core.clock import today
from termination.models import TerminationCase, WorkOrder
from termination.policy import termination_policy
from termination.selectors import case_unpaid
from termination.services.shutoff import shutoff_refusals
from tests.demo.backflow_checks import backflow_registry_checked, backflow_registry_counts
from tests.presets.test_contract import PRESETS

pytestmark = pytest.mark.django_db

STAGES = {"open", "noticed", "requested", "determined", "ordered", "shut_off"}


def bootstrap(code: str) -> str:
    out = io.StringIO()
    call_command("demo_bootstrap", "--preset", code, "--demo", "100", stdout=out, stderr=out)
    return out.getvalue()


def work_as_the_printed_staff(said: str) -> None:
    """The printed staff password signs each role's login in, in its group: the trainee works as the office does,
    never as the superuser; and a tenth of the demo accounts speak Spanish."""
    from accounts.models import Account

    found = re.search(r"Staff, one login per role \(([^)]*)\).*\n  password: (\S+)\n", said)
    assert found, said
    logins, password = found.group(1).split(", "), found.group(2)
    assert logins == ["clerk", "supervisor", "hearing", "inspector", "crew", "treasurer", "approver"]
    for username in ("clerk", "treasurer"):
        client = Client()
        signed_in = client.post(reverse("admin:login"), {"username": username, "password": password,
                                                         "next": reverse("admin:index")})
        assert signed_in.status_code == 302, signed_in.content.decode()[:2000]
        assert client.get(reverse("admin:index")).status_code == 200
    assert Account.objects.filter(language="es").count() == Account.objects.filter(account_no__endswith="7").count()
    assert Account.objects.filter(language="es").exists()


def see_the_portal_as_the_printed_customer(said: str) -> None:
    """The printed customer login signs in to the portal and sees its linked accounts (a billed one and, where the
    demo has one, the account of the served termination case)."""
    found = re.search(r"Customer portal: \S+\n  username: (\S+)\n  password: (\S+)\n  \(accounts ([^)]*)\)", said)
    assert found, said
    username, password, accounts = found.groups()
    client = Client()
    signed_in = client.post(reverse("portal:login"), {"username": username, "password": password})
    assert signed_in.status_code == 302, signed_in.content.decode()[:2000]
    home = client.get(reverse("portal:home")).content.decode()
    for account_no in accounts.split(", "):
        assert account_no in home
    served = TerminationCase.objects.filter(status="noticed").first()
    assert (served is None) == (len(accounts.split(", ")) == 1)


@pytest.mark.citation("demo")
@pytest.mark.parametrize("code", PRESETS)
def test_the_demo_has_a_case_at_every_stage(code, settings):
    settings.DEBUG = True  # demo_bootstrap runs only in development mode
    said = bootstrap(code)
    see_the_portal_as_the_printed_customer(said)
    work_as_the_printed_staff(said)
    backflow_registry_checked(said)
    registry = backflow_registry_counts()
    if code in ("lansing", "old_westbury"):
        # The chapter grants no shut-off for nonpayment: the demo makes no such case and says why.
        assert not TerminationCase.objects.exists()
        assert "Demo: no termination cases: none for nonpayment: Chapter" in said and "relevy" in said
        bootstrap(code)
        assert not TerminationCase.objects.exists() and backflow_registry_counts() == registry
        return
    policy, as_of = termination_policy(), today()
    every = list(TerminationCase.objects.select_related("account").order_by("hearing_on"))
    # Two cases wait for their hearing after a written request: one's hearing day has come (on the hearing
    # officer's docket, to record), the other's is ahead.
    at_hearing = [case for case in every if case.status == "requested" and case.hearing_on <= as_of]
    assert len(at_hearing) == 1 and not at_hearing[0].request_late
    cases = {case.status: case for case in every if case not in at_hearing}
    assert set(cases) == STAGES, said
    assert "Demo: 7 termination cases" in said
    assert len({case.account_id for case in every}) == 7
    for case in cases.values():
        assert case.grounds == "nonpayment" and case_unpaid(case, as_of=as_of) > 0, case
        assert case.events.first().kind == "opened" and case.events.last().on <= as_of
    # The request window of the served case and the appeal window of the determined case are still open.
    assert policy.request_by(cases["noticed"].notices.first().received_on) >= as_of
    assert not cases["requested"].request_late
    assert cases["determined"].by_default and policy.appeal_by(cases["determined"].determination_mailed_on) >= as_of
    # The order was lawful on the day it was issued, and the shut-off was carried out.
    order = WorkOrder.objects.get(case=cases["ordered"])
    assert shutoff_refusals(cases["ordered"], as_of=order.issued_on) == []
    assert cases["shut_off"].account.status == "shut_off"
    # Run again, the demo adds no cases; the customer's new password works, with the same accounts.
    see_the_portal_as_the_printed_customer(bootstrap(code))
    assert TerminationCase.objects.count() == 7 and backflow_registry_counts() == registry
