"""Sample rates are not for real bills: a real site refuses to bill on them unless a run accepts them."""

import io
import logging
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from billing.models import Bill, BillingRun, LedgerEntry, RateSchedule
from billing.runs.lifecycle import billing_run_create, billing_run_preview
from core.errors import ApplicationError
from ordinance.models import Utility
from tests.billing.test_runs import account_with_meter, read, run
from waterbilling.nightly import nightly_run

pytestmark = pytest.mark.django_db

REFUSAL = ("the rate schedule in force on 2026-02-01 (effective 2024-06-01, § 45.28 A(1)) is the preset's "
           "sample schedule")


def setup(*args):
    out = io.StringIO()
    call_command("setup_utility", "mineola", *args, "--date", "2026-01-01", stdout=out)
    return out.getvalue()


def worked_example_account():
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    return account, meter


def test_a_real_site_refuses_to_bill_on_the_sample_schedule(mineola_real_site):
    worked_example_account()
    with pytest.raises(CommandError) as refused:
        run("run_billing", "--date", "2026-02-01")
    message = str(refused.value)
    assert REFUSAL in message
    assert "sample rates are not for real bills" in message
    for way_out in ("install the adopted rates", "mark this a demo/training site",
                    "setup_utility mineola --demo", "--accept-sample-rates"):
        assert way_out in message
    assert not Bill.objects.exists() and not BillingRun.objects.exists()


def test_the_service_refuses_too_naming_the_field(mineola_real_site):
    worked_example_account()
    with pytest.raises(ApplicationError) as refused:
        billing_run_create(run_on=date(2026, 2, 1))
    assert refused.value.errors[0].field == "accept_sample_rates"
    assert not BillingRun.objects.exists()


def test_accepting_the_sample_rates_bills_and_is_recorded_on_the_run(mineola_real_site):
    worked_example_account()
    out = run("run_billing", "--date", "2026-02-01", "--accept-sample-rates")
    assert "1 bills issued totalling $186.13" in out
    assert "sample" in out
    assert BillingRun.objects.get().accept_sample_rates
    assert Bill.objects.get().total.amount == Decimal("186.13")


def test_a_demo_site_bills_on_the_sample_rates_without_asking(mineola_real_site):
    setup("--demo", "0")
    assert Utility.objects.get().is_demo_site
    worked_example_account()
    assert "1 bills issued totalling $186.13" in run("run_billing", "--date", "2026-02-01")
    assert not BillingRun.objects.get().accept_sample_rates  # nothing was accepted: the site allows it


def test_setup_utility_again_without_demo_keeps_the_site_a_demo_site(mineola_real_site):
    assert not Utility.objects.get().is_demo_site
    setup("--demo", "0")
    setup()
    assert Utility.objects.get().is_demo_site


def test_setup_utility_on_a_real_site_says_the_rates_are_sample(mineola_real_site):
    out = setup()
    assert "sample" in out and "--accept-sample-rates" in out


def test_adopted_rates_bill_without_asking(mineola_real_site):
    sample = RateSchedule.objects.get()
    RateSchedule.objects.create(effective_on=date(2026, 1, 1), citation="§ 45.28 A(1)", is_sample=False,
                                rules=sample.rules)
    worked_example_account()
    assert "1 bills issued totalling $186.13" in run("run_billing", "--date", "2026-02-01")
    assert not BillingRun.objects.get().accept_sample_rates


def test_accepting_when_the_rates_are_not_sample_records_nothing(mineola_real_site):
    sample = RateSchedule.objects.get()
    RateSchedule.objects.create(effective_on=date(2026, 1, 1), citation="§ 45.28 A(1)", is_sample=False,
                                rules=sample.rules)
    worked_example_account()
    run("run_billing", "--date", "2026-02-01", "--accept-sample-rates")
    assert not BillingRun.objects.get().accept_sample_rates


def test_dry_run_warns_and_still_previews(mineola_real_site):
    worked_example_account()
    out = run("run_billing", "--date", "2026-02-01", "--dry-run")
    assert "1 bills totalling $186.13" in out
    assert REFUSAL in out and "--accept-sample-rates" in out
    preview = billing_run_preview(run_on=date(2026, 2, 1), accept_sample_rates=True)
    assert preview.bills == 1 and not preview.warning
    assert not Bill.objects.exists() and not BillingRun.objects.exists()


def test_nightly_skips_billing_with_a_message_and_still_assesses_penalties(mineola_real_site, caplog):
    worked_example_account()
    run("run_billing", "--date", "2026-02-01", "--accept-sample-rates")
    # A 2" meter is due monthly on 2026-04-01; the February bill's first penalty fell on 2026-03-02.
    large, meter = account_with_meter(book=3, category="other", size="2", start=date(2026, 2, 27), value=0)
    read(meter, date(2026, 3, 30), 90_000)
    with caplog.at_level(logging.WARNING, logger="billing.services.nightly"):
        report = nightly_run(as_of=date(2026, 4, 1))
    assert report["bills"] == 0 and "sample schedule" in report["billing_skipped"]
    assert "2026-04-01" in report["billing_skipped"]
    assert any("sample schedule" in record.getMessage() for record in caplog.records)
    assert Bill.objects.filter(account=large).count() == 0
    # 5% of 186.13 = 9.3065 → 9.31, on 2026-03-02.
    assert report["penalties"] == 1 and report["penalty_total"] == "9.31"
    assert list(LedgerEntry.objects.filter(kind="penalty").values_list("amount", flat=True)) == [Decimal("9.31")]

    out = io.StringIO()
    call_command("nightly", "--date", "2026-04-01", stdout=out)
    assert "billing skipped" in out.getvalue() and "sample schedule" in out.getvalue()


def test_nightly_bills_on_a_demo_site(mineola, django_capture_on_commit_callbacks):
    account, meter = account_with_meter(book=3, category="other", size="2", start=date(2026, 2, 27), value=0)
    read(meter, date(2026, 3, 30), 90_000)
    with django_capture_on_commit_callbacks(execute=True):  # the run's chunks are handed out on commit
        report = nightly_run(as_of=date(2026, 4, 1))
    assert "billing_skipped" not in report and BillingRun.objects.get().pk == report["billing_run"]
    assert Bill.objects.get().total.amount == Decimal("480.00")
