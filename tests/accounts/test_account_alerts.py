"""Account alerts: a flag the clerk sets that everyone sees on opening the account (the account page, the crew's day
sheet), and that the shut-off guard checks where it bears on a shut-off: "do not shut off" refuses the order until a
supervisor ends it."""

from datetime import date

import pytest
from django.urls import reverse

from accounts.models import AccountAlert
from fieldwork.services import day_sheet
from termination.models import TerminationCase
from tests.office.conftest import staff
from tests.termination.steps import delinquent_account, refused, term, terminated_case

pytestmark = pytest.mark.django_db


def test_do_not_shut_off_makes_the_guard_refuse_and_shows_on_the_day_sheet(mineola, client):
    account, _ = delinquent_account(occupant=False)
    number = terminated_case(account, occupant=False)
    clerk = staff("carla", "Clerk")
    client.force_login(clerk)
    add = reverse("admin:accounts_accountalert_add")
    form = client.get(add, {"account": account.account_no})
    assert form.status_code == 200
    saved = client.post(add, {"account": account.pk, "kind": "no_shutoff", "note": "elderly resident; call first",
                              "starts_on": "2026-05-01", "ends_on": ""})
    assert saved.status_code == 302, saved.content.decode()[-2000:]
    alert = AccountAlert.objects.get()
    assert alert.set_by == clerk and alert.kind == "no_shutoff"
    # The guard refuses, naming the alert.
    said = refused("shutoff", number, date_="2026-05-05")
    assert "(6) account alert: Do not shut off without the supervisor (elderly resident; call first)" in said
    assert TerminationCase.objects.get(number=number).status != "ordered"
    # Everyone who opens the account sees it.
    page = client.get(reverse("admin:accounts_account_change", args=[account.pk])).content.decode()
    assert "Alert:" in page and "Do not shut off without the supervisor" in page and "holds any shut-off" in page
    # A clerk cannot lift it; a supervisor ends it on purpose, and the order may then issue.
    change = reverse("admin:accounts_accountalert_change", args=[alert.pk])
    client.post(change, {"ends_on": "2026-05-05"})
    alert.refresh_from_db()
    assert alert.ends_on is None
    client.force_login(staff("sam", "Supervisor"))
    assert client.post(change, {"ends_on": "2026-05-05"}).status_code == 302
    term("shutoff", number, date_="2026-05-06")
    assert TerminationCase.objects.get(number=number).status == "ordered"


def test_the_crew_reads_the_alerts_on_the_day_sheet(mineola, client):
    account, _ = delinquent_account(occupant=False)
    number = terminated_case(account, occupant=False)
    term("shutoff", number, date_="2026-05-05")
    AccountAlert.objects.create(account=account, kind="dog", note="large dog in the yard", starts_on=date(2026, 1, 1))
    AccountAlert.objects.create(account=account, kind="medical", starts_on=date(2026, 5, 1),
                                ends_on=date(2026, 5, 30))
    (stop,) = day_sheet(on=date(2026, 5, 6))
    assert "Dog on the premises (large dog in the yard)" in stop.alerts
    assert any("Medical certificate" in words for words in stop.held)  # the carry-out is held too
    client.force_login(staff("fred", "Field crew"))
    sheet = client.get(reverse("admin:fieldwork_fieldorder_day"), {"on": "2026-05-06"}).content.decode()
    assert "Account alerts:" in sheet and "large dog in the yard" in sheet
    # A certificate that has run out holds nothing.
    (later,) = day_sheet(on=date(2026, 6, 1))
    assert not any("Medical certificate" in words for words in later.held)


def test_an_alert_of_another_kind_needs_its_note():
    from accounts.alerts import alert_problems

    problems = alert_problems(kind="other", note="", starts_on=date(2026, 5, 1), ends_on=date(2026, 4, 1))
    assert {(p.field, p.message) for p in problems} == {("note", "say what the alert is"),
                                                        ("ends_on", "2026-04-01 is before it starts (2026-05-01)")}
