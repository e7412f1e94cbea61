"""The device rules, the test schedule and Lansing's certification fine: pure, no database.

Every expected answer is read off docs/ordinances.md and the seeds by hand: the device types a condition allows,
the section it cites, and the dollars of the § 141-11 B worked example.
"""

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from backflow.fines import FineComputation, pipe_fine
from backflow.rules import (
    DEVICE_TYPES,
    FLAGS,
    Assessment,
    ConditionError,
    device_rule_from,
    device_type,
)
from backflow.schedule import frequency_from
from backflow.schedule import next_test_due as next_test_due_by
from core.errors import ApplicationError
from ordinance.files import preset_read

D = Decimal
PRESETS = ("mineola", "washingtonville", "south_farmingdale", "lansing", "old_westbury", "smithtown")
PRESET_FILES = Path(__file__).resolve().parents[2] / "fixtures" / "presets"


def _backflow_table(preset: str) -> dict:
    # The pure rules read each preset's file as written (the installed copy is the ordinance floor's).
    try:
        return preset_read(code=preset).data["backflow"]
    except ApplicationError as exc:
        raise ValueError(str(exc)) from None


def device_rule(preset: str):
    return device_rule_from(preset, _backflow_table(preset)["device_rule"])


def device_test_frequency(preset: str):
    return frequency_from(_backflow_table(preset)["test_frequency"])


def next_test_due(preset: str, **facts):
    return next_test_due_by(device_test_frequency(preset), **facts)


def assess(preset: str, *codes: str, note: str = "", reason: str = "") -> Assessment:
    return device_rule(preset).assess(set(codes), note=note, reason=reason)


def codes_of(preset: str) -> list[str]:
    return [condition.code for condition in device_rule(preset).conditions()]


# --- the registry and the device types --------------------------------------------------------------------


@pytest.mark.citation("§ 45.45 H")
def test_every_preset_has_a_device_rule_and_a_test_frequency():
    assert all(device_test_frequency(preset).months == 12 for preset in PRESETS)
    assert {path.stem for path in PRESET_FILES.glob("*.toml")} == set(PRESETS)
    for preset in PRESETS:
        rule = device_rule(preset)
        assert rule.preset == preset
        codes = codes_of(preset)
        assert len(codes) == len(set(codes)), f"{preset}: a code listed twice"
        assert all(condition.citation and condition.label for condition in rule.conditions())


@pytest.mark.citation("§ 45.45 H")
def test_an_unknown_preset_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match="'mineloa'") as refused:
        device_rule("mineloa")
    assert all(preset in str(refused.value) for preset in PRESETS)


@pytest.mark.citation("§ 45.45 H")
@pytest.mark.parametrize(("written", "kind"), [
    ("AG", "AG"), ("a.g.", "AG"), ("RPZ", "RPZ"), ("RPD", "RPZ"), ("r.p.d.", "RPZ"), ("DCA", "DCA"),
    ("dcva", "DCA"), ("AVB", "AVB"), ("pvb", "PVB")])
def test_device_types_and_mineolas_rpd(written, kind):
    assert device_type(written) == kind


@pytest.mark.citation("§ 45.45 H")
def test_an_unknown_device_type_is_refused_naming_the_types():
    with pytest.raises(ValueError, match="'BFP' is not a device type; use one of AG, RPZ, DCA, AVB, PVB"):
        device_type("BFP")


@pytest.mark.citation("§ 45.45 H")
def test_the_contract_answer_has_exactly_three_keys():
    answer = assess("mineola", "cross_connection", "back_pressure", "hazardous").as_json()
    assert answer == {"required": True, "allowed": ["AG", "RPZ"], "citation": "§ 45.45 H"}
    assert assess("mineola").as_json() == {"required": False, "allowed": [], "citation": "§ 45.45 H"}


@pytest.mark.citation("§ 45.45 H")
def test_every_device_type_is_one_of_five_in_a_fixed_order():
    assert DEVICE_TYPES == ("AG", "RPZ", "DCA", "AVB", "PVB")
    for preset in PRESETS:
        rule = device_rule(preset)
        for condition in rule.conditions():
            if ":" in condition.code or condition.code.endswith("_determination"):
                continue  # a waiver, or a determination and its types: tested on their own below
            answer = rule.assess({condition.code})
            assert answer.allowed == tuple(t for t in DEVICE_TYPES if t in answer.allowed)
            assert set(answer.flags) <= set(FLAGS)


