"""A backflow tester in the portal: the tester page (certification, gauge, their own tests and what the village
office made of each) and a test submitted online, which waits for the clerk before it counts.

Pat Tester (NYS certification NY-4471) tests an RPZ installed at 12 Willis Avenue on 2025-03-01; its last
accepted test was on 2025-12-10, so it is next due on 2026-12-10. Today is held at 2026-12-01."""

import re
from datetime import date
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from backflow.models import DeviceTest
from backflow.models import Tester as BackflowTester
from backflow.services import compliance as svc
from core import clock
from tests.factories import AccountFactory, PremisesFactory

from .conftest import customer

pytestmark = pytest.mark.django_db

TODAY = date(2026, 12, 1)
HOME, SUBMIT = reverse("portal:tester_home"), reverse("portal:tester_submit")


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return client


def login_tester(email: str, certification_no: str, *, expires: date = date(2027, 6, 30), name: str = "Pat Tester",
                      gauge: date | None = date(2026, 1, 15)) -> BackflowTester:
    tester = svc.tester_register(certification_no=certification_no, name=name, certification_expires=expires,
                             gauge_calibrated_on=gauge, company="Nassau Backflow Co.")
    tester.user = customer(email)
    tester.save(update_fields=["user"])
    return tester


@pytest.fixture
def pat(mineola, monkeypatch):
    """Pat, signed in; the RPZ at 12 Willis Avenue, last accepted test 2025-12-10 by another tester."""
    monkeypatch.setattr(clock, "today", lambda: TODAY)
    account = AccountFactory(premises=PremisesFactory(service_address="12 Willis Avenue"))
    device = svc.device_register(account=account, type="RPZ", serial="RP-100", size="1 1/2",
                             installed_on=date(2025, 3, 1), actor=None)
    earlier = svc.tester_register(certification_no="NY-1000", name="Earl Earlier", certification_expires=date(2027, 1, 1))
    svc.test_record(device=device, tester=earlier, tested_on=date(2025, 12, 10), result="pass", actor=None,
                as_of=date(2025, 12, 10))
    tester = login_tester("pat@example.org", "NY-4471")
    return {"tester": tester, "device": device, "client": signed_in(tester.user)}


def send(client: Client, **fields):
    body = {"serial": "RP-100", "tested_on": "2026-11-30", "result": "pass", "check_valve_1_psid": "5.4",
            "check_valve_2_psid": "2.2", "relief_valve_opening_psid": "3.1", "repairs": ""}
    return client.post(SUBMIT, {**body, **fields})


def field_error(html: str, name: str) -> str:
    """The error shown beside a form field ("" when none)."""
    found = re.search(rf'<p class="field-error" id="id_{name}_error">(.*?)</p>', html, re.S)
    return found.group(1).strip() if found else ""


def page_errors(html: str) -> str:
    found = re.search(r'<div class="error-summary"[^>]*>(.*?)</div>', html, re.S)
    return found.group(1) if found else ""


def test_the_tester_page_shows_the_certification_the_gauge_and_each_test_with_its_status(pat):
    device, tester = pat["device"], pat["tester"]
    waiting = svc.test_record(device=device, tester=tester, tested_on=date(2026, 11, 30), result="pass", actor=tester.user,
                          as_of=TODAY, online=True)
    accepted = svc.test_record(device=device, tester=tester, tested_on=date(2026, 6, 2), result="fail", actor=tester.user,
                           as_of=TODAY, online=True)
    svc.test_review(test=accepted, accept=True, actor=None, as_of=date(2026, 6, 3))
    rejected = svc.test_record(device=device, tester=tester, tested_on=date(2026, 6, 1), result="pass", actor=tester.user,
                           as_of=TODAY, online=True)
    svc.test_review(test=rejected, accept=False, actor=None, as_of=date(2026, 6, 3),
                note="Gauge calibration is more than a year old; retest with a calibrated gauge.")
    response = pat["client"].get(HOME)
    assert response.status_code == 200
    text = response.content.decode()
    for expected in ("Pat Tester, Nassau Backflow Co.", "<dt>NYS certification number</dt><dd>NY-4471</dd>",
                     "<dt>Certification expires</dt><dd>Jun 30, 2027</dd>",
                     "<dt>Test gauge calibrated</dt><dd>Jan 15, 2026</dd>", f'href="{SUBMIT}"'):
        assert expected in text, expected
    assert "Your certification" not in text  # in force for seven months more: no warning
    rows = re.findall(r"<tr>\s*<th scope=\"row\">(.*?)</tr>", text, re.S)
    assert len(rows) == 3  # Pat's own, newest first; Earl's test of the same device is not Pat's
    assert "Nov 30, 2026" in rows[0] and "Submitted: awaiting review" in rows[0] and "12 Willis Avenue" in rows[0]
    assert "Jun 2, 2026" in rows[1] and "Fail" in rows[1] and ">Accepted<" in rows[1]
    assert "Jun 1, 2026" in rows[2] and ">Rejected<" in rows[2]
    assert "Gauge calibration is more than a year old; retest with a calibrated gauge." in rows[2]
    assert f'href="{reverse("portal:tester_test", args=[waiting.pk])}"' in rows[0]


