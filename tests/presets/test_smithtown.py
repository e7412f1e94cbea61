"""The Town of Smithtown's two water districts (docs/ordinances/smithtown.md), the dollars worked by hand on the
preset's sample rates: each district billed by its own calendar and rates, charged the chapter's 10% once on the 61st
day after the bill date, booked in its own fund."""

from datetime import date
from decimal import Decimal as D

import pytest

from billing.models import Bill, LedgerEntry
from billing.services.districts import premises_district_set
from billing.services.penalties import penalties_assess_due
from office.journal import journal_entries
from ordinance.install import preset_install
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db


@pytest.fixture
def town(db):
    preset_install(code="smithtown", mark_demo_site=True)


def resident(district: str, *, read_on: date, gallons: int):
    account, meter = account_with_meter(start=date(2025, 12, 31), value=0)
    premises_district_set(premises=account.premises, district=district, effective_on=date(2020, 1, 1))
    read(meter, read_on, gallons)
    return account


@pytest.mark.citation("Ch. 312")
def test_each_district_bills_on_its_own_dates_and_rates_and_charges_ten_percent_on_day_61(town):
    smithtown = resident("smithtown", read_on=date(2026, 3, 31), gallons=40_000)
    st_james = resident("st_james", read_on=date(2026, 4, 30), gallons=40_000)
    run("run_billing", "--date", "2026-04-01")
    run("run_billing", "--date", "2026-05-01")
    s, j = Bill.objects.get(account=smithtown), Bill.objects.get(account=st_james)
    assert (s.bill_date, s.due_date, s.total.amount, s.district_id) == (
        date(2026, 4, 1), date(2026, 4, 15), D("62.00"), "smithtown")
    assert (j.bill_date, j.due_date, j.total.amount, j.district_id) == (
        date(2026, 5, 1), date(2026, 5, 15), D("78.20"), "st_james")
    penalties_assess_due(as_of=date(2026, 7, 1))
    assert list(LedgerEntry.objects.filter(kind="penalty").order_by("posted_on").values_list(
        "account_id", "posted_on", "amount")) == [
        (smithtown.pk, date(2026, 6, 1), D("6.20")), (st_james.pk, date(2026, 7, 1), D("7.82"))]
    funds = {entry.district: {line.account.number for line in entry.lines}
             for day in (date(2026, 4, 1), date(2026, 5, 1)) for entry in journal_entries(start=day, end=day)}
    assert funds == {"smithtown": {"SW1350", "SW12140"}, "st_james": {"SW2350", "SW22140"}}


def test_the_start_page_proposes_every_districts_dates_and_the_proof_adds_up_by_district(town):
    from billing.runs.preview import billing_run_proof, billing_run_register, next_billing_dates

    resident("smithtown", read_on=date(2026, 3, 31), gallons=40_000)
    resident("st_james", read_on=date(2026, 4, 30), gallons=40_000)
    # Smithtown bills in Jan/Apr/Jul/Oct, St. James in Feb/May/Aug/Nov: both are proposed.
    assert [d.on for d in next_billing_dates(after=date(2026, 3, 15), count=3)] == [
        date(2026, 4, 1), date(2026, 5, 1), date(2026, 7, 1)]
    proof = billing_run_proof(run_on=date(2026, 4, 1), today=date(2026, 4, 1))
    assert [(d.district, d.bills, d.total) for d in proof.register.districts] == [
        ("Smithtown Water District", 1, D("62.00"))]
    run("run_billing", "--date", "2026-05-01")
    from billing.models import BillingRun

    register = billing_run_register(run=BillingRun.objects.get(run_on=date(2026, 5, 1)))
    assert [(d.district, d.bills, d.total) for d in register.districts] == [("St. James Water District", 1,
                                                                             D("78.20"))]