# --- unknown codes ------------------------------------------------------------------------------------------


@pytest.mark.citation("§ 45.45 H")
@pytest.mark.citation("§ 169-34")
@pytest.mark.citation("§ 141-3 B")
@pytest.mark.parametrize("preset", PRESETS)
def test_unknown_codes_are_refused_each_named_with_the_known_ones(preset):
    with pytest.raises(ConditionError) as refused:
        assess(preset, "hazardus", "tank_farm", *codes_of(preset)[:1])
    message = str(refused.value)
    assert "'hazardus'" in message and "'tank_farm'" in message
    assert all(code in message for code in codes_of(preset))
    assert refused.value.field == "condition"
    assert isinstance(refused.value, ValueError)


@pytest.mark.citation("§ 141-3 B")
def test_one_string_is_not_taken_for_a_set_of_letters():
    with pytest.raises(TypeError, match="not one string"):
        device_rule("lansing").assess("toxic")


# --- Mineola § 45.45 H ----------------------------------------------------------------------------------


@pytest.mark.citation("§ 45.45 H")
@pytest.mark.parametrize(("codes", "allowed", "row"), [
    (("back_pressure", "hazardous"), ("AG", "RPZ"), "subject to back pressure, hazardous substances"),
    (("back_pressure",), ("AG", "RPZ", "DCA"), "subject to back pressure, nonhazardous substances"),
    (("hazardous",), ("AG", "RPZ", "AVB", "PVB"), "not subject to back pressure, hazardous substances"),
    ((), ("AG", "RPZ", "DCA", "AVB", "PVB"), "not subject to back pressure, nonhazardous substances"),
])
def test_mineola_each_row_of_the_design_criteria_table(codes, allowed, row):
    answer = assess("mineola", "cross_connection", *codes)
    assert answer.required is True
    assert answer.allowed == allowed
    assert answer.citation == "§ 45.45 H"
    assert answer.trace == (f"{' + '.join(('cross_connection',) + codes)} → {', '.join(allowed)} "
                            f"(§ 45.45 H: {row})",)
    assert answer.flags == ("approval_required",)  # § 45.45 B: approved by the Commissioner of Health


@pytest.mark.citation("§ 45.45 H")
def test_mineola_the_worked_trace():
    trace = assess("mineola", "hazardous", "cross_connection", "back_pressure").trace[0]
    assert trace.startswith("cross_connection + back_pressure + hazardous → AG, RPZ (§ 45.45 H")


@pytest.mark.citation("§ 45.45 H")
@pytest.mark.parametrize("codes", [(), ("back_pressure",), ("hazardous",), ("back_pressure", "hazardous")])
def test_mineola_without_a_cross_connection_no_device_is_required(codes):
    answer = assess("mineola", *codes)
    assert (answer.required, answer.allowed, answer.citation) == (False, (), "§ 45.45 H")
    assert "no device required" in answer.trace[0]
    assert answer.flags == ()


@pytest.mark.citation("§ 45.45 H")
def test_mineola_a_device_of_a_type_the_row_omits_is_not_allowed():
    answer = assess("mineola", "cross_connection", "back_pressure", "hazardous")
    assert answer.allows("RPD") and answer.allows("AG")
    assert not answer.allows("DCA") and not answer.allows("PVB")


# --- Lansing § 141-3 B, §§ 141-12 – 141-14 ------------------------------------------------------------------

