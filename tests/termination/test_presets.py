"""Each preset's trigger for a nonpayment case, its service methods and its periods. Where the local law sets
no periods, Mineola's apply as office policy and every refusal says so ("policy (Mineola § 45.32)").

Every village bills one account on 2026-02-01 (30,000 gal read on 2026-01-14), left unpaid."""

from datetime import date

import pytest

from termination.policy import Trigger
from tests.presets.quarterly import accounts, bill, install, readings

from .steps import refused, term

pytestmark = pytest.mark.django_db

ACCOUNT = ["1-0001,1,one_two_family,Owner One,\"1 Main St, Anytown, NY\",,1 Main St,1-1-1,"
           "TR001,5/8,gal,1000000,2025-10-15"]
READING = ["TR001,2026-01-14,1030000,actual"]


def billed(tmp_path, preset: str) -> None:
    install(preset)
    accounts(tmp_path, ACCOUNT, on="2025-10-31")
    readings(tmp_path, READING, on="2026-01-31")
    bill("2026-02-01")


@pytest.mark.parametrize(("preset", "first_day", "citation"), [
    pytest.param("washingtonville", "2026-05-03", "§ 169-26", marks=pytest.mark.citation("§ 169-26")),
    pytest.param("south_farmingdale", "2026-04-03", "§ 4.2", marks=pytest.mark.citation("§ 4.2")),
    pytest.param("lansing", "2026-03-04", "policy (no nonpayment rule in Chapter 141)",
                 marks=pytest.mark.citation("§ 141-5")),
    pytest.param("old_westbury", "2026-03-04", "policy (no nonpayment rule in Chapter 210)",
                 marks=pytest.mark.citation("backflow enforcement")),
])
def test_each_presets_nonpayment_trigger(tmp_path, preset, first_day, citation):
    """Washingtonville § 169-26: unpaid 60 days after due, due = bill date + 30 → from bill date + 91 days
    (2026-05-03). South Farmingdale § 4.2: not paid within 60 days of the due date (= the bill date) → from
    2026-04-03. Lansing and Old Westbury set no nonpayment rule: policy, the day after the due date (bill date
    + 30 days = 2026-03-03)."""
    billed(tmp_path, preset)
    day_before = date.fromisoformat(first_day).toordinal() - 1
    message = refused("open", "1-0001", "--grounds", "nonpayment", date_=date.fromordinal(day_before).isoformat())
    assert f"nothing delinquent on {date.fromordinal(day_before)} under {citation}" in message
    number = term("open", "1-0001", "--grounds", "nonpayment", date_=first_day)
    assert number.startswith("T-2026-")


@pytest.mark.citation("§ 169-26")
def test_washingtonville_policy_periods_are_labelled_as_policy(tmp_path):
    billed(tmp_path, "washingtonville")
    number = term("open", "1-0001", "--grounds", "nonpayment", date_="2026-05-03")
    message = refused("serve", number, "--to", "owner", "--method", "personal", "--served-on", "2026-05-04",
                      "--hearing-on", "2026-05-18", date_="2026-05-04")
    assert "policy (Mineola § 45.32) requires the notice to be served at least 15 days" in message
    assert "earliest lawful hearing date is 2026-05-19" in message


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_serves_by_its_own_methods_and_logs_a_health_hazard(tmp_path):
    billed(tmp_path, "old_westbury")
    number = term("open", "1-0001", "--grounds", "nonpayment", date_="2026-03-04")
    assert "use personal" in refused("serve", number, "--to", "owner", "--method", "certified_mail",
                                     "--served-on", "2026-03-05", "--hearing-on", "2026-03-25", date_="2026-03-05")
    term("serve", number, "--to", "owner", "--method", "suitable_age_and_mail", "--served-on", "2026-03-05",
         "--hearing-on", "2026-03-25", date_="2026-03-05")
    out = term("emergency", "1-0001", "--kind", "health_hazard", "--reason", "cross-connection to a boiler",
               date_="2026-03-06")
    assert "health_hazard" in out and "notwithstanding the foregoing" in out


@pytest.mark.citation("§ 169-26")
def test_a_fine_counts_ten_days_after_it_reaches_the_account():
    """Washingtonville § 169-26: 'a fine unpaid 10 days after imposed': delinquent from the 11th day."""
    trigger = Trigger(after="bill_date", days=91, fine_days=11, citation="§ 169-26")
    feb = date(2026, 2, 1)
    assert trigger.delinquent_from(bill_date=feb, due_date=date(2026, 3, 3)) == date(2026, 5, 3)
    assert trigger.delinquent_from(bill_date=feb, due_date=date(2026, 3, 3),
                                   fine_charged_on=date(2026, 1, 20)) == date(2026, 2, 12)
    assert trigger.delinquent_from(bill_date=feb, due_date=date(2026, 3, 3),
                                   fine_charged_on=date(2026, 2, 10)) == date(2026, 2, 21)
