"""OWRS rate files: RateParser's own cases (tests/testthat/test_calculate_bills.R), worked by hand, and ours."""

from decimal import Decimal
from fractions import Fraction

import pytest

from billing import owrs
from billing.owrs import Charge, OwrsError, OwrsFile, Part

RATEPARSER = """\
metadata:
  effective_date: 2016-03-01
  utility_name: "Test Utility"
  bill_frequency: monthly
  citation: "Resolution 2016-4"
  citations: {sewer_charge: "§ 12.3"}
rate_structure:
  COMMERCIAL:
    - service_charge:
        depends_on: meter_size
        values:
          5/8": 11
          1": 22
          3": 33
    - tier_starts:
        depends_on: meter_size
        values:
          5/8": [0, 211]
          1": [0, 211]
          3": [0, 611]
    - tier_prices:
        depends_on: water_type
        values:
          POTABLE: [4.07, 10.03]
          RECYCLED: [3.66, 6.33]
    - commodity_charge: Tiered
    - sewer_budget: 10
    - sewer_tier_starts: [0, 101%]
    - sewer_tier_prices: [2, 0]
    - sewer_charge: Budget
    - bill: commodity_charge + service_charge + sewer_charge
  RESIDENTIAL_SINGLE:
    - service_charge:
        depends_on: meter_size
        values:
          5/8": 11
          1": 22
          3": 33
    - tier_starts: [0, 15, 21, 26]
    - tier_prices: [2.87, 4.29, 6.44, 10.07]
    - commodity_charge: Tiered
    - sewer_tier_starts: [0, 11]
    - sewer_tier_prices: [2, 0]
    - sewer_charge: Tiered
    - bill: commodity_charge + service_charge + sewer_charge
  IRRIGATION:
    - service_charge:
        depends_on: meter_size
        values:
          5/8": 11
          1": 22
          3": 33
    - et_factor: 0.7
    - outdoor: et_factor * irrigable_area * et_amount * 0.62 * (1/748)
    - budget: outdoor
    - tier_starts: [0, outdoor]
    - tier_prices:
        depends_on: water_type
        values:
          POTABLE: [4.07, 10.03]
          RECYCLED: [3.66, 6.33]
    - commodity_charge: Budget
    - bill: commodity_charge + service_charge
waterbilling:
  preset: example
  class_map: {residential: RESIDENTIAL_SINGLE}
"""

MAPPING_FORM = """\
metadata:
  effective_date: 2016-03-01
rate_structure:
  RESIDENTIAL_SINGLE:
    service_charge:
      depends_on: meter_size
      values:
        5/8": 11
        1": 22
        3": 33
    tier_starts: [0, 15, 21, 26]
    tier_prices: [2.87, 4.29, 6.44, 10.07]
    commodity_charge: Tiered
    sewer_tier_starts: [0, 11]
    sewer_tier_prices: [2, 0]
    sewer_charge: Tiered
    bill: commodity_charge + service_charge + sewer_charge
"""

EXAMPLE_1 = """\
metadata:
  effective_date: 2016-01-01
  utility_name: "Example 1"
rate_structure:
  RESIDENTIAL_SINGLE:
    commodity_charge: 2.1*usage_ccf
    bill: commodity_charge
"""

GALLONS = """\
metadata:
  effective_date: 2026-06-01
  utility_name: "Village of Example"
rate_structure:
  SEMIANNUAL:
    - tier_usage: usage_gal
    - service_charge: 45
    - tier_starts: [0, 20001, 50001]
    - tier_prices: [0, 0.0031, 0.00385]
    - commodity_charge: Tiered
    - bill: service_charge + commodity_charge
  MONTHLY:
    - annual_minimum:
        depends_on: meter_size
        values:
          2": 480
    - allowance_gal:
        depends_on: meter_size
        values:
          2": 125000
    - minimum_charge: annual_minimum * (1 - annual_minimum_charged)
    - excess_gal: max(0, year_usage_gal + usage_gal - allowance_gal) - max(0, year_usage_gal - allowance_gal)
    - commodity_charge: excess_gal * 0.00385
    - bill: minimum_charge + commodity_charge
"""