LANSING_ALONE = [
    # code, required, allowed, needs a reason for, citation
    ("auxiliary_approved", True, ("DCA",), (), "§ 141-3 B(1)"),
    ("auxiliary_cross_connected", True, ("AG", "RPZ"), (), "§ 141-3 B(2)"),
    ("auxiliary_unapproved", True, ("AG", "RPZ"), (), "§ 141-3 B(2)"),
    ("objectionable", True, ("AG", "DCA"), (), "§ 141-3 B(3)"),
    ("toxic", True, ("AG", "RPZ"), (), "§ 141-3 B(4)"),
    ("toxic_pressure", True, ("AG", "RPZ"), (), "§ 141-3 B(5)"),
    ("sewage_plant", True, ("AG",), ("RPZ",), "§ 141-3 B(6)"),
    ("private_well", True, ("AG", "RPZ", "DCA"), (), "§ 141-12 B(1)"),
    ("underground_sprinkler", True, ("RPZ",), (), "§ 141-12 B(2)"),
    ("popup_sprinkler", True, ("RPZ",), (), "§ 141-12 B(2)"),
    ("private_hydrant", True, ("RPZ",), (), "§ 141-13"),
    ("multi_customer", True, ("RPZ",), (), "§ 141-14 A"),
    ("pool", False, (), (), "§ 141-12 A"),
    ("double_wall_hx", False, (), (), "§ 141-12 A"),
]


@pytest.mark.citation("§ 141-3 B")
@pytest.mark.citation("§ 141-12")
def test_lansing_knows_exactly_the_spec_codes_and_the_two_waivers():
    assert codes_of("lansing") == [row[0] for row in LANSING_ALONE] + ["waived:popup_sprinkler",
                                                                       "waived:multi_customer"]


@pytest.mark.citation("§ 141-3 B")
@pytest.mark.citation("§ 141-12")
@pytest.mark.citation("§ 141-13")
@pytest.mark.citation("§ 141-14 A")
@pytest.mark.parametrize(("code", "required", "allowed", "needs_reason", "citation"), LANSING_ALONE)
def test_lansing_each_condition_alone(code, required, allowed, needs_reason, citation):
    answer = assess("lansing", code)
    assert (answer.required, answer.allowed, answer.needs_reason, answer.citation) == \
        (required, allowed, needs_reason, citation)
    assert answer.trace[0].startswith(f"{code} ") or answer.trace[0].startswith(f"{code}:")
    assert citation in answer.trace[0]


@pytest.mark.citation("§ 141-3 B(4)")
@pytest.mark.citation("§ 141-3 B(5)")
@pytest.mark.parametrize("code", ["toxic", "toxic_pressure"])
def test_lansing_toxic_substances_take_an_air_gap_or_an_rpz_either_lawful_without_a_reason(code):
    answer = assess("lansing", code)
    assert answer.allowed == ("AG", "RPZ") and answer.needs_reason == ()
    assert answer.allows("RPZ") and answer.allows("AG") and not answer.allows("DCA")
    assert "reason_recorded" not in answer.flags


@pytest.mark.citation("§ 141-3 B(6)")
@pytest.mark.parametrize(("code", "citation"), [("sewage_plant", "§ 141-3 B(6)")])
def test_lansing_rpz_for_sewage_only_with_a_recorded_reason(code, citation):
    without = assess("lansing", code)
    assert without.allowed == ("AG",) and without.needs_reason == ("RPZ",)
    assert not without.allows("RPZ")
    assert "RPZ only with a recorded reason" in without.trace[-1] and citation in without.trace[-1]

    blank = assess("lansing", code, reason="   ")
    assert blank == without  # a blank reason is no reason

    given = assess("lansing", code, reason="no room for the air gap above the receiving tank")
    assert given.allowed == ("AG", "RPZ") and given.needs_reason == ()
    assert "reason_recorded" in given.flags
    assert given.trace[-1] == f"reason recorded (no room for the air gap above the receiving tank) → RPZ allowed " \
                              f"({citation})"