def test_the_navigation_links_the_tester_page_for_testers_only(pat):
    assert f'<a href="{HOME}"' in pat["client"].get(reverse("portal:home")).content.decode()
    page = pat["client"].get(HOME).content.decode()
    assert f'<a href="{HOME}" aria-current="page">Backflow tester</a>' in page
    plain = signed_in(customer("carol@example.org")).get(reverse("portal:home")).content.decode()
    assert "Backflow tester" not in plain


@pytest.mark.parametrize(("expires", "warning"), [
    (date(2026, 11, 15), "Your NYS certification NY-4471 expired on Nov 15, 2026. A test done after that date is "
                         "refused"),
    (date(2026, 12, 20), "Your NYS certification NY-4471 expires on Dec 20, 2026, in 19 days. A test done after "
                         "that date is refused"),
    (date(2026, 12, 31), "expires on Dec 31, 2026, in 30 days."),
    (date(2026, 12, 1), "expires on Dec 1, 2026, today."),
])
def test_a_certification_lapsed_or_lapsing_within_30_days_is_warned(pat, expires, warning):
    BackflowTester.objects.filter(pk=pat["tester"].pk).update(certification_expires=expires)
    for url in (HOME, SUBMIT):
        text = pat["client"].get(url).content.decode()
        box = text[text.index('class="notice-box" role="alert"'):]
        assert warning in box[:box.index("</div>")], url


def test_no_warning_31_days_ahead(pat):
    BackflowTester.objects.filter(pk=pat["tester"].pk).update(certification_expires=date(2027, 1, 1))
    assert 'class="notice-box"' not in pat["client"].get(HOME).content.decode()


def test_a_login_that_is_no_testers_gets_a_plain_page_saying_whom_to_call(pat):
    client = signed_in(customer("carol@example.org"))
    for method, url in (("get", HOME), ("get", SUBMIT), ("post", SUBMIT),
                        ("get", reverse("portal:tester_test", args=[DeviceTest.objects.get().pk]))):
        response = getattr(client, method)(url, {"serial": "RP-100", "tested_on": "2026-11-30", "result": "pass"}
                                           if method == "post" else None)
        assert response.status_code == 403, (method, url)
        text = response.content.decode()
        assert "This login, carol@example.org, is not registered as a backflow tester with" in text
        assert "call the water office at" in text and "(516) 746-0750" in text
    assert DeviceTest.objects.count() == 1  # Earl's, from the fixture
    anonymous = Client().get(HOME)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("portal:login"))


def test_the_form_asks_for_each_part_of_the_test(pat):
    text = pat["client"].get(SUBMIT).content.decode()
    for label in ("Device serial number", "Date tested", "Pass", "Fail", "Check valve 1 (psid)", "Check valve 2 (psid)",
                  "Relief valve opened at (psid)", "Repairs made"):
        assert label in text, label
    assert 'type="date"' in text and 'max="2026-12-01"' in text
    assert f'<form method="post" action="{SUBMIT}"' in text and "csrfmiddlewaretoken" in text


def test_a_passing_test_submitted_online_waits_for_the_clerk(pat):
    device, tester = pat["device"], pat["tester"]
    response = send(pat["client"], repairs="  Replaced the relief valve disc.  ")
    test = DeviceTest.objects.get(tester=tester)
    assert response.status_code == 302 and response["Location"] == reverse("portal:tester_test", args=[test.pk])
    assert (test.device, test.tested_on, test.result, test.status, test.submitted_online) == (
        device, date(2026, 11, 30), "pass", "submitted", True)
    assert (test.check_valve_1_psid, test.check_valve_2_psid, test.relief_valve_opening_psid) == (
        Decimal("5.4"), Decimal("2.2"), Decimal("3.1"))
    assert test.repairs == "Replaced the relief valve disc." and test.reviewed_by is None and test.reviewed_on is None
    page = pat["client"].get(response["Location"]).content.decode()
    assert "Test received." in page and "The village office will review it" in page
    assert "Test of RPZ RP-100" in page and "12 Willis Avenue" in page and "Reduced-pressure zone assembly" in page
    assert "<dt>Check valve 1</dt><dd>5.4 psid</dd>" in page and "Replaced the relief valve disc." in page
    # Until the clerk accepts it, the device is still due a year after its last accepted test.
    assert svc.device_due(device, as_of=TODAY).due_on == date(2026, 12, 10)
    assert "Submitted: awaiting review" in pat["client"].get(HOME).content.decode()


def test_a_failing_test_without_readings_is_received_too(pat):
    response = send(pat["client"], result="fail", check_valve_1_psid="", check_valve_2_psid="",
                    relief_valve_opening_psid="")
    assert response.status_code == 302
    test = DeviceTest.objects.get(tester=pat["tester"])
    assert test.result == "fail" and test.check_valve_1_psid is None and test.status == "submitted"