def amounts(lines):
    return [line.amount for line in lines]


def total(lines):
    return sum(amounts(lines), Decimal("0.00"))


@pytest.fixture(scope="module")
def rates():
    return owrs.parse(RATEPARSER)


# --- RateParser's bills --------------------------------------------------------------------------------------


def test_commercial_bill(rates):
    lines = owrs.bill(rates, "COMMERCIAL", {"usage_ccf": 388, "meter_size": "3", "water_type": "POTABLE"})
    assert amounts(lines) == [Decimal("1579.16"), Decimal("33.00"), Decimal("20.00"), Decimal("0.00")]
    assert total(lines) == Decimal("1632.16")
    assert lines[0] == Charge(kind="consumption", part="commodity_charge",
                              description="Tier 1 (from 0 ccf): 388.00 ccf (290,244 gal) at $4.07 per ccf",
                              quantity=Decimal("388.00"), rate=Decimal("4.07"), amount=Decimal("1579.16"))
    assert lines[1] == Charge(kind="service", part="service_charge", description='Service charge, 3" meter',
                              quantity=Decimal("1.00"), rate=Decimal("33.00"), amount=Decimal("33.00"))
    # sewer budget 10 ccf, 101% of it is 10.1, rounded up to 11: 10 ccf at $2, then 378 ccf at $0
    assert [(line.kind, line.quantity, line.rate) for line in lines[2:]] == [
        ("sewer", Decimal("10.00"), Decimal("2")), ("sewer", Decimal("378.00"), Decimal("0"))]
    assert lines[3].description == "Sewer tier 2 (from 11 ccf): 378.00 ccf (282,764 gal) at $0.00 per ccf"


def test_residential_single_bill(rates):
    lines = owrs.bill(rates, "RESIDENTIAL_SINGLE", {"usage_ccf": Decimal("27.3"), "meter_size": "5/8"})
    assert amounts(lines) == [Decimal("40.18"), Decimal("25.74"), Decimal("32.20"), Decimal("23.16"),
                              Decimal("11.00"), Decimal("20.00"), Decimal("0.00")]
    assert total(lines) == Decimal("152.28")
    assert [line.quantity for line in lines[:4]] == [Decimal("14.00"), Decimal("6.00"), Decimal("5.00"),
                                                     Decimal("2.30")]
    assert lines[1].description == "Tier 2 (from 15 ccf): 6.00 ccf (4,488 gal) at $4.29 per ccf"
    assert lines[4].description == 'Service charge, 5/8" meter'


def test_irrigation_budget_bill(rates):
    facts = {"usage_ccf": 41, "meter_size": "1", "water_type": "RECYCLED", "et_amount": "4.8",
             "irrigable_area": 4500}
    lines = owrs.bill(rates, "IRRIGATION", facts)
    # budget 0.7 × 4500 × 4.8 × 0.62 / 748 = 12.53… ccf, rounded up to 13: 12 ccf in tier 1, 29 in tier 2
    assert [(line.quantity, line.rate, line.amount) for line in lines] == [
        (Decimal("12.00"), Decimal("3.66"), Decimal("43.92")),
        (Decimal("29.00"), Decimal("6.33"), Decimal("183.57")),
        (Decimal("1.00"), Decimal("22.00"), Decimal("22.00"))]
    assert total(lines) == Decimal("249.49")
    assert lines[1].description.startswith("Tier 2 (from 13 ccf): 29.00 ccf")


def test_numeric_facts_may_come_as_text_fraction_or_decimal(rates):
    base = {"meter_size": "1", "water_type": "RECYCLED", "irrigable_area": 4500}
    for usage, et in ((41, "4.8"), ("41", Decimal("4.8")), (Fraction(41), Fraction(24, 5))):
        lines = owrs.bill(rates, "IRRIGATION", {**base, "usage_ccf": usage, "et_amount": et})
        assert total(lines) == Decimal("249.49")