@pytest.mark.citation("§ 141-3 B")
@pytest.mark.citation("§ 141-12")
@pytest.mark.parametrize(("codes", "reason", "allowed", "needs_reason", "citation", "common"), [
    # {AG, RPZ} ∩ {AG, DCA} = {AG}
    (("auxiliary_cross_connected", "objectionable"), "", ("AG",), (), "§ 141-3 B(2); § 141-3 B(3)", True),
    # the well's device follows § 141-3 B(1)–(2)
    (("private_well", "auxiliary_approved"), "", ("DCA",), (), "§ 141-3 B(1); § 141-12 B(1)", True),
    (("private_well", "auxiliary_unapproved"), "", ("AG", "RPZ"), (), "§ 141-3 B(2); § 141-12 B(1)", True),
    (("underground_sprinkler", "private_hydrant"), "", ("RPZ",), (), "§ 141-12 B(2); § 141-13", True),
    # a pool adds nothing
    (("pool", "underground_sprinkler"), "", ("RPZ",), (), "§ 141-12 B(2)", True),
    (("double_wall_hx", "objectionable"), "", ("AG", "DCA"), (), "§ 141-3 B(3)", True),
    # {DCA} ∩ {AG, RPZ}: empty → the strictest condition alone (its weakest device RPZ beats DCA)
    (("auxiliary_approved", "auxiliary_unapproved"), "", ("AG", "RPZ"), (), "§ 141-3 B(2)", False),
    (("auxiliary_approved", "underground_sprinkler"), "", ("RPZ",), (), "§ 141-12 B(2)", False),
    # {DCA} ∩ {AG, RPZ}: empty → toxic decides (its weakest device RPZ beats DCA)
    (("auxiliary_approved", "toxic"), "", ("AG", "RPZ"), (), "§ 141-3 B(4)", False),
    (("auxiliary_approved", "toxic_pressure"), "", ("AG", "RPZ"), (), "§ 141-3 B(5)", False),
    # {AG, RPZ} ∩ {RPZ} = {RPZ}
    (("toxic", "underground_sprinkler"), "", ("RPZ",), (), "§ 141-3 B(4); § 141-12 B(2)", True),
    # {AG, RPZ} ∩ {AG} = {AG}; the sewage plant's RPZ needs its reason
    (("toxic", "sewage_plant"), "", ("AG",), ("RPZ",), "§ 141-3 B(4); § 141-3 B(6)", True),
    (("toxic", "sewage_plant"), "no room for the air gap", ("AG", "RPZ"), (), "§ 141-3 B(4); § 141-3 B(6)", True),
])
def test_lansing_several_conditions_the_strictest_wins(codes, reason, allowed, needs_reason, citation, common):
    answer = assess("lansing", *codes, reason=reason)
    assert answer.required is True
    assert (answer.allowed, answer.needs_reason, answer.citation) == (allowed, needs_reason, citation)
    if common:
        assert "no_common_type" not in answer.flags
    else:
        assert "no_common_type" in answer.flags
        assert any(line.startswith("no device type meets every condition") for line in answer.trace)


@pytest.mark.citation("§ 141-12 B(2)")
@pytest.mark.citation("§ 141-14 B")
@pytest.mark.parametrize(("code", "citation"), [("popup_sprinkler", "§ 141-12 B(2)"),
                                                ("multi_customer", "§ 141-14 B")])
def test_lansing_rpz_unless_waived(code, citation):
    assert assess("lansing", code).allowed == ("RPZ",)
    for codes in ((f"waived:{code}",), (code, f"waived:{code}")):
        answer = assess("lansing", *codes)
        assert (answer.required, answer.allowed, answer.citation) == (False, (), citation)
        assert "waived" in answer.flags
        assert answer.trace[0] == f"{code}, waived in writing → no device for it ({citation})"
    # the waiver takes away only its own condition
    other = assess("lansing", f"waived:{code}", "objectionable")
    assert (other.required, other.allowed, other.citation) == (True, ("AG", "DCA"), "§ 141-3 B(3)")


@pytest.mark.citation("§ 141-14 B")
def test_lansing_a_multi_customer_waiver_warns_it_is_void_on_an_unreported_change():
    answer = assess("lansing", "waived:multi_customer")
    assert "waiver_void_if_change_unreported" in answer.flags
    assert "30 days" in FLAGS["waiver_void_if_change_unreported"]
    assert "waiver_void_if_change_unreported" not in assess("lansing", "waived:popup_sprinkler").flags


@pytest.mark.citation("§ 141-12 B(2)")
def test_lansing_only_the_two_rpz_unless_waived_conditions_can_be_waived():
    with pytest.raises(ConditionError, match="'waived:underground_sprinkler'"):
        assess("lansing", "waived:underground_sprinkler")


@pytest.mark.citation("§ 141-3 B")
def test_lansing_nothing_recorded_nothing_required():
    answer = assess("lansing")
    assert (answer.required, answer.allowed, answer.citation) == (False, (), "§ 141-3 B")
    assert "no condition" in answer.trace[0]


