"""Stored rate schedules (and their history) move from ``semiannual`` to ``per_bill`` and back."""

from datetime import date
from importlib import import_module

import pytest
from django.apps import apps as django_apps

from billing.models import RateSchedule

NAME = "0010_rate_rules_per_bill"
migration = import_module(f"billing.migrations.{NAME}")

OLD = {"note": "sample", "semiannual": {"other": {"minimum": {"amount": "60.00"}}}, "monthly": {"citation": "§"}}
NEW = {"note": "sample", "per_bill": {"other": {"minimum": {"amount": "60.00"}}}, "monthly": {"citation": "§"},
       "structure": "mineola_blocks"}


def test_the_rules_are_renamed_and_name_their_structure():
    assert migration._forward(OLD) == NEW
    assert migration._backward(NEW) == OLD
    assert migration._forward(NEW) == NEW  # already migrated: unchanged
    other = {**NEW, "structure": "tiered"}
    assert migration._backward(other) == {**OLD, "structure": "tiered"}


def _schedule(rules: dict, effective_on=date(2024, 6, 1)) -> RateSchedule:
    """A stored schedule and its history row, both holding ``rules`` as an earlier release stored them (a queryset
    update writes no history, so the history keeps what is set here)."""
    schedule = RateSchedule.objects.create(effective_on=effective_on, citation="§ 45.28 A(1)", rules={})
    RateSchedule.objects.filter(pk=schedule.pk).update(rules=rules)
    RateSchedule.history.filter(id=schedule.pk).update(rules=rules)
    return schedule


def _stored(schedule: RateSchedule) -> tuple[dict, list[dict]]:
    return (RateSchedule.objects.get(pk=schedule.pk).rules,
            list(RateSchedule.history.filter(id=schedule.pk).values_list("rules", flat=True)))


@pytest.mark.django_db
def test_the_migration_rewrites_schedules_and_their_history_both_ways():
    # The migration's own functions, run on the tables as they are: the rules column is the same JSON in every
    # state since, so no migrating the whole database back and forth is needed to see the rows rewritten.
    schedule = _schedule(OLD)
    migration.rules_per_bill(django_apps, None)
    assert _stored(schedule) == (NEW, [NEW])
    migration.rules_semiannual(django_apps, None)
    assert _stored(schedule) == (OLD, [OLD])


@pytest.mark.django_db
def test_the_structure_takes_its_descriptive_name_both_ways():
    renaming = import_module("billing.migrations.0032_rate_structure_name")
    blocks, tiered = _schedule(NEW), _schedule({**NEW, "structure": "tiered"}, date(2025, 6, 1))
    renaming.forward(django_apps, None)
    assert _stored(blocks)[0]["structure"] == "minimum_and_blocks"
    assert {rules["structure"] for rules in _stored(blocks)[1]} == {"minimum_and_blocks"}
    assert _stored(tiered)[0]["structure"] == "tiered"
    renaming.backward(django_apps, None)
    assert _stored(blocks)[0]["structure"] == "mineola_blocks"
    assert {rules["structure"] for rules in _stored(blocks)[1]} == {"mineola_blocks"}
