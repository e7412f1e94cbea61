"""The ``owrs`` rate structure: Mineola's schedule written as OWRS bills the docs/ordinances.md worked examples to
the cent, through the rating path and through billing runs; RateParser's cases through an imported file."""

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from billing.models import Bill, RateSchedule
from billing.ordinance import rate_structure_for
from billing.owrs.convert import export_text
from billing.rate_tables import schedule_summary, schedule_tables
from billing.rating import EarlierBill, ProRata, RatingError, RatingInput
from billing.services.rate_import import activate_import, prepare_import
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "owrs"


def _import_mineola_as_owrs(on: date) -> RateSchedule:
    original = RateSchedule.objects.get()
    return activate_import(prepare_import(export_text(original), effective_on=on))


@pytest.fixture
def both(mineola):
    """(the preset's sample schedule, the same schedule exported as OWRS and imported a year later)."""
    original = RateSchedule.objects.get()
    return rate_structure_for(original.rules), rate_structure_for(_import_mineola_as_owrs(date(2025, 6, 1)).rules)


def charged(rated):
    """The lines that charge something: the OWRS classes also show the allowance's tier at $0.00."""
    return [line.amount for line in rated.lines if line.amount]


@pytest.mark.citation("§ 45.28 A(1)")
def test_semiannual_worked_example_through_owrs(both):
    original, imported = both
    bill = RatingInput(frequency="semiannual", category="one_two_family", gallons=62500)
    rated = imported.rate(bill)
    assert rated.total == Decimal("186.13") == original.rate(bill).total
    assert charged(rated) == [Decimal("45.00"), Decimal("93.00"), Decimal("48.13")] == charged(original.rate(bill))
    assert [(line.kind, line.citation) for line in rated.lines] == [
        ("minimum", "§ 45.28 A(1), A(2)(a)"), ("consumption", "§ 45.28 A(1)"), ("consumption", "§ 45.28 A(1)"),
        ("consumption", "§ 45.28 A(1)")]
    assert rated.lines[3].description == "Tier 3 (from 50,001 gal): 12,500 gal at $3.85 per 1,000 gal"
    assert (rated.schedule_gallons, rated.includes_annual_minimum) == (62500, True)


@pytest.mark.citation("§ 45.29 C")
def test_monthly_sequence_through_owrs(both):
    original, imported = both
    for rates in (original, imported):
        earlier = []
        totals = []
        for gallons in (90000, 60000, 40000):
            charged_already, ytd = rates.year_so_far(earlier, frequency="monthly")
            rated = rates.rate(RatingInput(frequency="monthly", category="other", gallons=gallons, meter_size="2",
                                           annual_minimum_charged=charged_already, year_to_date_gallons=ytd))
            totals.append(rated.total)
            earlier.append(EarlierBill("monthly", rated.includes_annual_minimum, rated.schedule_gallons))
        # March: the $480.00 annual minimum (125,000 gal); April: 150,000 − 125,000 = 25,000 × 3.85/1000 = 96.25;
        # May: 40,000 × 3.85/1000 = 154.00.
        assert totals == [Decimal("480.00"), Decimal("96.25"), Decimal("154.00")]


@pytest.mark.citation("§ 45.28 E")
def test_nonprofit_month_through_owrs(both):
    original, imported = both
    bill = RatingInput(frequency="monthly", category="nonprofit", gallons=2_000_000, meter_size="4")
    rated = imported.rate(bill)
    # 2,000,000 × 0.90/1000 = 1,800.00, above the $500.00 monthly minimum.
    assert [(line.kind, line.amount, line.citation) for line in rated.lines] == [
        ("nonprofit", Decimal("1800.00"), "§ 45.28 E")]
    assert (rated.schedule_gallons, rated.includes_annual_minimum) == (0, False)
    assert rated == original.rate(bill)


@pytest.mark.citation("§ 45.28 C(1)")
def test_sprinkler_charges_through_owrs(both):
    original, imported = both
    first = RatingInput(frequency="semiannual", category="other", gallons=0, sprinkler_supply_inches="2",
                        first_bill_of_year=True)
    assert [(line.kind, line.amount) for line in imported.rate(first).lines if line.kind == "sprinkler"] == [
        ("sprinkler", Decimal("100.00"))]
    assert imported.rate(first).total == Decimal("160.00") == original.rate(first).total
    later = RatingInput(frequency="semiannual", category="other", gallons=0, sprinkler_supply_inches="2")
    assert imported.rate(later).total == Decimal("60.00")
    five = RatingInput(frequency="semiannual", category="other", gallons=0, sprinkler_supply_inches="5",
                       first_bill_of_year=True)
    assert imported.rate(five).total == Decimal("310.00") == original.rate(five).total
    unknown = RatingInput(frequency="semiannual", category="other", gallons=0, sprinkler_supply_inches="1",
                          first_bill_of_year=True)
    with pytest.raises(RatingError) as from_owrs:
        imported.rate(unknown)
    with pytest.raises(RatingError) as from_preset:
        original.rate(unknown)
    assert str(from_owrs.value) == str(from_preset.value)
    assert 'no sprinkler charge for a 1" supply pipe' in str(from_owrs.value)