# --- Washingtonville §§ 169-31 – 169-37 --------------------------------------------------------------------

# The § 169-34 facility kinds as the preset file lists them: those that need an RPZ or air gap, and those a double
# check valve.
_WASHINGTONVILLE = preset_read(code="washingtonville").data["backflow"]["device_rule"]["condition"]
RPZ_OR_AG_CODES = [c["code"] for c in _WASHINGTONVILLE if c["citation"] == "§ 169-34" and c["allowed"] == ["AG", "RPZ"]]
DOUBLE_CHECK_CODES = [c["code"] for c in _WASHINGTONVILLE if c["citation"] == "§ 169-34" and c["allowed"] == ["DCA"]]


@pytest.mark.citation("§ 169-34")
def test_washingtonville_lists_every_facility_kind_of_the_seed():
    assert len(RPZ_OR_AG_CODES) == 42 and len(DOUBLE_CHECK_CODES) == 14
    for code in ("hospital", "car_wash_commercial", "pumping_station", "sewer_flusher",
                 "residential_irrigation_chemical_injection", "boiler_with_additives", "veterinary_hospital"):
        assert code in RPZ_OR_AG_CODES
    for code in ("fire_loop_no_additives", "fire_storage_tank_no_additives", "residential_irrigation",
                 "beauty_salon", "carnival", "complex_commercial_plumbing"):
        assert code in DOUBLE_CHECK_CODES
    assert codes_of("washingtonville") == (["non_residential", "auxiliary_supply"] + RPZ_OR_AG_CODES
                                           + DOUBLE_CHECK_CODES + ["inspector_determination", "determined:AG",
                                                                   "determined:RPZ", "determined:DCA",
                                                                   "determined:AVB", "determined:PVB"])


@pytest.mark.citation("§ 169-34")
@pytest.mark.parametrize("code", RPZ_OR_AG_CODES)
def test_washingtonville_rpz_or_air_gap_facilities(code):
    answer = assess("washingtonville", code)
    assert (answer.required, answer.allowed, answer.citation) == (True, ("AG", "RPZ"), "§ 169-34")
    assert answer.trace == (f"{code} → AG, RPZ (§ 169-34)",)


@pytest.mark.citation("§ 169-34")
@pytest.mark.parametrize("code", DOUBLE_CHECK_CODES)
def test_washingtonville_double_check_facilities(code):
    answer = assess("washingtonville", code)
    assert (answer.required, answer.allowed, answer.citation) == (True, ("DCA",), "§ 169-34")
    # a non-residential user on the list: still the list's device
    assert assess("washingtonville", "non_residential", code).allowed == ("DCA",)


@pytest.mark.citation("§ 169-32")
@pytest.mark.parametrize("code", ["non_residential", "auxiliary_supply"])
def test_washingtonville_who_must_have_a_device(code):
    answer = assess("washingtonville", code)
    assert (answer.required, answer.allowed, answer.citation) == (True, ("AG", "RPZ", "DCA"), "§ 169-32")


@pytest.mark.citation("§ 169-32")
def test_washingtonville_a_residential_user_without_an_auxiliary_supply_needs_none():
    answer = assess("washingtonville")
    assert (answer.required, answer.allowed, answer.citation) == (False, (), "§ 169-32")
    assert "residential users with an auxiliary supply" in answer.trace[0]


@pytest.mark.citation("§ 169-34")
@pytest.mark.parametrize(("codes", "allowed", "common"), [
    (("non_residential", "hospital"), ("AG", "RPZ"), True),
    (("auxiliary_supply", "residential_irrigation"), ("DCA",), True),
    (("residential_irrigation", "residential_irrigation_chemical_injection"), ("AG", "RPZ"), False),
    (("church", "laundry"), ("AG", "RPZ"), False),
])
def test_washingtonville_both_lists_the_rpz_list_wins(codes, allowed, common):
    answer = assess("washingtonville", *codes)
    assert answer.allowed == allowed
    assert ("no_common_type" in answer.flags) is not common


