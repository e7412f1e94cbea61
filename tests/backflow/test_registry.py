"""Devices, testers and tests: a device of a type the premises' rule does not allow is flagged; a lapsed tester
is refused; the next test falls due by the preset's frequency; the nightly job sends each reminder once."""

from datetime import date

import pytest

from backflow.models import ComplianceNotice, Device
from backflow.services.compliance import nightly_tests_due

from .steps import bf, bf_json, refused, village

pytestmark = pytest.mark.django_db


@pytest.mark.citation("§ 45.45 H")
def test_a_device_the_rule_does_not_allow_is_flagged(tmp_path):
    village(tmp_path, "mineola")
    answer = bf_json("require", "1-0001", "--condition", "cross_connection", "--condition", "back_pressure",
                     "--condition", "hazardous", date_="2026-01-05")
    assert answer == {"required": True, "allowed": ["AG", "RPZ"], "citation": "§ 45.45 H"}
    out = bf("device", "1-0001", "--type", "DCA", "--serial", "DC-1", "--size", "2", "--installed-on", "2026-01-06",
             date_="2026-01-06")
    assert "FLAGGED" in out and Device.objects.get(serial="DC-1").flagged
    bf("device", "1-0001", "--type", "RPZ", "--serial", "RP-1", "--size", "2", "--installed-on", "2026-01-06",
       date_="2026-01-06")
    assert not Device.objects.get(serial="RP-1").flagged


@pytest.mark.citation("§ 141-4 C")
def test_a_lapsed_tester_is_refused_and_a_test_moves_the_due_date_a_year(tmp_path):
    village(tmp_path, "lansing")
    bf("device", "1-0001", "--type", "RPZ", "--serial", "RP-9", "--size", "2", "--installed-on", "2025-03-01",
       date_="2026-01-06")
    bf("tester", "NY-123", "--name", "Pat Tester", "--expires", "2026-03-31", date_="2026-01-06")
    message = refused("test", "RP-9", "--tested-on", "2026-04-02", "--tester", "NY-123", "--result", "pass",
                      date_="2026-04-02")
    assert "expired on 2026-03-31" in message
    out = bf("test", "RP-9", "--tested-on", "2026-03-02", "--tester", "NY-123", "--result", "pass", "--cv1", "5.2",
             "--cv2", "2.1", "--rv", "3.0", date_="2026-03-02")
    assert "next test due 2027-03-02" in out


def test_the_night_sends_each_reminder_once(tmp_path):
    village(tmp_path, "lansing")
    bf("device", "1-0001", "--type", "RPZ", "--serial", "RP-7", "--size", "2", "--installed-on", "2025-05-01",
       date_="2026-01-06")
    assert nightly_tests_due(as_of=date(2026, 3, 31))["test_due_notices"] == 0
    assert nightly_tests_due(as_of=date(2026, 4, 1))["test_due_notices"] == 1  # due 2026-05-01, 30 days ahead
    assert nightly_tests_due(as_of=date(2026, 4, 2))["test_due_notices"] == 0
    assert nightly_tests_due(as_of=date(2026, 5, 2))["overdue_notices"] == 1
    assert nightly_tests_due(as_of=date(2026, 5, 3))["overdue_notices"] == 0
    assert ComplianceNotice.objects.filter(kind__in=["test_due", "overdue"]).count() == 2
    due = bf_json("due", date_="2026-05-03")
    assert [(d["serial"], d["due_on"], d["overdue"]) for d in due] == [("RP-7", "2026-05-01", True)]


def test_tester_save_corrects_a_certification_number_and_links_a_login_to_one_tester(tmp_path):
    from django.contrib.auth import get_user_model

    from backflow.models import Tester as BackflowTester
    from backflow.services.compliance import tester_save
    from core.errors import ApplicationError

    village(tmp_path, "lansing")
    login = get_user_model().objects.create_user("pat", password="x")
    pat = tester_save(tester=None, certification_no="NY-1", name="Pat Tester",
                      certification_expires=date(2027, 3, 31), user=login)
    corrected = tester_save(tester=pat, certification_no="NY-11", name="Pat Tester",
                            certification_expires=date(2027, 3, 31), user=login)
    assert corrected.pk == pat.pk and BackflowTester.objects.get().certification_no == "NY-11"
    with pytest.raises(ApplicationError) as refused:
        tester_save(tester=None, certification_no="NY-2", name="Sam Other", certification_expires=date(2027, 3, 31),
                    user=login)
    assert [(e.field, e.message) for e in refused.value.errors] == [
        ("user", "the login pat is already linked to Pat Tester (NY-11)")]
    assert BackflowTester.objects.count() == 1