def test_a_monthly_size_the_schedule_does_not_list_is_refused(both):
    _, imported = both
    with pytest.raises(RatingError, match=r'annual_minimum has no value for meter_size 5/8"'):
        imported.rate(RatingInput(frequency="monthly", category="other", gallons=10, meter_size="5/8"))


def test_a_final_bills_part_period_is_refused(both):
    _, imported = both
    with pytest.raises(RatingError, match="states no rule for part of a billing period"):
        imported.rate(RatingInput(frequency="semiannual", category="other", gallons=10,
                                  pro_rata=ProRata(100, 181)))


def test_year_so_far_counts_bills_of_the_same_frequency(both):
    _, imported = both
    earlier = [EarlierBill("semiannual", True, 40000), EarlierBill("monthly", True, 90000),
               EarlierBill("monthly", True, 60000)]
    assert imported.year_so_far(earlier, frequency="monthly") == (True, 150000)
    assert imported.year_so_far(earlier, frequency="semiannual") == (True, 40000)
    assert imported.year_so_far(earlier, frequency="quarterly") == (False, 0)


def _bills(account):
    return [([line.amount.amount for line in bill.lines.all() if line.amount.amount], bill.total.amount)
            for bill in Bill.objects.filter(account=account).order_by("bill_date")]


@pytest.mark.citation("§ 45.28 A(1)")
def test_semiannual_run_under_the_imported_schedule_bills_what_the_preset_did(mineola):
    # The same account's use a year apart: 2025 under the preset's schedule, 2026 under its OWRS import.
    before, meter_before = account_with_meter(book=1, start=date(2024, 7, 10))
    read(meter_before, date(2025, 1, 12), 1_062_500)
    run("run_billing", "--date", "2025-02-01")
    schedule = _import_mineola_as_owrs(date(2025, 6, 1))
    after, meter_after = account_with_meter(book=1, start=date(2025, 7, 10))
    read(meter_after, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    expected = [([Decimal("45.00"), Decimal("93.00"), Decimal("48.13")], Decimal("186.13"))]
    assert _bills(before) == expected == _bills(after)
    assert Bill.objects.get(account=after).rate_schedule == schedule


@pytest.mark.citation("§ 45.29 C")
def test_monthly_run_under_the_imported_schedule_bills_what_the_preset_did(mineola):
    before, meter_before = account_with_meter(book=3, category="other", size="2", start=date(2025, 1, 30), value=0)
    for on, value in ((date(2025, 2, 27), 90000), (date(2025, 3, 30), 150000), (date(2025, 4, 29), 190000)):
        read(meter_before, on, value)
    for day in ("2025-03-01", "2025-04-01", "2025-05-01"):
        run("run_billing", "--date", day)
    _import_mineola_as_owrs(date(2025, 6, 1))
    after, meter_after = account_with_meter(book=3, category="other", size="2", start=date(2026, 1, 30), value=0)
    for on, value in ((date(2026, 2, 27), 90000), (date(2026, 3, 30), 150000), (date(2026, 4, 29), 190000)):
        read(meter_after, on, value)
    for day in ("2026-03-01", "2026-04-01", "2026-05-01"):
        run("run_billing", "--date", day)
    expected = [([Decimal("480.00")], Decimal("480.00")), ([Decimal("96.25")], Decimal("96.25")),
                ([Decimal("154.00")], Decimal("154.00"))]
    assert _bills(before) == expected
    assert _bills(after) == expected
    assert list(Bill.objects.filter(account=after).order_by("bill_date").values_list(
        "includes_annual_minimum", "schedule_gallons")) == [(True, 90000), (True, 60000), (True, 40000)]


def _rateparser(on=date(2026, 7, 1)):
    return activate_import(prepare_import((FIXTURES / "rateparser.owrs").read_text(), effective_on=on))


def test_rateparser_commercial_3_inch_388_ccf(mineola):
    rates = rate_structure_for(_rateparser().rules)
    # 388 ccf = 290,244.176 gal; whole gallons cannot give 388 ccf exactly. 290,244 gal is 387.99976… ccf:
    # 4.07 × 387.99976… = 1,579.159… → 1,579.16, as 4.07 × 388 = 1,579.16 gives; the line shows 388.00 ccf.
    # 33.00 + 1,579.16 + 2 × 10 (the sewer's budget tier) = 1,632.16.
    rated = rates.rate(RatingInput(frequency="monthly", category="other", gallons=290_244, meter_size="3",
                                   facts={"water_type": "POTABLE"}))
    assert [(line.kind, line.amount) for line in rated.lines] == [
        ("consumption", Decimal("1579.16")), ("service", Decimal("33.00")), ("sewer", Decimal("20.00")),
        ("sewer", Decimal("0.00"))]
    assert rated.lines[0].quantity == Decimal("388.00") and rated.lines[0].rate == Decimal("4.07")
    assert rated.total == Decimal("1632.16")
    assert {line.citation for line in rated.lines} == {"Resolution 2016-4"}


def test_rateparser_commercial_without_water_type_is_refused(mineola):
    rates = rate_structure_for(_rateparser().rules)
    with pytest.raises(RatingError, match="the account carries no water_type"):
        rates.rate(RatingInput(frequency="monthly", category="other", gallons=290_244, meter_size="3"))


def test_budget_class_needs_the_household_size(mineola):
    from tests.factories import AccountFactory

    AccountFactory(category="one_two_family", rate_fields={"cust_class": "RESIDENTIAL_BUDGET", "hhsize": 4})
    AccountFactory(category="one_two_family", rate_fields={"cust_class": "RESIDENTIAL_BUDGET"})
    AccountFactory(category="one_two_family")  # billed by RESIDENTIAL_SINGLE, which reads no account field
    prepared = prepare_import((FIXTURES / "rateparser.owrs").read_text(), effective_on=date(2026, 7, 1))
    assert prepared.needs == {"COMMERCIAL": ["water_type"], "RESIDENTIAL_SINGLE": [], "RESIDENTIAL_BUDGET": ["hhsize"]}
    assert prepared.accounts_missing == {"water_type": 0, "hhsize": 1}
    assert "1 account billed by a class that reads hhsize does not carry it" in " ".join(prepared.notes)
    rates = rate_structure_for(activate_import(prepared).rules)
    without = RatingInput(frequency="semiannual", category="one_two_family", gallons=15000, meter_size="5/8",
                          facts={"cust_class": "RESIDENTIAL_BUDGET"})
    with pytest.raises(RatingError, match="the account carries no hhsize, which customer class RESIDENTIAL_BUDGET"):
        rates.rate(without)
    # indoor = 4 × 60 × 30 / 748 = 9.6256… ccf: tiers start at 0, 10 and 13 ccf (100% and 125%, rounded up).
    # 15,000 gal = 20.0520… ccf: 9 ccf × 2.00 = 18.00, 3 × 3.00 = 9.00, 8.0520… × 5.00 = 40.26; + 11.00 = 78.26.
    rated = rates.rate(RatingInput(frequency="semiannual", category="one_two_family", gallons=15000, meter_size="5/8",
                                   facts={"cust_class": "RESIDENTIAL_BUDGET", "hhsize": 4}))
    assert [line.amount for line in rated.lines] == [Decimal("11.00"), Decimal("18.00"), Decimal("9.00"),
                                                     Decimal("40.26")]
    assert rated.total == Decimal("78.26")


def test_a_category_no_class_maps_is_refused(mineola):
    rules = dict(_rateparser().rules, class_map={"COMMERCIAL": "other"})
    with pytest.raises(RatingError, match="no customer class for category 'nonprofit' billed semiannual"):
        rate_structure_for(rules).rate(RatingInput(frequency="semiannual", category="nonprofit", gallons=10,
                                                   meter_size="5/8"))


def test_rate_tables_lay_out_an_owrs_schedule(mineola):
    rules = _rateparser().rules
    tables = schedule_tables(rules)
    single = next(t for t in tables if t.title == "Customer class RESIDENTIAL_SINGLE")
    tiers = next(row for row in single.rows if row[0].startswith("Tiers"))
    assert tiers[1] == "from 0 ccf: $2.87; from 15 ccf: $4.29; from 21 ccf: $6.44; from 26 ccf: $10.07"
    commercial = next(t for t in tables if t.title == "Customer class COMMERCIAL")
    assert ["service_charge", 'by meter_size: 5/8": 11; 1": 22; 3": 33', "Resolution 2016-4"] in commercial.rows
    mapping = next(t for t in tables if t.title == "Which class bills which accounts")
    assert mapping.rows == [["COMMERCIAL", "other, nonprofit"], ["RESIDENTIAL_SINGLE", "one_two_family"],
                            ["RESIDENTIAL_BUDGET", "accounts whose rate fields name it (cust_class)"]]
    assert schedule_summary(rules) == ("OWRS: COMMERCIAL bills other, nonprofit; RESIDENTIAL_SINGLE bills "
                                       "one_two_family; RESIDENTIAL_BUDGET (accounts naming it)")


def test_rate_tables_of_mineola_as_owrs_show_gallon_tiers_and_its_own_rules(mineola):
    tables = schedule_tables(_import_mineola_as_owrs(date(2026, 7, 1)).rules)
    family = next(t for t in tables if t.title == "Customer class ONE_TWO_FAMILY")
    tiers = next(row for row in family.rows if row[0].startswith("Tiers"))
    assert tiers[1] == ("from 0 gal: $0.00 per 1,000 gal; from 20,001 gal: $3.10 per 1,000 gal; "
                        "from 50,001 gal: $3.85 per 1,000 gal")
    titles = [t.title for t in tables]
    assert "Nonprofit organizations: large monthly use" in titles
    assert "Sprinkler service: annual charge by supply pipe" in titles