def test_unknown_class_is_refused(rates):
    with pytest.raises(OwrsError) as caught:
        owrs.bill(rates, "RESIDENTIAL_MULTI", {"usage_ccf": 10, "meter_size": "5/8"})
    assert caught.value.field == "cust_class"
    assert str(caught.value) == ("No rate information for customer class RESIDENTIAL_MULTI is present in the rate "
                                 "file (classes: COMMERCIAL, RESIDENTIAL_SINGLE, IRRIGATION)")


def test_missing_fact_and_unknown_key_are_refused(rates):
    with pytest.raises(OwrsError) as caught:
        owrs.bill(rates, "IRRIGATION", {"usage_ccf": 41, "meter_size": "1", "water_type": "RECYCLED",
                                        "et_amount": "4.8"})
    assert caught.value.field == "irrigable_area"
    assert str(caught.value) == ("the account carries no irrigable_area, which customer class IRRIGATION reads in "
                                 "outdoor")
    with pytest.raises(OwrsError) as caught:
        owrs.bill(rates, "RESIDENTIAL_SINGLE", {"usage_ccf": 10, "meter_size": "4"})
    assert caught.value.field == "meter_size"
    assert str(caught.value) == 'service_charge has no value for meter_size 4" (values: 5/8", 1", 3")'


def test_negative_usage_is_refused(rates):
    with pytest.raises(OwrsError) as caught:
        owrs.bill(rates, "RESIDENTIAL_SINGLE", {"usage_ccf": -1, "meter_size": "5/8"})
    assert caught.value.field == "usage_ccf"
    assert "cannot be negative" in str(caught.value)


def test_citations(rates):
    assert rates.citation_for("sewer_charge") == "§ 12.3"
    assert rates.citation_for("commodity_charge") == "Resolution 2016-4"
    assert owrs.parse(EXAMPLE_1).citation_for("commodity_charge") == ""


def test_needs(rates):
    assert rates.needs("IRRIGATION") == ["et_amount", "irrigable_area", "meter_size", "usage_ccf", "water_type"]
    assert rates.needs("COMMERCIAL") == ["meter_size", "usage_ccf", "water_type"]
    assert owrs.parse(GALLONS).needs("SEMIANNUAL") == ["usage_gal"]
    assert owrs.parse(GALLONS).needs("MONTHLY") == ["annual_minimum_charged", "meter_size", "usage_gal",
                                                    "year_usage_gal"]


def test_parts_keep_their_lines_and_exact_numbers(rates):
    parts = rates.classes["RESIDENTIAL_SINGLE"]
    assert parts[1] == Part(name="tier_starts", value=["0", "15", "21", "26"])
    assert parts[1].line == 39
    assert parts[2].value == ["2.87", "4.29", "6.44", "10.07"]
    assert rates.classes["COMMERCIAL"][0].value == {"depends_on": ["meter_size"],
                                                     "values": {'5/8"': "11", '1"': "22", '3"': "33"}}
    assert rates.metadata["effective_date"] == "2016-03-01"
    assert rates.extra == {"preset": "example", "class_map": {"residential": "RESIDENTIAL_SINGLE"}}


# --- other forms ------------------------------------------------------------------------------------------


def test_mapping_form_bills_as_the_list_form(rates):
    mapped = owrs.parse(MAPPING_FORM)
    facts = {"usage_ccf": Decimal("27.3"), "meter_size": "5/8"}
    assert owrs.bill(mapped, "RESIDENTIAL_SINGLE", facts) == owrs.bill(rates, "RESIDENTIAL_SINGLE", facts)
    assert mapped.classes["RESIDENTIAL_SINGLE"] == rates.classes["RESIDENTIAL_SINGLE"]