@pytest.mark.citation("§ 169-34")
def test_washingtonville_the_building_inspector_decides_what_the_lists_do_not_name():
    answer = assess("washingtonville", "non_residential", "inspector_determination", "determined:rpz",
                    note="Tattoo studio with chemical sink; memo BI-2026-14")
    assert (answer.required, answer.allowed) == (True, ("RPZ",))
    assert answer.citation == "§ 169-32; § 169-34"
    assert "determination" in answer.flags
    assert any("the Building Inspector: Tattoo studio with chemical sink; memo BI-2026-14" in line
               for line in answer.trace)
    two = assess("washingtonville", "inspector_determination", "determined:DCA", "determined:AG", note="memo 7")
    assert two.allowed == ("AG", "DCA")


@pytest.mark.citation("§ 169-34")
def test_washingtonville_a_determination_narrows_a_list_but_never_loosens_it():
    assert assess("washingtonville", "hospital", "inspector_determination", "determined:RPZ",
                  note="memo").allowed == ("RPZ",)
    looser = assess("washingtonville", "hospital", "inspector_determination", "determined:DCA", note="memo")
    assert looser.allowed == ("AG", "RPZ") and "no_common_type" in looser.flags


@pytest.mark.citation("§ 169-34")
@pytest.mark.parametrize(("codes", "note", "field", "words"), [
    (("inspector_determination", "determined:RPZ"), "", "note", "determination in the note"),
    (("inspector_determination", "determined:RPZ"), "  ", "note", "determination in the note"),
    (("inspector_determination",), "memo", "condition", "record one or more of determined:AG"),
    (("determined:RPZ", "hospital"), "memo", "condition", "record inspector_determination with it"),
    (("inspector_determination", "determined:XYZ"), "memo", "condition", "'determined:XYZ'"),
])
def test_washingtonville_a_determination_needs_its_types_and_its_note(codes, note, field, words):
    with pytest.raises(ConditionError, match=words) as refused:
        assess("washingtonville", *codes, note=note)
    assert refused.value.field == field


# --- South Farmingdale §§ 5.6, 5.19, 7.5, 10.3 ----------------------------------------------------------------


@pytest.mark.citation("§ 5.6")
@pytest.mark.citation("§ 5.19")
@pytest.mark.citation("§ 10.3")
@pytest.mark.parametrize(("codes", "allowed", "citation", "flags"), [
    (("permanent_service",), ("AG", "RPZ", "DCA"), "§ 5.6", ()),
    (("pool",), ("AG", "RPZ", "DCA"), "§ 5.19", ("approval_required",)),
    (("underground_sprinkler",), ("AG", "RPZ", "DCA"), "§ 5.19", ("approval_required",)),
    (("water_cooled_equipment",), ("RPZ",), "§ 10.3(c)", ()),
    (("bottled_water_facility",), ("RPZ",), "§ 9.1(b)", ("approval_required",)),
    (("permanent_service", "water_cooled_equipment"), ("RPZ",), "§ 5.6; § 10.3(c)", ()),
    (("permanent_service", "pool"), ("AG", "RPZ", "DCA"), "§ 5.6; § 5.19", ("approval_required",)),
])
def test_south_farmingdale(codes, allowed, citation, flags):
    answer = assess("south_farmingdale", *codes)
    assert (answer.required, answer.allowed, answer.citation, answer.flags) == (True, allowed, citation, flags)


@pytest.mark.citation("§ 5.6")
def test_south_farmingdale_nothing_recorded_reminds_every_permanent_service_has_a_device():
    answer = assess("south_farmingdale")
    assert (answer.required, answer.citation) == (False, "§ 5.6")
    assert "record permanent_service" in answer.trace[0]


@pytest.mark.citation("§ 7.2")
def test_south_farmingdale_the_district_determines_the_type():
    answer = assess("south_farmingdale", "permanent_service", "district_determination", "determined:DCA",
                    note="Superintendent: dental office, double check")
    assert answer.allowed == ("DCA",) and answer.citation == "§ 5.6; § 7.2"
    # § 7.2 names an air gap, an RPZ and a double check: no vacuum breaker at the service
    with pytest.raises(ConditionError, match="'determined:AVB'"):
        assess("south_farmingdale", "district_determination", "determined:AVB", note="memo")


