"""setup_utility: idempotent, and editing the preset updates by effective date without rewriting history."""

import io
from datetime import date

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command

from billing.models import Fee, RateSchedule
from ordinance import files as presets
from ordinance.models import Utility
from ordinance.selectors import section_params
from tests.ordinance_steps import section_set

pytestmark = pytest.mark.django_db


def counts():
    return {m._meta.label: m.objects.count() for m in apps.get_models()}


def setup(*args):
    call_command("setup_utility", *args, "--date", "2026-11-01", stdout=io.StringIO())


def test_installs_mineola_with_citations(mineola):
    schedule = RateSchedule.objects.get()
    assert schedule.effective_on == date(2024, 6, 1) and schedule.is_sample
    assert schedule.rules["per_bill"]["one_two_family"]["minimum"]["amount"] == "45.00"
    tank = Fee.objects.get(code="tank_wagon")
    assert tank.amount.amount == 25 and tank.citation == "§ 45.28 D" and "Words control" in tank.note
    assert section_params("penalty")["citation"] == "§ 45.29 E"
    assert any(n["citation"] == "§ 45.28 D" for n in section_params("note"))


def test_twice_changes_nothing(mineola):
    before = counts()
    setup("mineola")
    assert counts() == before


def test_unknown_preset_is_refused(db):
    with pytest.raises(CommandError, match="unknown preset 'springfield'"):
        setup("springfield")


def test_new_effective_date_adds_a_version_and_used_ones_are_protected(mineola, tmp_path, monkeypatch):
    from tests.billing.steps import account_with_meter, read, run

    text = (presets.PRESET_DIR / "mineola.toml").read_text()
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    monkeypatch.setattr(presets, "PRESET_DIR", tmp_path)

    # Rewriting the schedule the February bill used is refused...
    (tmp_path / "mineola.toml").write_text(text.replace('amount = "45.00"', 'amount = "47.00"'))
    with pytest.raises(CommandError, match="already been used on bills"):
        setup("mineola")
    assert RateSchedule.objects.get().rules["per_bill"]["one_two_family"]["minimum"]["amount"] == "45.00"

    # ...while a new version with its own effective date is added beside it.
    section = text[text.index("\n[[rate_schedule]]\n"):text.index("\n[[fee]]\n")]
    new_version = section.replace("effective_on = 2024-06-01", "effective_on = 2026-06-01").replace(
        'amount = "45.00"', 'amount = "47.00"')
    (tmp_path / "mineola.toml").write_text(text + "\n" + new_version)
    setup("mineola")
    assert list(RateSchedule.objects.order_by("effective_on").values_list("effective_on", flat=True)) == [
        date(2024, 6, 1), date(2026, 6, 1)]
    read(meter, date(2026, 7, 10), 1_082_500)
    run("run_billing", "--date", "2026-08-01")
    august = account.bills.get(bill_date=date(2026, 8, 1))
    assert august.total.amount == 47 and august.rate_schedule.effective_on == date(2026, 6, 1)
    assert account.bills.get(bill_date=date(2026, 2, 1)).total.amount.to_eng_string() == "186.13"
    assert Utility.objects.count() == 1


def test_nightly_job_is_scheduled_once_and_a_clerks_edit_survives(mineola):
    from django_celery_beat.models import PeriodicTask

    task = PeriodicTask.objects.get(task="waterbilling.tasks.nightly")
    assert (task.crontab.hour, task.crontab.minute, str(task.crontab.timezone)) == ("1", "30", "America/New_York")
    task.enabled = False
    task.save()
    setup("mineola")
    assert PeriodicTask.objects.filter(task="waterbilling.tasks.nightly").count() == 1
    assert not PeriodicTask.objects.get(task="waterbilling.tasks.nightly").enabled


def test_a_schedule_naming_the_nightly_tasks_former_name_is_pointed_at_the_job(mineola):
    from django_celery_beat.models import CrontabSchedule, PeriodicTask

    task = PeriodicTask.objects.get(task="waterbilling.tasks.nightly")
    # A site installed before the job moved, whose supervisor set it to 02:15.
    task.task, task.crontab = "billing.tasks.nightly", CrontabSchedule.objects.create(minute="15", hour="2")
    task.save()
    setup("mineola")
    task = PeriodicTask.objects.get(name=task.name)
    assert (task.task, task.crontab.hour, task.crontab.minute) == ("waterbilling.tasks.nightly", "2", "15")


def test_installing_changed_rules_again_dates_the_utilitys_change(mineola):
    # The penalties preview trusts the night's assessment only while the utility's rules are unchanged since.
    section_set("penalty", monthly_percent="2")
    before = Utility.objects.get().updated_at
    call_command("setup_utility", "mineola", "--date", "2026-01-01", stdout=io.StringIO())
    utility = Utility.objects.get()
    assert section_params("penalty")["monthly_percent"] == "1"
    assert utility.updated_at > before
