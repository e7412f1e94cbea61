"""Each preset's trigger for a nonpayment case, its service methods and its periods. Where the local law sets
no periods, Mineola's apply as office policy and every refusal says so ("policy (Mineola § 45.32)").

Every village bills one account on 2026-02-01 (30,000 gal read on 2026-01-14), left unpaid."""

from datetime import date
from decimal import Decimal

import pytest

from accounts.models import Account
from billing.services.charges import charge_add
from ordinance.models import Utility
from termination.models import TerminationCase
from termination.policy import Trigger
from tests.presets.quarterly import accounts, bill, cmd, install, payments, readings, statement

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
])
def test_each_presets_nonpayment_trigger(tmp_path, preset, first_day, citation):
    """Washingtonville § 169-26: unpaid 60 days after due, due = bill date + 30 → from bill date + 91 days
    (2026-05-03). South Farmingdale § 4.2: not paid within 60 days of the due date (= the bill date) → from
    2026-04-03."""
    billed(tmp_path, preset)
    day_before = date.fromisoformat(first_day).toordinal() - 1
    message = refused("open", "1-0001", "--grounds", "nonpayment", date_=date.fromordinal(day_before).isoformat())
    assert f"nothing delinquent on {date.fromordinal(day_before)} under {citation}" in message
    number = term("open", "1-0001", "--grounds", "nonpayment", date_=first_day)
    assert number.startswith("T-2026-")


@pytest.mark.parametrize(("preset", "chapter"), [
    pytest.param("lansing", "Chapter 141", marks=pytest.mark.citation("§ 141-5")),
    pytest.param("old_westbury", "Chapter 210", marks=pytest.mark.citation("backflow enforcement")),
])
def test_no_nonpayment_shut_off_where_the_chapter_grants_none(tmp_path, preset, chapter):
    """Lansing (only § 141-5, backflow) and Old Westbury (only a health hazard) grant no shut-off for
    nonpayment: a nonpayment case is refused with the reason and the remedy, the relevy; the delinquency list
    is empty and says why. The bill is long past due."""
    billed(tmp_path, preset)
    message = refused("open", "1-0001", "--grounds", "nonpayment", date_="2026-09-01")
    assert f"{chapter} grants no power to shut off water for nonpayment" in message
    assert "relevy" in message and "Village Law § 11-1118" in message
    assert "grants no power to shut off water for nonpayment" in refused("open-delinquent", date_="2026-09-01")
    out = term("delinquent", date_="2026-09-01")
    assert f"No account is listed: {chapter} grants no power" in out
    from reports.selectors import delinquency
    listed = delinquency(as_of=date(2026, 9, 1))
    assert listed.rows == [] and listed.why_empty.startswith(f"{chapter} grants no power")
    # A violation case (backflow, a health hazard) still opens.
    assert term("open", "1-0001", "--grounds", "violation", "--section", "§ 141-5" if preset == "lansing"
                else "backflow enforcement", date_="2026-09-01").startswith("T-2026-")


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
    number = term("open", "1-0001", "--grounds", "violation", "--section", "backflow enforcement", date_="2026-03-04")
    assert "use personal" in refused("serve", number, "--to", "owner", "--method", "certified_mail",
                                     "--served-on", "2026-03-05", "--hearing-on", "2026-03-25", date_="2026-03-05")
    term("serve", number, "--to", "owner", "--method", "suitable_age_and_mail", "--served-on", "2026-03-05",
         "--hearing-on", "2026-03-25", date_="2026-03-05")
    out = term("emergency", "1-0001", "--kind", "health_hazard", "--reason", "cross-connection to a boiler",
               date_="2026-03-06")
    assert "health_hazard" in out and "notwithstanding the foregoing" in out


D = Decimal
WASHINGTONVILLE = Trigger(after="bill_date", days=91, fine_days=11, covers=("water", "interest", "penalty"),
                          citation="§ 169-26")
FEB, DUE = date(2026, 2, 1), date(2026, 3, 3)


def eligible(unpaid: dict, fines: list, on: str):
    found = WASHINGTONVILLE.eligible(bill_date=FEB, due_date=DUE, unpaid={k: D(v) for k, v in unpaid.items()},
                                     fines=[(date.fromisoformat(day), D(amount)) for day, amount in fines],
                                     as_of=date.fromisoformat(on))
    return (str(found.amount), found.since.isoformat()) if found else None