def test_readme_example_1():
    lines = owrs.bill(owrs.parse(EXAMPLE_1), "RESIDENTIAL_SINGLE", {"usage_ccf": 10})
    assert lines == (Charge(kind="charge", part="commodity_charge", description="Commodity charge (2.1*usage_ccf; usage_ccf = 10)",
                            quantity=Decimal("1.00"), rate=Decimal("21.00"), amount=Decimal("21.00")),)


def test_usage_in_gallons_bills_as_the_same_ccf(rates):
    # 20,422 gallons are 20422/748.052 ccf (27.300…): 14, 6, 5 and 2.3000… ccf in the four tiers
    from_gallons = owrs.bill(rates, "RESIDENTIAL_SINGLE", {"usage_gal": 20422, "meter_size": "5/8"})
    assert amounts(from_gallons) == [Decimal("40.18"), Decimal("25.74"), Decimal("32.20"), Decimal("23.16"),
                                     Decimal("11.00"), Decimal("20.00"), Decimal("0.00")]
    assert total(from_gallons) == Decimal("152.28")
    assert from_gallons[3].quantity == Decimal("2.30")


def test_tier_usage_in_gallons():
    lines = owrs.bill(owrs.parse(GALLONS), "SEMIANNUAL", {"usage_gal": 62500, "meter_size": "5/8"})
    assert amounts(lines) == [Decimal("45.00"), Decimal("0.00"), Decimal("93.00"), Decimal("48.13")]
    assert total(lines) == Decimal("186.13")
    assert lines[0].kind == "service" and lines[0].description == "Service charge"
    assert lines[3] == Charge(kind="consumption", part="commodity_charge",
                              description="Tier 3 (from 50,001 gal): 12,500 gal at $3.85 per 1,000 gal",
                              quantity=Decimal("12500.00"), rate=Decimal("0.00385"), amount=Decimal("48.13"))
    assert lines[1].description == "Tier 1 (from 0 gal): 20,000 gal at $0.00 per 1,000 gal"
    assert lines[2].description == "Tier 2 (from 20,001 gal): 30,000 gal at $3.10 per 1,000 gal"


def test_formula_class_with_year_fields():
    rates = owrs.parse(GALLONS)
    march = owrs.bill(rates, "MONTHLY", {"usage_gal": 90000, "meter_size": "2", "year_usage_gal": 0,
                                         "annual_minimum_charged": 0})
    # A part that comes to nothing (no gallons over the allowance in March, the minimum already charged in April
    # and May) is left off a bill that charges something.
    assert [(line.kind, line.amount) for line in march] == [("minimum", Decimal("480.00"))]
    assert march[0].description == ("Minimum charge (annual_minimum * (1 - annual_minimum_charged); "
                                    "annual_minimum = 480; annual_minimum_charged = 0)")
    april = owrs.bill(rates, "MONTHLY", {"usage_gal": 60000, "meter_size": "2", "year_usage_gal": 90000,
                                         "annual_minimum_charged": 1})
    assert amounts(april) == [Decimal("96.25")]
    assert april[0].description == "Commodity charge (excess_gal * 0.00385; excess_gal = 25,000)"
    may = owrs.bill(rates, "MONTHLY", {"usage_gal": 40000, "meter_size": "2", "year_usage_gal": 150000,
                                       "annual_minimum_charged": 1})
    assert amounts(may) == [Decimal("154.00")]
    # A month within the allowance after the minimum: nothing to charge, and the bill says why.
    june = owrs.bill(rates, "MONTHLY", {"usage_gal": 0, "meter_size": "2", "year_usage_gal": 190000,
                                        "annual_minimum_charged": 1})
    assert [(line.kind, line.amount) for line in june] == [("minimum", Decimal("0.00")), ("charge", Decimal("0.00"))]