# --- Old Westbury § 210-43 ---------------------------------------------------------------------------------


@pytest.mark.citation("§ 210-43")
@pytest.mark.parametrize(("code", "allowed", "citation", "flags"), [
    ("cross_connection", ("AG", "RPZ"), "cross-connection rule", ("approval_required",)),
    ("individual_supply", ("AG", "RPZ"), "individual supply rule", ("approval_required",)),
    ("boiler_feed", ("AG", "RPZ", "DCA"), "boiler connection rule", ()),
    ("pump_priming", ("AG",), "prohibited connections C", ()),
])
def test_old_westbury_the_protections_the_published_text_names(code, allowed, citation, flags):
    answer = assess("old_westbury", code)
    assert (answer.required, answer.allowed, answer.citation, answer.flags) == (True, allowed, citation, flags)


@pytest.mark.citation("§ 210-43")
def test_old_westbury_a_device_where_the_inspector_finds_a_hazard():
    nothing = assess("old_westbury")
    assert (nothing.required, nothing.citation) == (False, "§ 210-43")
    assert "where the inspector finds a hazard" in nothing.trace[0]
    found = assess("old_westbury", "inspector_determination", "determined:PVB", note="irrigation hose bibbs")
    assert (found.required, found.allowed, found.citation) == (True, ("PVB",), "§ 210-43")
    both = assess("old_westbury", "boiler_feed", "pump_priming")  # {AG, RPZ, DCA} ∩ {AG}
    assert both.allowed == ("AG",)


# --- the test schedule -------------------------------------------------------------------------------------


@pytest.mark.citation("policy")
@pytest.mark.citation("§ 169-35")
@pytest.mark.citation("§ 7.5")
@pytest.mark.citation("§ 141-4 C")
@pytest.mark.parametrize(("preset", "citation", "basis"), [
    ("mineola", "policy (Chapter 45 sets no backflow test frequency)", "policy"),
    ("washingtonville", "§ 169-35", "ordinance"),
    ("south_farmingdale", "§ 7.5 (sample: the Board sets the frequency)", "sample"),
    ("lansing", "§ 141-4 C; § 141-10 F", "ordinance"),
    ("old_westbury", "policy (Chapter 210 sets no backflow test frequency)", "policy"),
])
def test_each_preset_tests_yearly(preset, citation, basis):
    assert next_test_due(preset, tested_on=date(2026, 3, 15)) == (date(2027, 3, 15), citation)
    assert device_test_frequency(preset).basis == basis and device_test_frequency(preset).months == 12


@pytest.mark.citation("policy")
def test_a_year_after_february_29_is_february_28():
    assert next_test_due("mineola", tested_on=date(2028, 2, 29))[0] == date(2029, 2, 28)


FOUR_MONTHS = "§ 141-10 F (every four months for twelve months after a defective certification)"


@pytest.mark.citation("§ 141-10 F")
@pytest.mark.parametrize(("tested_on", "due", "citation"), [
    # defective certification delivered 2026-02-01: the twelve months run to 2027-02-01
    (date(2026, 2, 20), date(2026, 6, 20), FOUR_MONTHS),
    (date(2026, 6, 15), date(2026, 10, 15), FOUR_MONTHS),
    (date(2026, 9, 30), date(2027, 1, 30), FOUR_MONTHS),
    # four months from Oct 1 reach the end of the twelve months: the last period is met, yearly from here
    (date(2026, 10, 1), date(2027, 10, 1), "§ 141-4 C; § 141-10 F"),
    # a test before the defective certification: four months from the certification
    (date(2026, 1, 10), date(2026, 6, 1), FOUR_MONTHS),
    (date(2027, 3, 1), date(2028, 3, 1), "§ 141-4 C; § 141-10 F"),
])
def test_lansing_every_four_months_after_a_defective_certification(tested_on, due, citation):
    assert next_test_due("lansing", tested_on=tested_on,
                         defective_certification_on=date(2026, 2, 1)) == (due, citation)


@pytest.mark.citation("§ 141-10 F")
def test_only_lansing_has_a_rule_after_a_defective_certification():
    with pytest.raises(ValueError, match="has no rule for tests after a defective certification"):
        next_test_due("mineola", tested_on=date(2026, 3, 1), defective_certification_on=date(2026, 2, 1))
    with pytest.raises(ValueError, match="'springfield'"):
        next_test_due("springfield", tested_on=date(2026, 3, 1))


