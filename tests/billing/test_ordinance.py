"""The ordinance registries: a preset names a strategy; an unknown name is refused with the known ones."""

from datetime import date

import pytest

from billing.calendars import QuarterlySingleBook
from billing.ordinance import (
    CALENDARS,
    FEE_RULES,
    PENALTY_SCHEMES,
    RATE_STRUCTURES,
    Registry,
    ordinance_on,
    rate_structure_for,
)
from billing.penalties.rules import OneTime
from billing.rating import MinimumAndBlocks
from core.errors import ApplicationError
from ordinance.models import Utility


@pytest.mark.parametrize(("registry", "some_known"), [
    (CALENDARS, {"book_semiannual_monthly_large", "quarterly_single_book"}),
    (PENALTY_SCHEMES, {"first_then_monthly", "none", "one_time"}),
    (RATE_STRUCTURES, {"minimum_and_blocks"}),
    (FEE_RULES, {"by_size", "clerk", "flat", "pro_rata"}),
])
def test_an_unknown_name_is_refused_with_the_known_ones(registry, some_known):
    known = registry.names()
    assert some_known <= set(known)
    with pytest.raises(ApplicationError) as caught:
        registry.build("springfield", {})
    assert str(caught.value) == f"unknown {registry.kind} 'springfield'; known: {', '.join(known) or 'none'}"
    assert caught.value.errors[0].field == registry.field


def test_a_registry_builds_the_named_class_from_its_parameters():
    calendar = CALENDARS.build("quarterly_single_book", {"months": [2, 5, 8, 11], "due": {"days_after_bill_date": 30}})
    assert isinstance(calendar, QuarterlySingleBook) and calendar.months == (2, 5, 8, 11)
    scheme = PENALTY_SCHEMES.build("one_time", {"percent": "15", "citation": "§ 141-17", "charges_on": ["water"]})
    assert isinstance(scheme, OneTime) and scheme.citation == "§ 141-17"
    # A schedule that names no structure is rated by Mineola's blocks, as every schedule was before.
    assert isinstance(rate_structure_for({"per_bill": {}}), MinimumAndBlocks)


def test_a_missing_parameter_is_named():
    with pytest.raises(ApplicationError, match="the penalty scheme 'one_time' needs the parameter 'percent'"):
        PENALTY_SCHEMES.build("one_time", {"citation": "§ 141-17"})


def test_two_classes_under_one_name_are_refused():
    registry = Registry("thing", field="thing")

    @registry.register
    class First:
        name = "same"

    class Second:
        name = "same"

    with pytest.raises(ValueError, match="two things are named 'same'"):
        registry.register(Second)
    assert registry.register(First) is First  # registering the same class again is harmless


def test_a_preset_naming_an_unknown_scheme_is_refused_at_install(db, tmp_path, monkeypatch):
    from ordinance import files as presets
    from ordinance.install import preset_install

    text = (presets.PRESET_DIR / "mineola.toml").read_text()
    monkeypatch.setattr(presets, "PRESET_DIR", tmp_path)
    (tmp_path / "mineola.toml").write_text(text.replace('scheme = "first_then_monthly"', 'scheme = "daily"'))
    with pytest.raises(ApplicationError, match=r"\[penalty\] scheme = 'daily' is not one of first_then_monthly"):
        preset_install(code="mineola")
    assert not Utility.objects.exists()


def test_the_ordinance_on_a_date(mineola):
    ordinance = ordinance_on(date(2026, 2, 1))
    assert ordinance.utility == mineola and ordinance.payment_order == "principal_first"
    assert ordinance.calendar.name == "book_semiannual_monthly_large"
    assert ordinance.penalties.citation == "§ 45.29 E"
    assert ordinance.rate_schedule.effective_on == date(2024, 6, 1)
    assert isinstance(ordinance.rates, MinimumAndBlocks)
    with pytest.raises(ApplicationError, match="no rate schedule is in force on 2024-05-31; the earliest takes "
                                               "effect 2024-06-01"):
        assert ordinance_on(date(2024, 5, 31)).rate_schedule is None


def test_no_ordinance_before_a_preset_is_installed(db):
    with pytest.raises(ApplicationError, match="no ordinance preset is installed"):
        ordinance_on(date(2026, 2, 1))
