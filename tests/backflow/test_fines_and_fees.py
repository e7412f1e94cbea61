"""Fines and fees on the water bill: Lansing § 141-11 B's worked example through the commands, Washingtonville's
daily fine after notice (§ 169-37), Old Westbury's test fee on the November bill only."""

from datetime import date
from decimal import Decimal as D

import pytest

from backflow.models import ComplianceNotice, NoticeCharge
from backflow.services.compliance import nightly_tests_due
from billing.models import Bill, PendingCharge
from core.errors import ApplicationError

from .steps import bf, bf_json, bill, refused, village

pytestmark = pytest.mark.django_db


def fine_lines(bill_date: str) -> list[tuple]:
    found = Bill.objects.get(account__account_no="1-0001", bill_date=date.fromisoformat(bill_date))
    return [(line.kind, line.citation, line.amount.amount) for line in found.lines.filter(kind__in=["fine", "fee"])]


@pytest.mark.citation("§ 141-11 B")
def test_lansing_worked_example_through_the_commands(tmp_path):
    """Notice 2026-01-01, largest pipe 2", certification still missing on 2026-07-15: days 181–195 (Jul 1–15) are
    15 days beyond the 180th → 15 × $25.00 × 2 = $750.00."""
    village(tmp_path, "lansing")
    bf("notice", "1-0001", "--kind", "certification", "--served-on", "2026-01-01", "--largest-pipe", "2",
       date_="2026-01-01")
    quote = bf_json("fine", "1-0001", date_="2026-07-15")
    assert quote["amount"] == "750.00" and quote["as_of"] == "2026-07-15" and quote["account_no"] == "1-0001"
    [line] = quote["lines"]
    assert {k: line[k] for k in ("days", "per_day", "inches", "amount", "citation")} == {
        "days": 15, "per_day": "25.00", "inches": "2", "amount": "750.00", "citation": "§ 141-11 B"}
    assert bf_json("fine", "1-0001", date_="2026-06-29")["amount"] == "0.00"  # day 179
    assert bf_json("fine", "1-0001", date_="2026-07-01")["amount"] == "50.00"  # day 181: 1 × $25 × 2
    bf("fine", "1-0001", "--post", date_="2026-07-15")  # the maximum, proposed and accepted
    bf("fine", "1-0001", "--post", date_="2026-07-15")  # again: nothing more
    charge = PendingCharge.objects.get(code="backflow_fine")
    assert charge.amount.amount == D("750.00") and charge.kind == "fine" and charge.citation == "§ 141-11 B"
    assert "15 days × $25.00 × 2 in = $750.00" in charge.description
    bill("2026-02-01", "2026-05-01", "2026-08-01", "2026-11-01")
    assert fine_lines("2026-08-01") == [("fine", "§ 141-11 B", D("750.00"))]
    assert fine_lines("2026-05-01") == [] and fine_lines("2026-11-01") == []


@pytest.mark.citation("§ 141-11 B")
def test_lansing_fine_posted_again_charges_only_the_new_days(tmp_path):
    village(tmp_path, "lansing")
    bf("notice", "1-0001", "--kind", "certification", "--served-on", "2026-01-01", "--largest-pipe", "1 1/2",
       date_="2026-01-01")
    bf("fine", "1-0001", "--post", "--amount", "375.00", date_="2026-07-10")  # 10 days × 25 × 1.5 = 375.00
    bf("fine", "1-0001", "--post", "--amount", "150.00", date_="2026-07-14")  # 4 more days = 150.00
    assert sorted(c.charge.amount.amount for c in NoticeCharge.objects.all()) == [D("150.00"), D("375.00")]
    assert bf_json("fine", "1-0001", date_="2026-07-14")["amount"] == "525.00"


@pytest.mark.citation("§ 141-11 B")
def test_a_certification_notice_without_the_pipe_is_refused(tmp_path):
    village(tmp_path, "lansing")
    message = refused("notice", "1-0001", "--kind", "certification", "--served-on", "2026-01-01", date_="2026-01-01")
    assert "largest pipe" in message and "§ 141-11 B" in message


@pytest.mark.citation("§ 169-37")
def test_washingtonville_daily_fine_after_notice(tmp_path):
    village(tmp_path, "washingtonville")
    assert "at most $250.00 (§ 169-37)" in refused("notice", "1-0001", "--kind", "violation", "--served-on",
                                                   "2026-03-01", "--per-day", "300", date_="2026-03-01")
    bf("notice", "1-0001", "--kind", "violation", "--served-on", "2026-03-01", "--per-day", "100",
       date_="2026-03-01")
    assert bf_json("fine", "1-0001", date_="2026-03-11")["amount"] == "1000.00"  # Mar 2–11
    bf("fine", "1-0001", "--post", date_="2026-03-11")
    bf("fine", "1-0001", "--post", date_="2026-03-15")
    assert [c.charge.amount.amount for c in NoticeCharge.objects.order_by("last_day")] == [D("1000.00"), D("400.00")]


