"""Stored rate schedules (and their history) move from ``semiannual`` to ``per_bill`` and back."""

from datetime import date
from importlib import import_module

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

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


@pytest.mark.django_db(transaction=True)
def test_the_migration_rewrites_schedules_and_their_history_both_ways():
    executor = MigrationExecutor(connection)
    before, after = list(migration.Migration.dependencies), [("billing", NAME)]
    try:
        executor.migrate(before)
        old_apps = executor.loader.project_state(before).apps
        schedule = old_apps.get_model("billing", "RateSchedule").objects.create(
            effective_on=date(2024, 6, 1), citation="§ 45.28 A(1)", rules=OLD)
        old_apps.get_model("billing", "HistoricalRateSchedule").objects.create(
            id=schedule.pk, effective_on=schedule.effective_on, citation=schedule.citation, is_sample=False,
            rules=OLD, history_date="2026-01-01T00:00:00Z", history_type="+")

        executor = MigrationExecutor(connection)
        executor.migrate(after)
        new_apps = executor.loader.project_state(after).apps
        assert new_apps.get_model("billing", "RateSchedule").objects.get().rules == NEW
        assert new_apps.get_model("billing", "HistoricalRateSchedule").objects.get().rules == NEW

        executor = MigrationExecutor(connection)
        executor.migrate(before)
        assert old_apps.get_model("billing", "RateSchedule").objects.get().rules == OLD
        assert old_apps.get_model("billing", "HistoricalRateSchedule").objects.get().rules == OLD
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_the_structure_takes_its_descriptive_name_both_ways():
    renaming = import_module("billing.migrations.0032_rate_structure_name")
    before, after = list(renaming.Migration.dependencies), [("billing", "0032_rate_structure_name")]
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(before)
        old_apps = executor.loader.project_state(before).apps
        old_apps.get_model("billing", "RateSchedule").objects.create(
            effective_on=date(2024, 6, 1), citation="§ 45.28 A(1)", rules=NEW)
        old_apps.get_model("billing", "RateSchedule").objects.create(
            effective_on=date(2025, 6, 1), citation="§ 45.28 A(1)", rules={**NEW, "structure": "tiered"})

        executor = MigrationExecutor(connection)
        executor.migrate(after)
        new_apps = executor.loader.project_state(after).apps
        structures = list(new_apps.get_model("billing", "RateSchedule").objects.order_by("effective_on")
                          .values_list("rules__structure", flat=True))
        assert structures == ["minimum_and_blocks", "tiered"]

        executor = MigrationExecutor(connection)
        executor.migrate(before)
        structures = list(old_apps.get_model("billing", "RateSchedule").objects.order_by("effective_on")
                          .values_list("rules__structure", flat=True))
        assert structures == ["mineola_blocks", "tiered"]
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