def test_subtracted_term_and_whole_bill_formula():
    text = """\
rate_structure:
  A:
    - service_charge: 20
    - credit: 5.5
    - bill: service_charge - credit
  B:
    - service_charge: 20
    - bill: max(service_charge, 25) * 1.1
"""
    rates = owrs.parse(text)
    lines = owrs.bill(rates, "A", {})
    assert [(line.kind, line.part, line.rate, line.amount) for line in lines] == [
        ("service", "service_charge", Decimal("20.00"), Decimal("20.00")),
        ("charge", "credit", Decimal("-5.50"), Decimal("-5.50"))]
    assert owrs.bill(rates, "B", {}) == (Charge(kind="charge", part="bill",
                                                description="Bill: max(service_charge, 25) * 1.1",
                                                quantity=Decimal("1.00"), rate=Decimal("27.50"),
                                                amount=Decimal("27.50")),)


def test_uniform_and_several_depends_on_fields():
    text = """\
rate_structure:
  U:
    - service_charge:
        depends_on: [bill_frequency, meter_size]
        values:
          monthly|2": 30
          semiannual|5/8": 12.5
    - price: 2.125
    - commodity_charge: Uniform
    - sewer_price: 1
    - sewer_charge: Uniform
    - bill: service_charge + commodity_charge + sewer_charge
"""
    lines = owrs.bill(owrs.parse(text), "U", {"usage_ccf": 3, "meter_size": "2", "bill_frequency": "monthly"})
    assert [(line.kind, line.description, line.amount) for line in lines] == [
        ("service", 'Service charge, bill_frequency monthly, 2" meter', Decimal("30.00")),
        ("consumption", "Consumption: 3.00 ccf (2,244 gal) at $2.125 per ccf", Decimal("6.38")),
        ("sewer", "Sewer: 3.00 ccf (2,244 gal) at $1.00 per ccf", Decimal("3.00"))]


def test_half_cent_rounds_away_from_zero():
    text = "rate_structure:\n  A:\n    - service_charge: 0.005\n    - credit: 0.015\n    - bill: service_charge - credit\n"
    assert amounts(owrs.bill(owrs.parse(text), "A", {})) == [Decimal("0.01"), Decimal("-0.02")]


# --- refusals -------------------------------------------------------------------------------------------------


def refused(text: str) -> OwrsError:
    with pytest.raises(OwrsError) as caught:
        owrs.parse(text)
    return caught.value


def test_error_class1_either_tier_part_missing():
    error = refused("""\
rate_structure:
  ERROR_CLASS1:
    - tier_prices: [2.87, 4.29]
    - commodity_charge: Tiered
    - bill: commodity_charge
""")
    assert error.line == 4
    assert error.field == "rate_structure.ERROR_CLASS1.commodity_charge"
    assert str(error) == ("line 4: Either tier_starts or tier_prices is not present in the OWRS file for customer "
                          "class ERROR_CLASS1 (commodity_charge is Tiered)")


def test_error_class2_tier_starts_defined_later():
    error = refused("""\
rate_structure:
  ERROR_CLASS2:
    - tier_prices: [2.87, 4.29]
    - commodity_charge: Tiered
    - tier_starts: [0, 15]
    - bill: commodity_charge
""")
    assert (error.line, error.field) == (4, "rate_structure.ERROR_CLASS2.commodity_charge")
    assert str(error) == ("line 4: rate_structure.ERROR_CLASS2.commodity_charge is Tiered, but tier_starts is "
                          "defined later, on line 5; a class's parts are evaluated in order, so it must come "
                          "before commodity_charge")


def test_error_class3_bill_reads_a_part_that_is_nowhere():
    error = refused("""\
rate_structure:
  ERROR_CLASS3:
    - tier_starts: [0, 15]
    - tier_prices: [2.87, 4.29]
    - commodity_charge: Tiered
    - bill: commodity_charge + service_charge
""")
    assert (error.line, error.field) == (6, "rate_structure.ERROR_CLASS3.bill")
    assert str(error).startswith("line 6: service_charge is not present in the OWRS file for customer class "
                                 "ERROR_CLASS3 (bill reads it), and it is not a field of an account (fields: "
                                 "annual_minimum_charged, bill_frequency, cust_class, et_amount, ")