def department_test(*, violation_served="2026-03-01", tested_on="2026-03-09", received_on=None) -> str:
    """Old Westbury: a violation notice served personally (received the same day: the owner's 7 days end a week
    later), no hearing asked for and no cure, then the Department's agents test the device. Returns the notice."""
    bf("device", "1-0001", "--type", "RPZ", "--serial", "OW-1", "--size", "2", "--installed-on", "2025-06-01",
       date_="2026-01-05")
    bf("tester", "NY-DEPT", "--name", "Village Water Department", "--expires", "2027-12-31", date_="2026-01-05")
    out = bf("notice", "1-0001", "--kind", "violation", "--served-on", violation_served,
             *(("--method", "registered_mail", "--received-on", received_on) if received_on else ()),
             date_=received_on or violation_served)
    bf("test", "OW-1", "--tested-on", tested_on, "--tester", "NY-DEPT", "--result", "pass", "--by-department",
       date_=tested_on)
    return out.split()[1]


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_test_fee_reaches_the_november_bill_and_no_other(tmp_path):
    village(tmp_path, "old_westbury")
    department_test()
    bf("notice", "1-0001", "--kind", "demand", "--device", "OW-1", "--served-on", "2026-03-10", date_="2026-03-10")
    assert nightly_tests_due(as_of=date(2026, 4, 9))["fees_charged"] == 0  # day 30 after the demand
    assert nightly_tests_due(as_of=date(2026, 4, 10))["fees_charged"] == 1
    assert nightly_tests_due(as_of=date(2026, 4, 11))["fees_charged"] == 0  # once
    bill("2026-05-01", "2026-08-01", "2026-11-01")
    assert fine_lines("2026-05-01") == [] and fine_lines("2026-08-01") == []
    assert fine_lines("2026-11-01") == [("fee", "backflow enforcement B(3)", D("250.00"))]


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_fee_paid_within_30_days_is_not_billed(tmp_path):
    village(tmp_path, "old_westbury")
    department_test()
    out = bf("notice", "1-0001", "--kind", "demand", "--device", "OW-1", "--served-on", "2026-03-10",
             date_="2026-03-10")
    notice_id = out.split()[1]
    bf("cured", notice_id, "--on", "2026-03-30", date_="2026-03-30")
    assert nightly_tests_due(as_of=date(2026, 5, 1))["fees_charged"] == 0
    assert not PendingCharge.objects.exists()


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_test_fee_only_for_a_test_the_department_performed_after_the_seven_days(tmp_path):
    """Backflow enforcement B(3): the Department may enter and test, for a fee of $250, only when the owner
    neither asked for a hearing nor cured within 7 days of receipt; one fee per test performed. Otherwise the
    demand is refused, naming the section."""
    village(tmp_path, "old_westbury")
    # No test at all.
    message = refused("notice", "1-0001", "--kind", "demand", "--served-on", "2026-03-10", date_="2026-03-10")
    assert "a demand is for a test the Department's agents performed" in message
    assert "(backflow enforcement B(3))" in message
    # A test inside the owner's 7 days (served 2026-03-01, received by mail 2026-03-04: the days end 2026-03-11).
    department_test(tested_on="2026-03-10", received_on="2026-03-04")
    message = refused("notice", "1-0001", "--kind", "demand", "--device", "OW-1", "--served-on", "2026-03-12",
                      date_="2026-03-12")
    assert "came within the owner's 7 days, which end Mar 11, 2026" in message
    assert not ComplianceNotice.objects.filter(kind="demand").exists()


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_no_test_fee_after_a_timely_hearing_request_or_a_cure(tmp_path):
    village(tmp_path, "old_westbury")
    violation = department_test(tested_on="2026-03-20")
    bf("hearing-requested", violation, "--on", "2026-03-05", date_="2026-03-05")
    message = refused("notice", "1-0001", "--kind", "demand", "--device", "OW-1", "--served-on", "2026-03-21",
                      date_="2026-03-21")
    assert "asked for a hearing on Mar 5, 2026, within the 7 days" in message and "B(3)" in message
    assert ComplianceNotice.objects.get(pk=violation).status == "hearing_requested"
    bf("cured", violation, "--on", "2026-03-15", date_="2026-03-15")
    message = refused("notice", "1-0001", "--kind", "demand", "--device", "OW-1", "--served-on", "2026-03-21",
                      date_="2026-03-21")
    assert "cured the violation on Mar 15, 2026, before the test" in message


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_one_fee_per_test_never_per_demand(tmp_path):
    village(tmp_path, "old_westbury")
    department_test()
    bf("notice", "1-0001", "--kind", "demand", "--device", "OW-1", "--served-on", "2026-03-10", date_="2026-03-10")
    message = refused("notice", "1-0001", "--kind", "demand", "--device", "OW-1", "--served-on", "2026-03-20",
                      date_="2026-03-20")
    assert "already demanded: one fee per test performed, never one per demand" in message
    # A test by a tester the owner hired is no ground for the fee.
    bf("tester", "NY-2", "--name", "Hired Tester", "--expires", "2027-12-31", date_="2026-01-05")
    bf("test", "OW-1", "--tested-on", "2026-04-01", "--tester", "NY-2", "--result", "pass", date_="2026-04-01")
    from accounts.models import Account
    from backflow.models import DeviceTest
    from backflow.services.compliance import notice_serve
    hired = DeviceTest.objects.get(tester__certification_no="NY-2")
    with pytest.raises(ApplicationError, match="not performed by the Department's agents"):
        notice_serve(account=Account.objects.get(account_no="1-0001"), kind="demand", served_on=date(2026, 4, 2),
                     actor=None, test=hired, as_of=date(2026, 4, 2), render=False)
    assert ComplianceNotice.objects.filter(kind="demand").count() == 1


