"""Fines and fees on the water bill: Lansing § 141-11 B's worked example through the commands, Washingtonville's
daily fine after notice (§ 169-37), Old Westbury's test fee on the November bill only."""

from datetime import date
from decimal import Decimal as D

import pytest

from backflow.models import NoticeCharge
from backflow.services.compliance import nightly_tests_due
from billing.models import Bill, PendingCharge

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
    bf("fine", "1-0001", "--post", date_="2026-07-15")
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
    bf("fine", "1-0001", "--post", date_="2026-07-10")  # 10 days × 25 × 1.5 = 375.00
    bf("fine", "1-0001", "--post", date_="2026-07-14")  # 4 more days = 150.00
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


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_test_fee_reaches_the_november_bill_and_no_other(tmp_path):
    village(tmp_path, "old_westbury")
    bf("notice", "1-0001", "--kind", "demand", "--served-on", "2026-03-10", date_="2026-03-10")
    assert nightly_tests_due(as_of=date(2026, 4, 9))["fees_charged"] == 0  # day 30 after the demand
    assert nightly_tests_due(as_of=date(2026, 4, 10))["fees_charged"] == 1
    assert nightly_tests_due(as_of=date(2026, 4, 11))["fees_charged"] == 0  # once
    bill("2026-05-01", "2026-08-01", "2026-11-01")
    assert fine_lines("2026-05-01") == [] and fine_lines("2026-08-01") == []
    assert fine_lines("2026-11-01") == [("fee", "backflow enforcement B(3)", D("250.00"))]


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_fee_paid_within_30_days_is_not_billed(tmp_path):
    village(tmp_path, "old_westbury")
    out = bf("notice", "1-0001", "--kind", "demand", "--served-on", "2026-03-10", date_="2026-03-10")
    notice_id = out.split()[1]
    bf("cured", notice_id, "--on", "2026-03-30", date_="2026-03-30")
    assert nightly_tests_due(as_of=date(2026, 5, 1))["fees_charged"] == 0
    assert not PendingCharge.objects.exists()