def test_a_lapsed_tester_is_refused_with_the_certification_named(pat):
    BackflowTester.objects.filter(pk=pat["tester"].pk).update(certification_expires=date(2026, 10, 31))
    response = send(pat["client"], tested_on="2026-11-20")
    assert response.status_code == 400
    errors = page_errors(response.content.decode())
    assert "The NYS certification NY-4471 of Pat Tester expired on 2026-10-31, before the test on 2026-11-20" in errors
    assert not DeviceTest.objects.filter(tester=pat["tester"]).exists()
    # A test done before the certification lapsed is still received.
    assert send(pat["client"], tested_on="2026-10-30").status_code == 302


def test_an_unknown_serial_is_refused_on_the_serial_field(pat):
    response = send(pat["client"], serial="RP-999")
    assert response.status_code == 400
    assert field_error(response.content.decode(), "serial") == "No device with serial &#x27;RP-999&#x27;"
    assert not DeviceTest.objects.filter(tester=pat["tester"]).exists()


def test_a_date_in_the_future_is_refused_on_the_date_field(pat):
    response = send(pat["client"], tested_on="2026-12-02")
    assert response.status_code == 400
    assert field_error(response.content.decode(), "tested_on").startswith("2026-12-02 is after 2026-12-01")
    response = send(pat["client"], tested_on="2026-02-30")
    assert field_error(response.content.decode(), "tested_on") == "&#x27;2026-02-30&#x27; is not a date; use YYYY-MM-DD"
    assert not DeviceTest.objects.filter(tester=pat["tester"]).exists()


def test_a_reading_that_is_not_a_number_is_refused_on_its_field(pat):
    response = send(pat["client"], check_valve_1_psid="five", relief_valve_opening_psid="900")
    assert response.status_code == 400
    text = response.content.decode()
    assert field_error(text, "check_valve_1_psid") == "&#x27;five&#x27; is not a number of psid"
    assert field_error(text, "relief_valve_opening_psid") == "900 psid is not a reading (0 to 200)"
    assert field_error(text, "check_valve_2_psid") == ""
    assert 'value="five"' in text  # what was typed stays in the form
    assert not DeviceTest.objects.filter(tester=pat["tester"]).exists()


def test_missing_answers_are_asked_for(pat):
    response = pat["client"].post(SUBMIT, {})
    text = response.content.decode()
    assert response.status_code == 400
    assert field_error(text, "serial") == "Give the serial number of the device you tested."
    assert field_error(text, "tested_on") == "Give the date you tested the device."
    assert field_error(text, "result") == "Choose pass or fail."


def test_the_same_test_sent_twice_is_recorded_once(pat):
    assert send(pat["client"]).status_code == 302
    again = send(pat["client"])
    assert again.status_code == 400
    assert "is already recorded" in field_error(again.content.decode(), "tested_on")
    assert DeviceTest.objects.filter(tester=pat["tester"]).count() == 1


def test_another_testers_tests_are_not_shown(pat):
    other = login_tester("quinn@example.org", "NY-5000", name="Quinn Other")
    theirs = svc.test_record(device=pat["device"], tester=other, tested_on=date(2026, 11, 2), result="fail", actor=None,
                         as_of=TODAY, online=True, repairs="Quinn's repair note")
    mine = svc.test_record(device=pat["device"], tester=pat["tester"], tested_on=date(2026, 11, 3), result="pass",
                       actor=None, as_of=TODAY, online=True)
    text = pat["client"].get(HOME).content.decode()
    assert "Nov 3, 2026" in text and "Nov 2, 2026" not in text and "NY-5000" not in text
    assert pat["client"].get(reverse("portal:tester_test", args=[theirs.pk])).status_code == 404
    assert pat["client"].get(reverse("portal:tester_test", args=[mine.pk])).status_code == 200
    assert "Quinn's repair note" not in pat["client"].get(reverse("portal:tester_test", args=[mine.pk])).content.decode()


def test_the_submit_needs_a_csrf_token(pat):
    client = Client(enforce_csrf_checks=True)
    client.force_login(pat["tester"].user, backend="django.contrib.auth.backends.ModelBackend")
    assert send(client).status_code == 403
    assert pat["client"].put(SUBMIT).status_code == 405
    assert not DeviceTest.objects.filter(tester=pat["tester"]).exists()


def test_submissions_are_rate_limited(pat, monkeypatch):
    from portal import views

    monkeypatch.setattr(views, "TEST_SUBMIT_POSTS", 2)
    for _ in range(2):
        assert send(pat["client"], serial="NOPE").status_code == 400
    response = send(pat["client"])
    assert response.status_code == 429 and response["Retry-After"]
    assert "Too many tests sent in the last 10 minutes" in page_errors(response.content.decode())
    assert not DeviceTest.objects.filter(tester=pat["tester"]).exists()