def test_formula_reading_a_later_part():
    error = refused("rate_structure:\n  A:\n    - bill: service_charge\n    - service_charge: 3\n")
    assert str(error) == ("line 3: rate_structure.A.bill reads service_charge, but service_charge is defined "
                          "later, on line 4; a class's parts are evaluated in order, so it must come before bill")


def test_tier_lengths_must_match():
    error = refused("""\
rate_structure:
  A:
    - tier_starts: [0, 15, 21]
    - tier_prices: [2.87, 4.29]
    - commodity_charge: Tiered
    - bill: commodity_charge
""")
    assert (error.line, error.field) == (5, "rate_structure.A.tier_prices")
    assert str(error) == ("line 5: tier_starts has 3 tiers but tier_prices has 2; every tier needs a start and a "
                          "price")
    error = refused(RATEPARSER.replace("RECYCLED: [3.66, 6.33]\n    - commodity_charge: Tiered",
                                       "RECYCLED: [3.66]\n    - commodity_charge: Tiered"))
    assert str(error) == ('line 26: tier_starts for meter_size 5/8" has 2 tiers but tier_prices for water_type '
                          'RECYCLED has 1; every tier needs a start and a price')


def test_malformed_yaml_names_the_line():
    error = refused("metadata:\n  utility_name: x\nrate_structure:\n  A: [service_charge: 1\n")
    assert error.field == "file"
    assert error.line == 5
    assert str(error).startswith("line 5: the file is not valid YAML")


def test_depends_on_without_values():
    error = refused("rate_structure:\n  A:\n    - service_charge:\n        depends_on: meter_size\n"
                    "    - bill: service_charge\n")
    assert (error.line, error.field) == (3, "rate_structure.A.service_charge")
    assert str(error) == ("line 3: rate_structure.A.service_charge: Each 'depends_on' clause must have a "
                          "corresponding 'values' clause, and vice versa.")


@pytest.mark.parametrize("formula", ["__import__('os')", "2**3"])
def test_unsafe_formulas_are_refused(formula):
    error = refused(f'rate_structure:\n  A:\n    - service_charge: "{formula}"\n    - bill: service_charge\n')
    assert (error.line, error.field) == (3, "rate_structure.A.service_charge")
    assert "cannot be read: column" in str(error)


@pytest.mark.parametrize(("text", "message"), [
    ("metadata: {}\n", "line 1"),
    ("rate_structure:\n  A: 3\n", "rate_structure.A must be a mapping of parts or a list of one-key mappings"),
    ("rate_structure:\n  A:\n    - x: 1\n    - x: 2\n    - bill: x\n", "is defined twice in the class, on lines 3 and 4"),
    ("rate_structure:\n  A:\n    - x: 1\n", "customer class A has no bill"),
    ("rate_structure:\n  A:\n    - tier_starts: [0]\n    - tier_prices: [0.0012345]\n    - commodity_charge: Tiered\n"
     "    - bill: commodity_charge\n", "has the price 0.0012345, with more than 6 decimal places"),
    ("rate_structure:\n  A:\n    - commodity_charge: Tierd\n    - bill: commodity_charge\n",
     "is Tierd; a rate type is Tiered, Budget or Uniform"),
    ("rate_structure:\n  A:\n    - tier_starts: [0, 10%]\n    - tier_prices: [1, 2]\n    - commodity_charge: Tiered\n"
     "    - bill: commodity_charge\n", "must then be Budget, not Tiered"),
])
def test_other_refusals(text, message):
    error = refused(text)
    if message == "line 1":
        assert error.field == "rate_structure"
        assert str(error) == "the file has no rate_structure mapping of customer classes"
    else:
        assert message in str(error)


def test_a_price_with_more_than_six_decimals_in_a_formula_is_refused_when_rated():
    rates = owrs.parse("rate_structure:\n  A:\n    - tier_starts: [0]\n    - tier_prices: [1/3]\n"
                       "    - commodity_charge: Tiered\n    - bill: commodity_charge\n")
    with pytest.raises(OwrsError) as caught:
        owrs.bill(rates, "A", {"usage_ccf": 3})
    assert caught.value.field == "rate_structure.A.commodity_charge"
    assert "more than 6 decimal places" in str(caught.value)


