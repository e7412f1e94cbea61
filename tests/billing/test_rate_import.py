"""import_rates and export_rates: an OWRS file is added all or nothing, each refusal naming the line or the
field; an exported schedule imports back as it was."""

import io
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from billing.models import RateSchedule
from billing.ordinance import rate_structure_for
from billing.rating import RatingInput
from billing.services.rate_import import activate_import, parse_class_map, prepare_import, preview_bill
from core.errors import ApplicationError

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "owrs"
RATEPARSER = str(FIXTURES / "rateparser.owrs")


def command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def refused(*args) -> str:
    before = RateSchedule.objects.count()
    with pytest.raises(CommandError) as exc:
        command(*args)
    assert RateSchedule.objects.count() == before
    return str(exc.value)


def test_import_adds_the_schedule_and_says_what_each_class_bills(mineola):
    out = command("import_rates", RATEPARSER, "--effective-on", "2026-07-01")
    assert out.splitlines()[:4] == [
        f"{RATEPARSER}: added the rate schedule in force from 2026-07-01 (Resolution 2016-4), 3 customer classes:",
        "  COMMERCIAL → other, nonprofit; reads water_type",
        "  RESIDENTIAL_SINGLE → one_two_family",
        "  RESIDENTIAL_BUDGET → accounts naming it (cust_class); reads hhsize"]
    assert "RESIDENTIAL_BUDGET bills only accounts whose rate fields name the class (cust_class)." in out
    schedule = RateSchedule.objects.get(effective_on=date(2026, 7, 1))
    assert (schedule.citation, schedule.is_sample, schedule.rules["structure"]) == ("Resolution 2016-4", False, "owrs")
    assert schedule.rules["class_map"] == {"RESIDENTIAL_SINGLE": "one_two_family", "COMMERCIAL": "other, nonprofit"}


def test_dry_run_saves_nothing(mineola):
    out = command("import_rates", RATEPARSER, "--effective-on", "2026-07-01", "--dry-run")
    assert "would add the rate schedule in force from 2026-07-01" in out and "Dry run: nothing saved." in out
    assert RateSchedule.objects.count() == 1


def test_class_map_and_citation_given_on_the_command_line(mineola):
    command("import_rates", RATEPARSER, "--effective-on", "2026-07-01", "--citation", "Resolution 2026-11",
            "--class-map", "RESIDENTIAL_SINGLE=one_two_family", "COMMERCIAL=other",
            "--class-map", "COMMERCIAL=nonprofit")
    schedule = RateSchedule.objects.get(effective_on=date(2026, 7, 1))
    assert schedule.citation == "Resolution 2026-11"
    assert schedule.rules["class_map"] == {"RESIDENTIAL_SINGLE": "one_two_family", "COMMERCIAL": "other, nonprofit"}
    rated = rate_structure_for(schedule.rules).rate(RatingInput(
        frequency="semiannual", category="one_two_family", gallons=0, meter_size="5/8"))
    # RESIDENTIAL_SINGLE with no use: the $11.00 service charge alone; the citation given is on the line.
    assert [(line.kind, line.amount, line.citation) for line in rated.lines] == [
        ("service", Decimal("11.00"), "Resolution 2026-11")]


def test_malformed_yaml_is_refused_naming_the_line(mineola):
    message = refused("import_rates", str(FIXTURES / "malformed.owrs"), "--effective-on", "2026-07-01")
    assert "line 8: file: the file is not valid YAML" in message


def test_an_unknown_class_in_the_class_map_is_refused(mineola):
    message = refused("import_rates", RATEPARSER, "--effective-on", "2026-07-01", "--class-map",
                      "RESIDENTIAL_MULTI=one_two_family", "COMMERCIAL=other, nonprofit")
    assert ("class_map: RESIDENTIAL_MULTI is not a customer class of the file (classes: COMMERCIAL, "
            "RESIDENTIAL_SINGLE, RESIDENTIAL_BUDGET)") in message


def test_a_bad_category_and_a_frequency_never_billed_are_refused(mineola):
    message = refused("import_rates", RATEPARSER, "--effective-on", "2026-07-01", "--class-map",
                      "COMMERCIAL=business", "RESIDENTIAL_SINGLE=one_two_family@quarterly")
    assert "COMMERCIAL=business: 'business' is not a category (categories: one_two_family, other, nonprofit)" in message
    assert ("RESIDENTIAL_SINGLE=one_two_family@quarterly: the billing calendar never bills quarterly (it bills "
            "semiannual, monthly)") in message


def test_a_category_left_without_a_class_is_refused(mineola):
    message = refused("import_rates", RATEPARSER, "--effective-on", "2026-07-01", "--class-map",
                      "COMMERCIAL=other", "RESIDENTIAL_SINGLE=one_two_family@semiannual")
    assert ("no class bills one_two_family billed monthly, nonprofit billed semiannual, nonprofit billed "
            "monthly") in message


def test_tier_starts_and_prices_of_different_lengths_are_refused(mineola):
    message = refused("import_rates", str(FIXTURES / "tier_lengths.owrs"), "--effective-on", "2026-07-01")
    assert ("line 9: rate_structure.COMMERCIAL.tier_prices: tier_starts has 3 tiers but tier_prices has 2"
            in message)


def test_a_second_schedule_on_the_same_date_is_refused(mineola):
    command("import_rates", RATEPARSER, "--effective-on", "2026-07-01")
    message = refused("import_rates", RATEPARSER, "--effective-on", "2026-07-01")
    assert "effective_on: a rate schedule already takes effect on 2026-07-01 (Resolution 2016-4)" in message