@pytest.mark.citation("§ 169-33")
@pytest.mark.citation("§ 169-37")
def test_washingtonville_no_fine_inside_the_120_days_to_install(tmp_path):
    """§ 169-33: a preexisting system is upgraded within 120 days after notice; § 169-37 fines only for days the
    violation continues after notice. Served 2026-01-02 by certified mail: the 120 days end 2026-05-02; at $100.00
    a day the fine runs from 2026-05-03: on 2026-05-12, 10 days = $1,000.00, and nothing before."""
    village(tmp_path, "washingtonville")
    bf("notice", "1-0001", "--kind", "install", "--method", "certified_mail", "--served-on", "2026-01-02",
       "--per-day", "100", date_="2026-01-02")
    assert bf_json("fine", "1-0001", date_="2026-05-02")["amount"] == "0.00"
    assert bf_json("fine", "1-0001", date_="2026-05-03")["amount"] == "100.00"
    quote = bf_json("fine", "1-0001", date_="2026-05-12")
    assert quote["amount"] == "1000.00" and quote["lines"][0]["days"] == 10


@pytest.mark.citation("§ 141-11 B")
def test_lansing_the_clerk_enters_the_fine_up_to_the_maximum(tmp_path):
    """§ 141-11 B "shall not exceed": the worked example's $750.00 is the maximum, proposed (``--post`` alone
    accepts it); the clerk may enter a lower fine, never a higher one."""
    village(tmp_path, "lansing")
    bf("notice", "1-0001", "--kind", "certification", "--served-on", "2026-01-01", "--largest-pipe", "2",
       date_="2026-01-01")
    assert "$750.01 is more than the maximum of $750.00 § 141-11 B allows" in refused(
        "fine", "1-0001", "--post", "--amount", "750.01", date_="2026-07-15")
    bf("fine", "1-0001", "--post", "--amount", "500.00", date_="2026-07-15")
    charge = PendingCharge.objects.get(code="backflow_fine")
    assert charge.amount.amount == D("500.00") and charge.kind == "fine"
    assert "$500.00 as entered, at most 15 days × $25.00 × 2 in = $750.00" in charge.description
    bf("fine", "1-0001", "--post", "--amount", "500.00", date_="2026-07-15")  # again: nothing more
    assert PendingCharge.objects.filter(code="backflow_fine").count() == 1


@pytest.mark.citation("§ 169-37")
def test_washingtonville_takes_no_entered_amount_the_daily_fine_is_on_the_notice(tmp_path):
    village(tmp_path, "washingtonville")
    bf("notice", "1-0001", "--kind", "violation", "--served-on", "2026-03-01", "--per-day", "100", date_="2026-03-01")
    assert "no amount is entered here" in refused("fine", "1-0001", "--post", "--amount", "5.00", date_="2026-03-11")


@pytest.mark.citation("§ 169-37")
def test_a_cure_date_cannot_move_once_fines_were_charged_to_it(tmp_path):
    """Notices change status through the workflow, with the actor and a status-change row; a fine is charged up
    to the day before the cure, so the cure date is fixed once a fine is charged to it."""
    from core.workflow import status_history
    village(tmp_path, "washingtonville")
    out = bf("notice", "1-0001", "--kind", "violation", "--served-on", "2026-03-01", "--per-day", "100",
             date_="2026-03-01")
    notice_id = out.split()[1]
    bf("fine", "1-0001", "--post", date_="2026-03-11")  # Mar 2–11 charged
    assert "fines are already charged through Mar 11, 2026" in refused("cured", notice_id, "--on", "2026-03-08",
                                                                    date_="2026-03-20")
    bf("cured", notice_id, "--on", "2026-03-15", date_="2026-03-20")
    bf("fine", "1-0001", "--post", date_="2026-03-20")  # Mar 12–14 charged: the cure date's fine
    assert "cannot move: fines were charged to it" in refused("cured", notice_id, "--on", "2026-03-18",
                                                             date_="2026-03-20")
    notice = ComplianceNotice.objects.get(pk=notice_id)
    assert (notice.status, notice.cured_on) == ("cured", date(2026, 3, 15))
    assert [(h.from_status, h.to_status) for h in status_history(notice)] == [("open", "cured")]