# --- storage and writing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [RATEPARSER, MAPPING_FORM, EXAMPLE_1, GALLONS])
def test_dump_parse_round_trip(text):
    parsed = owrs.parse(text)
    written = owrs.dump(parsed)
    assert written.startswith("# Open Water Rate Specification (OWRS) file.")
    again = owrs.parse(written)
    assert again == parsed
    assert owrs.dump(again) == written
    assert OwrsFile.from_json(parsed.to_json()) == parsed


def test_dump_is_canonical():
    written = owrs.dump(owrs.parse(RATEPARSER))
    assert written.splitlines()[:14] == [
        "# Open Water Rate Specification (OWRS) file. Usage is in ccf (hundreds of cubic feet) unless a class "
        "sets tier_usage.",
        "metadata:",
        "  effective_date: 2016-03-01",
        '  utility_name: "Test Utility"',
        "  bill_frequency: monthly",
        '  citation: "Resolution 2016-4"',
        "  citations:",
        '    sewer_charge: "§ 12.3"',
        "rate_structure:",
        "  COMMERCIAL:",
        "    - service_charge:",
        "        depends_on: meter_size",
        "        values:",
        '          "5/8\\"": 11',
    ]
    assert '    - sewer_tier_starts: [0, "101%"]' in written
    assert '    - tier_prices: [2.87, 4.29, 6.44, 10.07]' in written
    assert '    - bill: "commodity_charge + service_charge + sewer_charge"' in written
    assert written.endswith("waterbilling:\n  preset: example\n  class_map:\n    residential: RESIDENTIAL_SINGLE\n")


def test_json_is_plain_data(rates):
    import json

    data = rates.to_json()
    assert json.loads(json.dumps(data)) == data
    restored = OwrsFile.from_json(json.loads(json.dumps(data)))
    facts = {"usage_ccf": 388, "meter_size": "3", "water_type": "POTABLE"}
    assert owrs.bill(restored, "COMMERCIAL", facts) == owrs.bill(rates, "COMMERCIAL", facts)
    assert restored.classes["COMMERCIAL"][0].line is None


def test_round_trip_keeps_text_that_only_looks_like_a_number():
    text = 'rate_structure:\n  A:\n    - service_charge: ".5"\n    - other: "4.070"\n    - bill: service_charge + other\n'
    parsed = owrs.parse(text)
    assert [p.value for p in parsed.classes["A"][:2]] == [".5", "4.070"]
    assert owrs.parse(owrs.dump(parsed)) == parsed
    assert amounts(owrs.bill(parsed, "A", {})) == [Decimal("0.50"), Decimal("4.07")]


def test_a_round_price_is_a_plain_decimal():
    text = "rate_structure:\n  A:\n    - price: 100\n    - commodity_charge: Uniform\n    - bill: commodity_charge\n"
    (line,) = owrs.bill(owrs.parse(text), "A", {"usage_ccf": Decimal("0.5")})
    assert str(line.rate) == "100"
    assert line.description == "Consumption: 0.50 ccf (374 gal) at $100.00 per ccf"
    assert line.amount == Decimal("50.00")


def test_division_by_zero_when_rated_names_the_part():
    rates = owrs.parse("rate_structure:\n  A:\n    - service_charge: 10 / hhsize\n    - bill: service_charge\n")
    with pytest.raises(OwrsError) as caught:
        owrs.bill(rates, "A", {"hhsize": 0})
    assert caught.value.field == "rate_structure.A.service_charge"
    assert caught.value.line == 3
    assert str(caught.value) == ("line 3: rate_structure.A.service_charge: 10 / hhsize: column 4: division by "
                                 "zero")
    assert amounts(owrs.bill(rates, "A", {"hhsize": "4"})) == [Decimal("2.50")]