def test_a_file_with_no_citation_needs_one(mineola):
    text = (FIXTURES / "rateparser.owrs").read_text().replace('  citation: "Resolution 2016-4"\n', "")
    with pytest.raises(ApplicationError) as exc:
        prepare_import(text, effective_on=date(2026, 7, 1))
    assert exc.value.errors[0].field == "citation"
    assert prepare_import(text, effective_on=date(2026, 7, 1), citation="Resolution 9").citation == "Resolution 9"


def test_activating_twice_on_a_date_is_refused_not_an_error_page(mineola):
    prepared = prepare_import((FIXTURES / "rateparser.owrs").read_text(), effective_on=date(2026, 7, 1))
    activate_import(prepared)
    with pytest.raises(ApplicationError, match="already takes effect on 2026-07-01; nothing was added"):
        activate_import(prepared)
    assert RateSchedule.objects.count() == 2


def test_parse_class_map_merges_a_class_and_refuses_bad_entries():
    assert parse_class_map(["OTHER=other", "", "OTHER=nonprofit", "MONTHLY=other@monthly"]) == {
        "OTHER": "other, nonprofit", "MONTHLY": "other@monthly"}
    with pytest.raises(ApplicationError) as exc:
        parse_class_map(["OTHER", "=other", "MONTHLY=other@"])
    assert [(e.line, e.field) for e in exc.value.errors] == [(1, "class_map"), (2, "class_map"), (3, "class_map")]
    assert "'OTHER' is not OWRS_CLASS=category" in exc.value.errors[0].message
    assert "'other@' in 'MONTHLY=other@' is not category or category@frequency" in exc.value.errors[2].message


def test_preview_bill(mineola):
    prepared = prepare_import((FIXTURES / "rateparser.owrs").read_text(), effective_on=date(2026, 7, 1))
    # RESIDENTIAL_SINGLE, 5/8": 27.3 ccf = 20,421.8196 gal; 20,422 gal is 27.30024… ccf: tiers 14, 6, 5, 2.30024…
    # → 40.18 + 25.74 + 32.20 + 23.16 (2.30024 × 10.07 = 23.1634) + 11.00 + 20.00 (10 ccf × 2) = 152.28.
    rated = preview_bill(prepared.rules, category="one_two_family", meter_size="5/8", gallons=20422,
                         frequency="semiannual")
    assert rated.total == Decimal("152.28")
    assert RateSchedule.objects.count() == 1
    with pytest.raises(ApplicationError, match="the account carries no water_type"):
        preview_bill(prepared.rules, category="other", meter_size="3", gallons=1000, frequency="monthly")
    assert preview_bill(prepared.rules, category="other", meter_size="3", gallons=290_244, frequency="monthly",
                        facts={"water_type": "POTABLE"}).total == Decimal("1632.16")


def _without_date(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("  effective_date:")]


def test_export_import_export_is_the_same_file_but_its_date(mineola, tmp_path):
    first = command("export_rates", "--format", "owrs", "--on", "2026-01-01")
    assert "  effective_date: 2024-06-01" in first.splitlines()
    path = tmp_path / "mineola.owrs"
    command("export_rates", "--on", "2026-01-01", "--output", str(path))
    assert path.read_text() == first
    out = command("import_rates", str(path), "--effective-on", "2026-07-01")
    assert "  MONTHLY → one_two_family@monthly, other@monthly, nonprofit@monthly" in out
    second = command("export_rates", "--format", "owrs", "--on", "2026-07-01")
    assert "  effective_date: 2026-07-01" in second.splitlines()
    assert _without_date(second) == _without_date(first)
    assert second.replace("2026-07-01", "2024-06-01") == first

    # And the imported file imports back once more, rating the same.
    (tmp_path / "again.owrs").write_text(second)
    command("import_rates", str(tmp_path / "again.owrs"), "--effective-on", "2026-08-01")
    third = command("export_rates", "--on", "2026-08-01")
    assert third.replace("2026-08-01", "2024-06-01") == first
    bill = RatingInput(frequency="semiannual", category="one_two_family", gallons=62500)
    totals = {rate_structure_for(s.rules).rate(bill).total for s in RateSchedule.objects.all()}
    assert totals == {Decimal("186.13")}


def test_export_with_no_schedule_in_force_is_refused(mineola):
    with pytest.raises(CommandError, match="no rate schedule is in force on 2020-01-01"):
        command("export_rates", "--on", "2020-01-01")


def test_sample_values_exported_and_imported_back_are_still_a_sample(mineola, tmp_path):
    RateSchedule.objects.update(is_sample=True)
    text = command("export_rates", "--on", "2026-01-01")
    assert "  sample: true" in text.splitlines()
    path = tmp_path / "sample.owrs"
    path.write_text(text)
    out = command("import_rates", str(path), "--effective-on", "2026-07-01")
    assert "the schedule is added as sample rates" in out
    assert RateSchedule.objects.get(effective_on=date(2026, 7, 1)).is_sample is True
    # The adopted values say nothing of a sample: imported, they are what bills are issued with.
    RateSchedule.objects.update(is_sample=False)
    adopted = command("export_rates", "--on", "2026-07-01")
    assert "  sample: true" not in adopted.splitlines()
    path.write_text(adopted)
    command("import_rates", str(path), "--effective-on", "2026-08-01")
    assert RateSchedule.objects.get(effective_on=date(2026, 8, 1)).is_sample is False
