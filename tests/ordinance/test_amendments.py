"""An amended chapter installed with the day it takes effect: a bill, a late-charge day, a notice and a test each
take the rule in force on their own date, before and after the amendment (Mineola's preset, amended by hand)."""

import io
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from backflow.policy import device_test_frequency
from backflow.schedule import next_test_due
from billing.models import Bill, LedgerEntry
from ordinance.files import PRESET_DIR
from ordinance.models import InstalledPreset, Section
from termination.policy import termination_policy
from tests.billing.steps import account_with_meter, read, run
from tests.termination.steps import refused, term

pytestmark = pytest.mark.django_db
D = Decimal
MINEOLA = (PRESET_DIR / "mineola.toml").read_text()


def amend(tmp_path, old: str, new: str, *, effective: str | None = None, in_file: str | None = None,
          rebill: bool = False) -> str:
    """Install Mineola's file with ``old`` replaced by ``new``, from ``effective`` (or the file's ``effective_on``)."""
    assert old in MINEOLA
    text = MINEOLA.replace(old, new)
    if in_file:
        text = f"effective_on = {in_file}\n" + text
    path = tmp_path / "mineola-amended.toml"
    path.write_text(text)
    out = io.StringIO()
    call_command("setup_utility", "--file", str(path), *(["--effective", effective] if effective else []),
                 *(["--rebill"] if rebill else []), "--date", "2026-01-05", stdout=out)
    return out.getvalue()


def late_charges(account) -> list[tuple[date, Decimal]]:
    return [(e.posted_on, e.amount.amount) for e in
            LedgerEntry.objects.filter(account=account, kind="penalty").order_by("posted_on")]


@pytest.mark.citation("§ 45.29 E")
def test_an_amended_monthly_penalty_charges_each_month_by_the_rate_of_its_day(mineola, tmp_path):
    out = amend(tmp_path, 'monthly_percent = "1"', 'monthly_percent = "2"', effective="2026-05-01")
    assert "[penalty] in force from 2026-05-01" in out
    assert Section.objects.filter(table="penalty").count() == 2
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")  # $186.13, due 2026-03-01
    run("assess_penalties", "--date", "2026-06-10")
    # 5% on the day after the due date, 1% a month while the old rule stands, 2% from its day on.
    assert late_charges(account) == [(date(2026, 3, 2), D("9.31")), (date(2026, 4, 2), D("1.86")),
                                     (date(2026, 5, 2), D("3.72")), (date(2026, 6, 2), D("3.72"))]


def test_night_by_night_across_the_amendment_the_late_charges_are_those_of_one_catch_up_run(mineola, tmp_path):
    amend(tmp_path, 'monthly_percent = "1"', 'monthly_percent = "2"', effective="2026-05-01")
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    for day in ("2026-03-02", "2026-04-02", "2026-04-30", "2026-05-01", "2026-05-02", "2026-06-02", "2026-06-10"):
        run("assess_penalties", "--date", day)
    # The same as the one catch-up run of the test above.
    assert late_charges(account) == [(date(2026, 3, 2), D("9.31")), (date(2026, 4, 2), D("1.86")),
                                     (date(2026, 5, 2), D("3.72")), (date(2026, 6, 2), D("3.72"))]


