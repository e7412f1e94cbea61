"""Rating against docs/ordinances.md, Mineola, with the dollars worked out by hand."""

import tomllib
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing.rating import EarlierBill, RatingError, RatingInput, Schedule, rate_bill, year_so_far
from ordinance.files import PRESET_DIR
from ordinance.install import jsonable as _jsonable


@pytest.fixture(scope="module")
def schedule():
    data = tomllib.loads((PRESET_DIR / "mineola.toml").read_text())
    rules = _jsonable({k: v for k, v in data["rate_schedule"][0].items()
                       if k not in ("effective_on", "citation", "sample")})
    return Schedule.from_rules(rules)


def amounts(rated):
    return [(line.kind, line.amount) for line in rated.lines]


@pytest.mark.citation("§ 45.28 A(1)")
@pytest.mark.citation("§ 45.28 A(2)(a)")
def test_semiannual_worked_example_62500_gallons(schedule):
    rated = rate_bill(schedule, RatingInput(frequency="semiannual", category="one_two_family", gallons=62500))
    assert amounts(rated) == [("minimum", Decimal("45.00")), ("consumption", Decimal("93.00")),
                              ("consumption", Decimal("48.13"))]
    assert rated.total == Decimal("186.13")
    assert [line.citation for line in rated.lines] == ["§ 45.28 A(1), A(2)(a)", "§ 45.28 A(1)", "§ 45.28 A(1)"]
    assert rated.lines[2].quantity == 12500 and rated.lines[2].rate == Decimal("3.85")


@pytest.mark.citation("§ 45.28 A(1)")
@pytest.mark.parametrize("gallons,total", [
    (0, "45.00"), (20000, "45.00"), (20001, "45.00"),  # 1 gal × 3.10/1000 = 0.0031 → 0.00
    (21000, "48.10"), (50000, "138.00"), (50001, "138.00"), (50130, "138.50"),
])
def test_semiannual_one_two_family_blocks(schedule, gallons, total):
    rated = rate_bill(schedule, RatingInput(frequency="semiannual", category="one_two_family", gallons=gallons))
    assert rated.total == Decimal(total)


@pytest.mark.citation("§ 45.28 A(2)(b)")
def test_semiannual_other_use(schedule):
    # $60.00 + 30,000 × 3.85/1000 = 115.50
    rated = rate_bill(schedule, RatingInput(frequency="semiannual", category="other", gallons=50000))
    assert rated.total == Decimal("175.50")


@pytest.mark.citation("§ 45.28 A(2)(b)")
@pytest.mark.citation("§ 45.28 E")
def test_semiannual_nonprofit_pays_other_use_rates(schedule):
    rated = rate_bill(schedule, RatingInput(frequency="semiannual", category="nonprofit", gallons=50000))
    assert rated.total == Decimal("175.50")


@pytest.mark.citation("§ 45.29 C")
def test_monthly_worked_example_allowance_over_the_year(schedule):
    march = rate_bill(schedule, RatingInput(frequency="monthly", category="other", gallons=90000, meter_size="2"))
    assert amounts(march) == [("minimum", Decimal("480.00"))]
    assert march.includes_annual_minimum
    april = rate_bill(schedule, RatingInput(frequency="monthly", category="other", gallons=60000, meter_size="2",
                                            annual_minimum_charged=True, year_to_date_gallons=90000))
    assert amounts(april) == [("consumption", Decimal("96.25"))]
    assert april.lines[0].quantity == 25000
    may = rate_bill(schedule, RatingInput(frequency="monthly", category="other", gallons=40000, meter_size="2",
                                          annual_minimum_charged=True, year_to_date_gallons=150000))
    assert amounts(may) == [("consumption", Decimal("154.00"))]


@pytest.mark.citation("§ 45.29 C")
def test_monthly_bill_within_the_allowance_still_has_a_line(schedule):
    # 2": 125,000 gal a year; 90,000 already counted, 20,000 more → nothing over, 15,000 gal left.
    rated = rate_bill(schedule, RatingInput(frequency="monthly", category="other", gallons=20000, meter_size="2",
                                            annual_minimum_charged=True, year_to_date_gallons=90000))
    assert amounts(rated) == [("consumption", Decimal("0.00"))]
    (line,) = rated.lines
    assert line.description == "20,000 gal, within the year's 125,000 gal allowance, 15,000 gal left"
    assert line.quantity == 20000 and line.citation == "§ 45.28 A(1), § 45.29 C"
    used_up = rate_bill(schedule, RatingInput(frequency="monthly", category="other", gallons=0, meter_size="2",
                                              annual_minimum_charged=True, year_to_date_gallons=130000))
    assert [line.description for line in used_up.lines] == ["0 gal, the year's 125,000 gal allowance is used up"]


@pytest.mark.citation("§ 45.29 C")
def test_a_semiannual_bill_earlier_in_the_year_does_not_count_for_a_monthly_bill(schedule):
    # § 45.29 C meter change: the February semiannual bill (62,500 gal, its own $60.00 minimum) is not the
    # annual minimum and uses none of the 2" allowance.
    semiannual = EarlierBill(frequency="semiannual", includes_annual_minimum=True, schedule_gallons=62500)
    assert year_so_far([semiannual]) == (False, 0)
    monthly = EarlierBill(frequency="monthly", includes_annual_minimum=True, schedule_gallons=57500)
    assert year_so_far([semiannual, monthly]) == (True, 57500)
    charged, gallons = year_so_far([semiannual])
    first = rate_bill(schedule, RatingInput(frequency="monthly", category="other", gallons=57500, meter_size="2",
                                            annual_minimum_charged=charged, year_to_date_gallons=gallons))
    assert amounts(first) == [("minimum", Decimal("480.00"))]