@pytest.mark.citation("§ 169-26")
def test_a_shut_off_is_for_the_eligible_amount_only():
    """Washingtonville § 169-26, a bill of 2026-02-01: water $160.00, a § 169-23 fee $25.00 and a fine $100.00
    charged 2026-01-20 (imposed with the bill: eligible from 2026-02-12, the 11th day). Rents are eligible from
    bill date + 91 days (2026-05-03), with their interest and penalty; the fee never is, and rents not yet
    eligible never ride along with the fine."""
    unpaid = {"water": "160.00", "fee": "25.00", "fine": "100.00"}
    fines = [("2026-01-20", "100.00")]
    assert eligible(unpaid, fines, "2026-02-11") is None
    assert eligible(unpaid, fines, "2026-02-12") == ("100.00", "2026-02-12")  # the fine alone
    assert eligible(unpaid, fines, "2026-05-02") == ("100.00", "2026-02-12")
    # From 2026-05-03 the rents too, with interest of 2% × 3 months = $9.60; never the fee.
    assert eligible({**unpaid, "interest": "9.60"}, fines, "2026-05-03") == ("269.60", "2026-02-12")
    assert eligible({"water": "0.00", "fee": "25.00"}, [], "2026-09-01") is None  # a fee is not a ground
    # Two fines: what is unpaid of them is the newest (a payment pays a bill's fines as one category); the one
    # charged 2026-02-10 is eligible from 2026-02-21.
    two = [("2026-01-20", "60.00"), ("2026-02-10", "40.00")]
    assert eligible({"fine": "100.00"}, two, "2026-02-15") == ("60.00", "2026-02-12")
    assert eligible({"fine": "70.00"}, two, "2026-02-15") == ("30.00", "2026-02-12")
    assert eligible({"fine": "70.00"}, two, "2026-02-21") == ("70.00", "2026-02-12")


@pytest.mark.citation("§ 169-26")
def test_paying_the_case_amount_ends_the_ground_even_with_other_charges_left(tmp_path,
                                                                            django_capture_on_commit_callbacks):
    """The fine of $100.00 is the case (not the $160.00 of rents, not the $25.00 fee). The customer pays $100.00:
    the payment pays the fine, due before the bill's rents, and the case closes."""
    billed_with_fee_and_fine(tmp_path)
    assert "nothing delinquent on 2026-02-11" in refused("open", "1-0001", "--grounds", "nonpayment",
                                                         date_="2026-02-11")
    number = term("open", "1-0001", "--grounds", "nonpayment", date_="2026-02-12")
    case = TerminationCase.objects.get(number=number)
    assert case.amount_delinquent == D("100.00")
    assert [(b.amount, b.delinquent_from) for b in case.bills.all()] == [(D("100.00"), date(2026, 2, 12))]
    assert "fine $100.00 unpaid 10 days after it was imposed (§ 169-26)" in case.grounds_detail
    with django_capture_on_commit_callbacks(execute=True):
        payments(tmp_path, ["1-0001,100.00,2026-02-13,CHK-1"], on="2026-02-13")
    case.refresh_from_db()
    assert case.status == "paid"
    assert statement("1-0001", "2026-02-13")["balance"] == "185.00"  # the rents and the fee are still owed


def billed_with_fee_and_fine(tmp_path) -> None:
    install("washingtonville")
    accounts(tmp_path, ACCOUNT, on="2025-10-31")
    readings(tmp_path, READING, on="2026-01-15")
    account = Account.objects.get(account_no="1-0001")
    charge_add(account=account, code="vacancy_shut_off", as_of=date(2026, 1, 20), actor=None)
    charge_add(account=account, code="backflow_fine", as_of=date(2026, 1, 20), actor=None, amount=D("100.00"),
               kind="fine")
    bill("2026-02-01")
    (first,) = statement("1-0001", "2026-02-01")["bills"]
    assert first["total"] == "285.00"  # $35.00 + 20,000 gal × $6.25 = $160.00, the fee $25.00, the fine $100.00


@pytest.mark.citation("policy: a floor under shut-off lists")
def test_a_floor_under_the_shut_off_list(tmp_path):
    """Office policy: a case below the floor ($25.00 by default) is not proposed; the clerk lowers it."""
    billed_with_fee_and_fine(tmp_path)
    # The fine first (due Jan 30, ten days after it was imposed, before the bill's rents): $80.00 of it paid, $20.00
    # of it is eligible, and the fee is no ground.
    payments(tmp_path, ["1-0001,80.00,2026-02-05,CHK-1"], on="2026-02-05")
    assert "below the office's floor of $25.00" in refused("open", "1-0001", "--grounds", "nonpayment",
                                                           date_="2026-02-12")
    assert "0 accounts delinquent" in term("delinquent", date_="2026-02-12")
    Utility.objects.update(list_floor=D("10.00"))
    assert "1 accounts delinquent" in term("delinquent", date_="2026-02-12")
    number = term("open", "1-0001", "--grounds", "nonpayment", date_="2026-02-12")
    assert TerminationCase.objects.get(number=number).amount_delinquent == D("20.00")


