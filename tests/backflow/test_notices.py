"""Compliance notices: each preset's windows, service methods and the Old Westbury shortening; the Lansing rule of
a test every 4 months for 12 months after a defective certification; the annual summary."""

import csv
import io
from datetime import date

import pytest

from backflow.models import ComplianceNotice

from .steps import bf, bf_json, refused, village

pytestmark = pytest.mark.django_db


def last_notice() -> ComplianceNotice:
    return ComplianceNotice.objects.order_by("-id").first()


@pytest.mark.citation("§ 169-33")
def test_washingtonville_upgrade_notice_gives_120_days_and_goes_by_certified_mail(tmp_path):
    village(tmp_path, "washingtonville")
    assert "served by certified mail (§ 169-33)" in refused("notice", "1-0001", "--kind", "install", "--served-on",
                                                            "2026-03-02", "--method", "personal", date_="2026-03-02")
    out = bf("notice", "1-0001", "--kind", "install", "--served-on", "2026-03-02", "--article-number",
             "7019 0001 0002", date_="2026-03-02")
    assert "deadline 2026-06-30 (§ 169-33)" in out  # 120 days after service
    assert last_notice().method == "certified_mail"


@pytest.mark.citation("§ 141-10")
def test_lansing_certification_30_days_from_the_date_of_the_notice_and_15_after_a_deficiency(tmp_path):
    village(tmp_path, "lansing")
    bf("notice", "1-0001", "--kind", "certification", "--served-on", "2026-01-01", "--largest-pipe", "2",
       "--method", "certified_mail", "--received-on", "2026-01-09", date_="2026-01-10")
    assert last_notice().deadline == date(2026, 1, 31)  # from the notice's date, not its receipt
    bf("notice", "1-0001", "--kind", "deficiency", "--served-on", "2026-02-10", date_="2026-02-10")
    assert last_notice().deadline == date(2026, 2, 25)


@pytest.mark.citation("§ 141-10")
def test_lansing_tests_every_four_months_after_a_defective_certification(tmp_path):
    village(tmp_path, "lansing")
    bf("device", "1-0001", "--type", "RPZ", "--serial", "RP-4", "--size", "2", "--installed-on", "2025-03-01",
       date_="2026-01-06")
    bf("tester", "NY-9", "--name", "Lee Tester", "--expires", "2027-12-31", date_="2026-01-06")
    assert "next test due 2027-03-02" in bf("test", "RP-4", "--tested-on", "2026-03-02", "--tester", "NY-9",
                                            "--result", "pass", date_="2026-03-02")
    bf("notice", "1-0001", "--kind", "deficiency", "--served-on", "2026-03-10", date_="2026-03-10")
    due = {d["serial"]: d["due_on"] for d in bf_json("due", "--within", "400", date_="2026-03-11")}
    assert due["RP-4"] == "2026-07-10"  # 4 months after the defective certification


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_violation_counts_seven_days_from_receipt_and_may_be_shortened(tmp_path):
    village(tmp_path, "old_westbury")
    assert "personal" in refused("notice", "1-0001", "--kind", "violation", "--served-on", "2026-03-02", "--method",
                                 "certified_mail", date_="2026-03-02")
    bf("notice", "1-0001", "--kind", "violation", "--served-on", "2026-03-02", "--method", "registered_mail",
       "--received-on", "2026-03-04", date_="2026-03-05")
    notice = last_notice()
    assert notice.deadline == date(2026, 3, 11)
    assert "the exigent circumstances" in refused("shorten", str(notice.pk), "--to", "2026-03-07", "--by",
                                                  "Superintendent", "--reason", " ", date_="2026-03-05")
    bf("shorten", str(notice.pk), "--to", "2026-03-07", "--by", "Superintendent of the Water Department",
       "--reason", "boiler chemicals found on the potable line", date_="2026-03-05")
    notice.refresh_from_db()
    assert (notice.deadline, notice.shortened_by) == (date(2026, 3, 7), "Superintendent of the Water Department")


def test_the_annual_summary_lists_every_device_with_its_tests(tmp_path):
    village(tmp_path, "mineola")
    bf("require", "1-0001", "--condition", "cross_connection", "--condition", "hazardous", date_="2026-01-05")
    bf("device", "1-0001", "--type", "RPZ", "--serial", "RP-1", "--size", "2", "--installed-on", "2025-06-01",
       date_="2026-01-06")
    bf("tester", "NY-1", "--name", "Ann Tester", "--expires", "2027-01-01", date_="2026-01-06")
    bf("test", "RP-1", "--tested-on", "2026-05-20", "--tester", "NY-1", "--result", "pass", date_="2026-05-20")
    rows = list(csv.DictReader(io.StringIO(bf("summary", "--year", "2026", date_="2026-11-30"))))
    assert [(r["serial"], r["hazard_allowed"], r["tests_in_year"], r["last_result"], r["next_due"]) for r in rows] == [
        ("RP-1", "AG RPZ AVB PVB", "1", "pass", "2027-05-20")]
    out = tmp_path / "summary.pdf"
    bf("summary", "--year", "2026", "--format", "pdf", "--out", str(out), date_="2026-11-30")
    assert out.read_bytes().startswith(b"%PDF")


def test_a_notice_with_an_unknown_account_and_an_impossible_date_names_both_and_saves_nothing(tmp_path):
    village(tmp_path, "lansing")
    message = refused("notice", "NOPE", "--kind", "certification", "--served-on", "2026-13-01",
                      "--largest-pipe", "two", date_="2026-03-02")
    assert "account_no: no account 'NOPE'" in message
    assert "--served-on: '2026-13-01' is not a date" in message
    assert "--largest-pipe: 'two' is not a size in inches" in message
    assert not ComplianceNotice.objects.exists()


@pytest.mark.citation("§ 141-4 C")
def test_a_test_submitted_online_is_reviewed_through_the_workflow_with_the_actor(tmp_path):
    """A device test's review changes its status through core.workflow.transition: a status-change row with the
    reviewer, and a test already reviewed cannot be reviewed again."""
    from datetime import date

    from django.contrib.auth import get_user_model

    from backflow.models import Device, DeviceTest, Tester
    from backflow.services.compliance import test_record, test_review
    from core.workflow import TransitionRefused, status_history

    village(tmp_path, "lansing")
    bf("device", "1-0001", "--type", "RPZ", "--serial", "RP-9", "--size", "2", "--installed-on", "2025-06-01",
       date_="2026-01-05")
    bf("tester", "NY-9", "--name", "Pat Tester", "--expires", "2027-12-31", date_="2026-01-05")
    clerk = get_user_model().objects.create_user("clerk9", password="x", is_staff=True)
    test = test_record(device=Device.objects.get(serial="RP-9"), tester=Tester.objects.get(certification_no="NY-9"),
                       tested_on=date(2026, 2, 1), result="pass", actor=None, as_of=date(2026, 2, 1), online=True)
    assert test.status == DeviceTest.Status.SUBMITTED
    test_review(test=test, accept=True, actor=clerk, as_of=date(2026, 2, 2))
    test.refresh_from_db()
    assert (test.status, test.reviewed_by, test.reviewed_on) == ("accepted", clerk, date(2026, 2, 2))
    [change] = status_history(test)
    assert (change.from_status, change.to_status, change.actor) == ("submitted", "accepted", clerk)
    with pytest.raises(TransitionRefused, match="accepted is final"):
        test_review(test=test, accept=False, actor=clerk, as_of=date(2026, 2, 3), note="wrong gauge")