@pytest.mark.citation("§ 45.29 C")
def test_monthly_first_bill_over_allowance(schedule):
    # 1½": $300 with 80,000 gal; 100,000 gal → 20,000 × 3.85 = 77.00
    rated = rate_bill(schedule, RatingInput(frequency="monthly", category="one_two_family", gallons=100000,
                                            meter_size="1 1/2"))
    assert rated.total == Decimal("377.00")


@pytest.mark.citation("§ 45.28 E")
def test_nonprofit_month_at_or_above_two_million(schedule):
    # 2,500,000 × 0.90/1000 = 2,250.00 instead of the regular schedule
    rated = rate_bill(schedule, RatingInput(frequency="monthly", category="nonprofit", gallons=2500000,
                                            meter_size="4"))
    assert amounts(rated) == [("nonprofit", Decimal("2250.00"))]
    assert rated.lines[0].citation == "§ 45.28 E"
    assert rated.schedule_gallons == 0 and not rated.includes_annual_minimum


@pytest.mark.citation("§ 45.28 E")
def test_nonprofit_exactly_two_million(schedule):
    rated = rate_bill(schedule, RatingInput(frequency="monthly", category="nonprofit", gallons=2000000,
                                            meter_size="4", annual_minimum_charged=True))
    assert rated.total == Decimal("1800.00")


@pytest.mark.citation("§ 45.28 E")
def test_nonprofit_below_two_million_uses_regular_schedule(schedule):
    # 4": $1,500 with 400,000 gal; 1,999,999 gal → 1,599,999 × 3.85/1000 = 6,159.996 → 6,160.00
    rated = rate_bill(schedule, RatingInput(frequency="monthly", category="nonprofit", gallons=1999999,
                                            meter_size="4"))
    assert amounts(rated) == [("minimum", Decimal("1500.00")), ("consumption", Decimal("6160.00"))]


@pytest.mark.citation("§ 45.28 E")
def test_nonprofit_minimum_is_500(schedule):
    low = Schedule(**{**schedule.__dict__, "nonprofit_per_1000": Decimal("0.10")})
    rated = rate_bill(low, RatingInput(frequency="monthly", category="nonprofit", gallons=2000000, meter_size="4"))
    assert rated.total == Decimal("500.00")


@pytest.mark.citation("§ 45.28 C(1)")
def test_sprinkler_charge_on_first_bill_of_year(schedule):
    first = rate_bill(schedule, RatingInput(frequency="semiannual", category="other", gallons=0,
                                            sprinkler_supply_inches="4", first_bill_of_year=True))
    assert amounts(first) == [("minimum", Decimal("60.00")), ("sprinkler", Decimal("175.00"))]
    later = rate_bill(schedule, RatingInput(frequency="semiannual", category="other", gallons=0,
                                            sprinkler_supply_inches="4", first_bill_of_year=False))
    assert later.total == Decimal("60.00")


@pytest.mark.citation("§ 45.28 C(1)")
def test_sprinkler_size_not_in_code_is_refused(schedule):
    with pytest.raises(RatingError, match=r'§ 45.28 C\(1\) sets no sprinkler charge for a 10" supply'):
        rate_bill(schedule, RatingInput(frequency="semiannual", category="other", gallons=0,
                                        sprinkler_supply_inches="10", first_bill_of_year=True))


@pytest.mark.citation("§ 45.29 C")
def test_monthly_size_without_minimum_is_refused(schedule):
    with pytest.raises(RatingError, match="no annual minimum"):
        rate_bill(schedule, RatingInput(frequency="monthly", category="other", gallons=0, meter_size="5/8"))


@pytest.mark.citation("conventions: each line rounded once, half-up")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gallons=st.integers(min_value=0, max_value=5_000_000),
       category=st.sampled_from(["one_two_family", "other", "nonprofit"]),
       frequency=st.sampled_from(["semiannual", "monthly"]),
       size=st.sampled_from(["1 1/2", "2", "3", "4", "6", "8"]),
       ytd=st.integers(min_value=0, max_value=3_000_000), charged=st.booleans())
def test_total_is_the_sum_of_lines_each_rounded_to_the_cent(schedule, gallons, category, frequency, size, ytd,
                                                            charged):
    rated = rate_bill(schedule, RatingInput(frequency=frequency, category=category, gallons=gallons,
                                            meter_size=size, year_to_date_gallons=ytd,
                                            annual_minimum_charged=charged))
    assert rated.lines, "a bill with no lines is never issued"
    assert rated.total == sum((line.amount for line in rated.lines), Decimal("0"))
    assert all(line.amount == line.amount.quantize(Decimal("0.01")) and line.amount >= 0 for line in rated.lines)
    assert all(line.citation.startswith("§") for line in rated.lines)


@pytest.mark.citation("policy: a bill fits its columns")
@pytest.mark.parametrize(("frequency", "category", "size"), [("semiannual", "one_two_family", ""),
                                                             ("monthly", "other", "2"), ("monthly", "nonprofit", "2")])
def test_a_bill_larger_than_its_columns_hold_is_refused_not_overflowed(schedule, frequency, category, size):
    """A line's quantity is numeric(14, 2) and an amount numeric(12, 2): a released misread of 10^13 gallons
    is refused with a reason, where writing it would overflow the columns."""
    with pytest.raises(RatingError, match=r"10,000,000,000,000 gal .* more than a bill can hold"):
        rate_bill(schedule, RatingInput(frequency=frequency, category=category, gallons=10 ** 13, meter_size=size))
    # The largest consumption a 10-digit register in cubic feet can give still rates.
    gallons = 74_805_199_993  # 9,999,999,999 ft³ × 7.48052
    assert rate_bill(schedule, RatingInput(frequency=frequency, category=category, gallons=gallons,
                                           meter_size=size)).total > Decimal("10000000")