@pytest.mark.citation("§ 169-26")
@pytest.mark.citation("policy: water rents before fees and fines")
def test_paying_the_water_rent_leaves_only_the_fee_which_grounds_no_shut_off(tmp_path):
    """The worked case of docs/ordinances.md (conventions): a $100.00 visitation fee charged in March goes on the
    May 1 bill beside $35.00 of water rent; $35.00 paid May 5 pays the water rent. On Sep 1 only the fee is
    unpaid: no interest (it runs on water rents) and no nonpayment case (§ 169-26 names water rents and fines)."""
    install("washingtonville")
    accounts(tmp_path, ACCOUNT, on="2025-10-31")
    readings(tmp_path, ["TR001,2026-04-14,1005000,actual"], on="2026-04-15")
    charge_add(account=Account.objects.get(account_no="1-0001"), code="visitation", as_of=date(2026, 3, 10),
               actor=None)
    bill("2026-05-01")
    (may,) = statement("1-0001", "2026-05-01")["bills"]
    assert may["total"] == "135.00"
    payments(tmp_path, ["1-0001,35.00,2026-05-05,CHK-1"], on="2026-05-05")
    cmd("assess_penalties", "--date", "2026-09-01", "--no-progress")
    september = statement("1-0001", "2026-09-01")
    assert september["balance"] == "100.00"
    assert [c for c in september["charges"] if c["kind"] in ("interest", "penalty")] == []
    assert "nothing delinquent on 2026-09-01" in refused("open", "1-0001", "--grounds", "nonpayment",
                                                         date_="2026-09-01")


@pytest.mark.citation("§ 169-26")
@pytest.mark.citation("§ 169-37")
@pytest.mark.citation("policy: oldest due first")
def test_paying_exactly_an_overdue_fine_stops_a_fine_grounded_shut_off(tmp_path):
    """The worked case of docs/ordinances.md (conventions, "oldest due first"): a $100.00 backflow fine imposed
    Mar 12 (due Mar 22, § 169-26 "within 10 days") is carried on the May 1 bill beside $35.00 of water rent due
    May 31; $100.00 paid May 13 pays the fine, so on May 14 nothing is delinquent (the rents may ground a case
    only from Jul 31)."""
    install("washingtonville")
    accounts(tmp_path, ACCOUNT, on="2025-10-31")
    readings(tmp_path, ["TR001,2026-04-14,1005000,actual"], on="2026-04-15")
    charge_add(account=Account.objects.get(account_no="1-0001"), code="backflow_fine", as_of=date(2026, 3, 12),
               actor=None, amount=D("100.00"), kind="fine")
    bill("2026-05-01")
    (may,) = statement("1-0001", "2026-05-01")["bills"]
    assert may["total"] == "135.00" and may["due_date"] == "2026-05-31"
    # Before the payment the fine is a ground: imposed Mar 12, on the customer's bill May 1, eligible May 12.
    assert "1 accounts delinquent" in term("delinquent", date_="2026-05-12")
    payments(tmp_path, ["1-0001,100.00,2026-05-13,CHK-1"], on="2026-05-13")
    (may,) = statement("1-0001", "2026-05-14")["bills"]
    assert statement("1-0001", "2026-05-14")["balance"] == "35.00"  # the water rent, not yet due
    assert "0 accounts delinquent" in term("delinquent", date_="2026-05-14")
    assert "nothing delinquent on 2026-05-14" in refused("open", "1-0001", "--grounds", "nonpayment",
                                                         date_="2026-05-14")
    # The rents ground a case from Jul 31 (91 days after the bill date), and only they.
    assert "nothing delinquent on 2026-07-30" in refused("open", "1-0001", "--grounds", "nonpayment",
                                                         date_="2026-07-30")
    number = term("open", "1-0001", "--grounds", "nonpayment", date_="2026-07-31")
    case = TerminationCase.objects.get(number=number)
    assert case.amount_delinquent >= D("35.00") and "fine" not in case.grounds_detail
