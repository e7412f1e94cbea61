"""The preset's meter rules (units, the 10-year inspection) and a failed meter's estimate, worked by hand."""

import io
from datetime import date

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from meters.admin import _unit_allowed
from meters.models import Meter, Reading
from meters.rules import MeterPolicy, estimate_from_history, unit_problem, years_after
from meters.selectors import meters_due_inspection
from meters.services import reading_estimate_record
from tests.factories import AccountFactory, InstallationFactory, MeterFactory

ACCOUNTS_HEADER = ("account_no,book,category,owner_name,owner_address,occupant_name,service_address,sbl,"
                   "meter_serial,meter_size,meter_unit,initial_reading,initial_read_date\n")


@pytest.mark.citation("§ 210-30 A")
def test_a_cubic_foot_meter_is_refused_where_the_preset_allows_gallon_registers_only(old_westbury_fees, tmp_path):
    assert unit_problem(MeterPolicy(), "cf") is None  # no rule: any unit
    with pytest.raises(ValidationError, match=r"cubic feet is refused: meters here register in gallons \(§ 210-30 A\)"):
        _unit_allowed("cf")
    _unit_allowed("gal")
    path = tmp_path / "accounts.csv"
    path.write_text(ACCOUNTS_HEADER + '7-0001,1,other,Ann Owner,"1 Store Hill Rd, Old Westbury NY",,'
                    "1 Store Hill Rd,,CF-1,5/8,cf,0,2026-01-05\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="rejected with 1 error"):
        call_command("import_accounts", str(path), "--date", "2026-01-06", stdout=io.StringIO(), stderr=err)
    assert "meter_unit" in err.getvalue() and "§ 210-30 A" in err.getvalue(), err.getvalue()
    assert not Meter.objects.exists()


def test_the_units_rule_is_the_presets_not_a_village_name(washingtonville_fees):
    _unit_allowed("cf")  # Washingtonville's preset sets no units rule


@pytest.mark.citation("§ 210-30 A")
def test_meters_installed_ten_years_or_more_are_due_inspection(old_westbury_fees):
    due = InstallationFactory(installed_on=date(2016, 3, 1))
    InstallationFactory(installed_on=date(2016, 3, 2))  # 10 years on 2026-03-02: not yet
    InstallationFactory(installed_on=date(2010, 1, 1), removed_on=date(2020, 1, 1))  # out of service
    found = meters_due_inspection(on=date(2026, 3, 1))
    assert [(i.installation.pk, i.due_on, i.citation) for i in found] == [(due.pk, date(2026, 3, 1), "§ 210-30 A")]
    out = io.StringIO()
    call_command("meters_due_inspection", "--date", "2026-03-01", stdout=out)
    assert "1 meter(s) installed 10 years or more on 2026-03-01 (§ 210-30 A)" in out.getvalue()
    assert due.meter.serial in out.getvalue()
    assert years_after(date(2016, 2, 29), 10) == date(2026, 2, 28)


@pytest.mark.citation("§ 169-22")
def test_a_failed_meter_is_estimated_from_the_accounts_previous_consumption(washingtonville_fees):
    account = AccountFactory()
    meter = MeterFactory()
    InstallationFactory(meter=meter, account=account, installed_on=date(2025, 1, 10))
    for on, value in ((date(2025, 1, 10), 0), (date(2025, 4, 10), 18_000), (date(2025, 7, 10), 36_200),
                      (date(2025, 10, 10), 54_600), (date(2026, 1, 10), 72_750)):
        Reading.objects.create(meter=meter, read_on=on, value=value)
    estimated = reading_estimate_record(meter=meter, read_on=date(2026, 4, 10), as_of=date(2026, 4, 10), actor=None)
    # 72,750 gal in 365 days (199.3 gal/day); 90 days: 72,750 × 90 / 365 = 17,938.36 → 17,938 gal.
    assert estimated.value == 72_750 + 17_938
    assert estimated.read_type == Reading.ReadType.ESTIMATED and estimated.source == "estimate"
    assert estimated.note.startswith("Estimated (§ 169-22): 90 days at the account's average of 199.3 gal/day")
    assert "72,750 gal in 365 days from 2025-01-10 to 2026-01-10" in estimated.note


def test_an_estimate_needs_earlier_consumption():
    assert estimate_from_history(intervals=[], since=date(2026, 1, 1), until=date(2026, 2, 1), citation="") is None