@pytest.mark.citation("§ 45.32")
def test_an_amended_hearing_period_applies_to_notices_served_from_its_day(mineola, tmp_path):
    amend(tmp_path, "notice_min_days_before_hearing = 15", "notice_min_days_before_hearing = 20",
          effective="2026-04-10")
    assert termination_policy(date(2026, 4, 9)).notice_min_days == 15
    assert termination_policy(date(2026, 4, 10)).notice_min_days == 20
    before, after = (account_with_meter(book=1, account_no=no)[0] for no in ("1-0001", "1-0002"))
    for account in (before, after):
        read(account.installations.get().meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    # Served before the amendment: 15 days' notice of the hearing is enough.
    number = term("open", before.account_no, "--grounds", "nonpayment", date_="2026-03-20")
    term("serve", number, "--to", "owner", "--method", "personal", "--served-on", "2026-04-01",
         "--hearing-on", "2026-04-16", date_="2026-04-01")
    # Served after it: 15 days is refused naming the amended period; 20 days is served.
    number = term("open", after.account_no, "--grounds", "nonpayment", date_="2026-04-11")
    message = refused("serve", number, "--to", "owner", "--method", "personal", "--served-on", "2026-04-12",
                      "--hearing-on", "2026-04-27", date_="2026-04-12")
    assert "2026-05-02" in message or "May 2, 2026" in message, message
    term("serve", number, "--to", "owner", "--method", "personal", "--served-on", "2026-04-12",
         "--hearing-on", "2026-05-02", date_="2026-04-12")


def test_an_amended_test_frequency_applies_to_tests_from_its_day(mineola, tmp_path):
    amend(tmp_path, "months = 12\ncitation = \"policy (Chapter 45 sets no backflow test frequency)\"",
          "months = 24\ncitation = \"policy (Chapter 45 sets no backflow test frequency)\"", in_file="2026-07-01")
    assert InstalledPreset.objects.order_by("-version").first().effective_on == date(2026, 7, 1)
    tested = date(2026, 3, 15)
    assert next_test_due(device_test_frequency(tested), tested_on=tested)[0] == date(2027, 3, 15)
    tested = date(2026, 8, 1)
    assert next_test_due(device_test_frequency(tested), tested_on=tested)[0] == date(2028, 8, 1)


@pytest.mark.citation("§ 45.28 A(1)")
def test_an_amended_rate_bills_from_its_own_effective_date(mineola, tmp_path):
    schedule = MINEOLA[MINEOLA.index("\n[[rate_schedule]]\n"):MINEOLA.index("\n[[fee]]\n")]
    amended = schedule.replace("effective_on = 2024-06-01", "effective_on = 2026-06-01").replace(
        'amount = "45.00"', 'amount = "47.00"')
    path = tmp_path / "mineola-rates.toml"
    path.write_text(MINEOLA + "\n" + amended)
    call_command("setup_utility", "--file", str(path), "--date", "2026-01-05", stdout=io.StringIO())
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    read(meter, date(2026, 7, 10), 1_082_500)
    run("run_billing", "--date", "2026-08-01")
    assert Bill.objects.get(account=account, bill_date=date(2026, 2, 1)).total.amount == D("186.13")
    assert Bill.objects.get(account=account, bill_date=date(2026, 8, 1)).total.amount == D("47.00")


def test_an_undated_change_to_rules_bills_rest_on_is_refused_and_changes_nothing(mineola, tmp_path):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    with pytest.raises(CommandError, match=r"\[penalty\] in force from 1900-01-01 already bear on the past "
                                           r"\(1 bill issued\).*--effective"):
        amend(tmp_path, 'monthly_percent = "1"', 'monthly_percent = "2"')
    assert Section.objects.get(table="penalty").params["monthly_percent"] == "1"


def test_the_nightly_job_across_the_amendment_charges_what_one_catch_up_run_does(mineola, tmp_path, monkeypatch):
    from billing.penalties import shortcuts

    monkeypatch.setattr(shortcuts, "RECORDED_MARGIN", timedelta(0))  # all within seconds: before is before
    amend(tmp_path, 'monthly_percent = "1"', 'monthly_percent = "2"', effective="2026-05-01")
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    for day in ("2026-03-02", "2026-04-02", "2026-05-02", "2026-06-02"):
        call_command("nightly", "--date", day, stdout=io.StringIO())
    assert late_charges(account) == [(date(2026, 3, 2), D("9.31")), (date(2026, 4, 2), D("1.86")),
                                     (date(2026, 5, 2), D("3.72")), (date(2026, 6, 2), D("3.72"))]


def test_a_late_charge_re_priced_by_an_amendment_installed_after_it_states_the_rate_that_now_makes_it(
        mineola, tmp_path):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")  # $186.13, due 2026-03-01
    run("assess_penalties", "--date", "2026-05-10")  # 5% Mar 2, 1% Apr 2 and May 2 under the old rule
    # Installed after May 2's charge was posted under the rule it replaces: refused, naming it, unless --rebill.
    with pytest.raises(CommandError, match=r"takes effect from 2026-05-01, before what is already posted.*1 late "
                                           r"charge posted on or after 2026-05-01 under the \[penalty\] it amends"):
        amend(tmp_path, 'monthly_percent = "1"', 'monthly_percent = "2"', effective="2026-05-01")
    assert Section.objects.filter(table="penalty").count() == 1
    amend(tmp_path, 'monthly_percent = "1"', 'monthly_percent = "2"', effective="2026-05-01", rebill=True)
    run("assess_penalties", "--date", "2026-05-11")
    correction = LedgerEntry.objects.get(account=account, kind="penalty_correction")
    # May 2's $1.86 (1% of $186.13) becomes $3.72 (2%): the line says the 2% that makes it, not only the old 1%.
    assert (correction.posted_on, correction.amount.amount) == (date(2026, 5, 2), D("1.86"))
    assert "corrected to $3.72 (Late payment penalty: 2% (month 3))" in correction.description


def _rates_from(day: str, minimum: str) -> str:
    schedule = MINEOLA[MINEOLA.index("\n[[rate_schedule]]\n"):MINEOLA.index("\n[[fee]]\n")]
    return MINEOLA + "\n" + schedule.replace("effective_on = 2024-06-01", f"effective_on = {day}").replace(
        'amount = "45.00"', f'amount = "{minimum}"')


@pytest.mark.citation("§ 45.28 A(1)")
def test_a_rate_amendment_installed_after_its_bills_is_refused_then_rebilled_once_a_supervisor_approves(
        mineola, tmp_path, client):
    from billing.models import AmendmentRebill, RateSchedule
    from billing.services.amendments import amendment_rebill_decide
    from core.errors import ApplicationError
    from tests.factories import clerk_user, staff_user

    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    issued = Bill.objects.get(account=account)
    assert issued.total.amount == D("186.13")  # $45.00 + $93.00 + $48.13 (docs/ordinances.md, Mineola)
    path = tmp_path / "mineola-rates.toml"
    path.write_text(_rates_from("2026-01-01", "47.00"))
    with pytest.raises(CommandError, match=rf"1 bill dated on or after 2026-01-01 rated by an earlier rate "
                                           rf"schedule \(bill {issued.number}\).*Nothing was installed.*--rebill"):
        call_command("setup_utility", "--file", str(path), "--date", "2026-02-10", stdout=io.StringIO())
    assert RateSchedule.objects.count() == 1 and not AmendmentRebill.objects.exists()

    clerk = clerk_user()
    out = io.StringIO()
    call_command("setup_utility", "--file", str(path), "--rebill", "--user", "clerk", "--date", "2026-02-10",
                 stdout=out)
    assert "1 bill to void and bill again, waiting for a supervisor" in out.getvalue()
    request = AmendmentRebill.objects.get()
    assert (request.status, request.requested_by, list(request.bills.all())) == ("pending", clerk, [issued])
    # The clerk who installed it neither approves nor sees the action; nothing is rebilled before a supervisor.
    with pytest.raises(ApplicationError, match="only a supervisor or an approver approves"):
        amendment_rebill_decide(request=request, approve=True, note="", actor=clerk, as_of=date(2026, 2, 10))
    client.force_login(clerk)
    page = client.get("/admin/billing/amendmentrebill/")
    assert page.status_code == 200 and "rate schedule in force from 2026-01-01" in page.content.decode()
    assert 'value="approve"' not in page.content.decode()
    issued.refresh_from_db()
    assert issued.status != Bill.Status.VOID

    supervisor = staff_user("supervisor", "Supervisor")
    client.force_login(supervisor)
    page = client.post("/admin/billing/amendmentrebill/", {"action": "approve", "_selected_action": [request.pk],
                                                          "apply": "1", "note": ""})
    assert page.status_code == 302
    request.refresh_from_db()
    issued.refresh_from_db()
    assert (request.status, request.decided_by, issued.status) == ("approved", supervisor, Bill.Status.VOID)
    again = Bill.objects.get(account=account, bill_date=date(2026, 2, 1), status=Bill.Status.ISSUED)
    # The amended minimum: $47.00 + 30,000 gal at $3.10 ($93.00) + 12,500 gal at $3.85 ($48.13) = $188.13.
    assert again.total.amount == D("188.13") and again.rate_schedule.effective_on == date(2026, 1, 1)
    assert f"Bill {issued.number} is void and bill {again.number} replaces it: $188.13 (was $186.13)" in \
        request.outcome