# --- Lansing § 141-11 B ------------------------------------------------------------------------------------

_LANSING_FINE = preset_read(code="lansing").data["backflow"]["fine"]


def lansing_fine(**kwargs) -> FineComputation:
    """The ``per_day_pipe`` fine with Lansing's [backflow.fine]: at most $25.00 a day, after 180 days."""
    return pipe_fine(maximum=Decimal(_LANSING_FINE["per_day"]), grace_days=_LANSING_FINE["after_days"],
                     citation=_LANSING_FINE["citation"], **kwargs)


@pytest.mark.citation("§ 141-11 B")
def test_lansing_fine_the_worked_example():
    # Notice 2026-01-01, 2" pipe, still missing on 2026-07-15: days 181–195 are Jul 1–15 → 15 × $25 × 2.
    fine = lansing_fine(notice_on=date(2026, 1, 1), as_of=date(2026, 7, 15), largest_pipe_inches=D("2"))
    assert fine == FineComputation(
        days_beyond=15, per_day=D("25.00"), inches=D("2"), amount=D("750.00"), citation="§ 141-11 B",
        words="15 days beyond the 180th day after the notice of Jan 1, 2026 (Jul 1, 2026 – Jul 15, 2026) × "
              "$25.00 a day × 2 inches (the largest supply pipe) = $750.00 (§ 141-11 B)")


@pytest.mark.citation("§ 141-11 B")
@pytest.mark.parametrize(("as_of", "inches", "days", "amount"), [
    (date(2026, 1, 1), D("2"), 0, D("0.00")),       # the notice's own day
    (date(2026, 6, 30), D("2"), 0, D("0.00")),      # day 180
    (date(2026, 7, 1), D("2"), 1, D("50.00")),      # day 181: $25 × 2
    (date(2026, 7, 1), D("1"), 1, D("25.00")),
    (date(2026, 7, 1), D("1.5"), 1, D("37.50")),    # 1½" pipe
    (date(2026, 7, 15), D("1.5"), 15, D("562.50")),
    (date(2026, 7, 1), D("0.625"), 1, D("15.63")),  # 5/8": 15.625 half-up
    (date(2026, 7, 3), D("0.625"), 3, D("46.88")),  # rounded once: 46.875, not 3 × 15.63
    (date(2026, 12, 31), D("6"), 184, D("27600.00")),
])
def test_lansing_fine_edges(as_of, inches, days, amount):
    fine = lansing_fine(notice_on=date(2026, 1, 1), as_of=as_of, largest_pipe_inches=inches)
    assert (fine.days_beyond, fine.amount) == (days, amount)
    if days == 0:
        assert fine.words.startswith("no fine") and "Jul 1, 2026" in fine.words


@pytest.mark.citation("§ 141-11 B")
def test_lansing_fine_a_lower_daily_rate_but_never_above_25():
    lower = lansing_fine(notice_on=date(2026, 1, 1), as_of=date(2026, 7, 15), largest_pipe_inches=D("2"),
                         per_day=D("10"))
    assert (lower.per_day, lower.amount) == (D("10.00"), D("300.00"))
    with pytest.raises(ValueError, match=r"at most \$25.00 a day"):
        lansing_fine(notice_on=date(2026, 1, 1), as_of=date(2026, 7, 15), largest_pipe_inches=D("2"),
                     per_day=D("25.01"))


@pytest.mark.citation("§ 141-11 B")
@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"as_of": date(2025, 12, 31), "largest_pipe_inches": D("2")}, ValueError, "on or after the original notice"),
    ({"as_of": date(2026, 7, 15), "largest_pipe_inches": D("0")}, ValueError, "more than 0 inches"),
    ({"as_of": date(2026, 7, 15), "largest_pipe_inches": 1.5}, TypeError, "not float"),
])
def test_lansing_fine_refuses_what_cannot_be_right(kwargs, error, words):
    with pytest.raises(error, match=words):
        lansing_fine(notice_on=date(2026, 1, 1), **kwargs)
