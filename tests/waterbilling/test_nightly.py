"""The nightly job: the apps' steps in order, each recorded with its counts; a failed step stops the night
and the next attempt resumes from it; a finished night run again changes nothing.

One account in book 1 read at 62,500 gal is billed 186.13 on 2026-02-01; its first penalty, 5% = 9.31,
falls on 2026-03-02.
"""

import io
import os
import time
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from billing import tasks as billing_tasks
from billing.models import AccountStanding, Bill, BillingRun, LedgerEntry
from billing.runs import lifecycle as runs
from billing.services import nightly as billing_nightly
from core.errors import ApplicationError, Conflict
from core.models import NightlyRun, NightlyStep
from core.pipeline import Step, pipeline_run
from tests.billing.steps import account_with_meter, read
from waterbilling import nightly, tasks
from waterbilling.nightly import nightly_run, nightly_steps

pytestmark = pytest.mark.django_db

BILL_DAY, PENALTY_DAY = date(2026, 2, 1), date(2026, 3, 2)


@pytest.fixture
def account(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    return account


def night(day: date) -> str:
    out = io.StringIO()
    call_command("nightly", "--date", day.isoformat(), stdout=out)
    return out.getvalue()


def steps(day: date) -> list[tuple]:
    return list(NightlyStep.objects.filter(run__run_on=day).order_by("position")
                .values_list("position", "name", "status"))


def books() -> tuple:
    return (list(Bill.objects.order_by("id").values_list("id", "total", "status")),
            list(LedgerEntry.objects.order_by("id").values_list("id", "kind", "amount", "posted_on")),
            list(BillingRun.objects.order_by("id").values_list("id", "status", "bills_created")))


@pytest.fixture
def calls(monkeypatch):
    """Count the calls of billing's nightly steps (looked up by name when each step runs)."""
    counted = {}
    for name in ("nightly_bill", "nightly_penalties", "nightly_bill_pdfs"):
        real = getattr(billing_nightly, name)

        def counting(*, as_of, _real=real, _name=name):
            counted[_name] = counted.get(_name, 0) + 1
            return _real(as_of=as_of)

        monkeypatch.setattr(billing_nightly, name, counting)
    return counted


def test_the_steps_run_in_order_and_each_is_recorded_with_its_counts(account):
    out = night(BILL_DAY)

    run = BillingRun.objects.get()
    assert run.status == "done" and Bill.objects.get().total.amount == Decimal("186.13")
    night_ = NightlyRun.objects.get()
    assert (night_.run_on, night_.status) == (BILL_DAY, "done") and night_.finished_at is not None
    assert steps(BILL_DAY) == [(1, "bill", "done"), (2, "penalties", "done"), (3, "bill_pdfs", "done"), (4, "notices", "done"), (5, "customer_notices", "done"), (6, "paper_notices", "done"), (7, "termination_deadlines", "done"),
        (8, "backflow_tests_due", "done"), (9, "payment_plans", "done"), (10, "standings", "done"),
        (11, "autopay_receipts", "done")]
    recorded = {s.name: s for s in night_.steps.all()}
    assert recorded["bill"].counts == {"bills": 1, "billing_exceptions": 0, "runs_swept": [],
                                       "billing_run": run.pk}
    assert recorded["penalties"].counts == {"penalties": 0, "penalty_total": "0.00"}
    assert recorded["bill_pdfs"].counts == {"pdfs_queued": 1}
    # What the night's bill leaves open on the account is kept for the next day's reports.
    # ... and a sample of the kept standings (here the one) is checked against a full replay of its ledger.
    assert recorded["standings"].counts == {"standings_refreshed": 1, "standings_checked": 1, "standings_differing": 0,
                                            "standings_differing_accounts": []}
    assert AccountStanding.objects.get(account=account).state == {
        "credit": "0.00", "bills": [[["2026-02-01", Bill.objects.get().pk], {"water": "186.13"}, {"water": "186.13"}]]}
    assert all(s.started_at <= s.finished_at and not s.error for s in recorded.values())
    assert out.splitlines()[:4] == [
        "Nightly 2026-02-01: 1 bills, 0 billing exceptions, 0 penalties ($0.00)",
        f"  1. bill: done (billing_exceptions 0, billing_run {run.pk}, bills 1, runs_swept [])",
        "  2. penalties: done (penalties 0, penalty_total 0.00)",
        "  3. bill_pdfs: done (pdfs_queued 1)"]

    assert night(PENALTY_DAY).startswith("Nightly 2026-03-02: 0 bills, 0 billing exceptions, 1 penalties ($9.31)")
    assert list(LedgerEntry.objects.filter(kind="penalty").values_list("amount", flat=True)) == [Decimal("9.31")]


def test_the_night_says_each_step_as_it_goes_and_how_far_a_long_one_has_got(account, settings):
    """Ten minutes of PDFs on a first night are not silent: each step's start and end (with its time and counts) on
    the console, and a long step's progress there and on its row, which the nightly job's page shows."""
    settings.BILL_PDFS_ON_ISSUE = False  # the night renders them, in-process (no worker)
    out, told = io.StringIO(), io.StringIO()
    call_command("nightly", "--date", BILL_DAY.isoformat(), stdout=out, stderr=told)
    said = told.getvalue().splitlines()
    of = len(nightly_steps())
    assert said[:2] == [f"[1/{of}] bill: started", said[1]] and said[1].startswith(f"[1/{of}] bill: done in ")
    assert said[1].endswith(f"s (billing_exceptions 0, billing_run {BillingRun.objects.get().pk}, bills 1)")
    assert f"[3/{of}] bill_pdfs: 1 of 1 bill PDFs" in said
    assert said[-1].startswith(f"[{of}/{of}] autopay_receipts: done in ")
    assert NightlyStep.objects.get(name="bill_pdfs").progress == "1 of 1 bill PDFs"
    assert out.getvalue().startswith("Nightly 2026-02-01: 1 bills")  # the report, on standard output as before
    again = io.StringIO()
    call_command("nightly", "--date", BILL_DAY.isoformat(), stdout=io.StringIO(), stderr=again)
    assert again.getvalue() == "the nightly job of 2026-02-01 is done: nothing is left to run\n"


def test_a_step_that_raises_stops_the_night_and_the_next_attempt_resumes_from_it(account, calls, monkeypatch):
    night(BILL_DAY)
    real_penalties = billing_nightly.nightly_penalties

    def ledger_locked(*, as_of):
        calls["nightly_penalties"] = calls.get("nightly_penalties", 0) + 1
        raise RuntimeError("the ledger is locked for the audit")

    monkeypatch.setattr(billing_nightly, "nightly_penalties", ledger_locked)
    calls.clear()
    with pytest.raises(CommandError, match=r"the nightly job for 2026-03-02 stopped at step 'penalties': "
                                           r"RuntimeError: the ledger is locked for the audit; run it again"):
        night(PENALTY_DAY)

    assert calls == {"nightly_bill": 1, "nightly_penalties": 1}  # bill_pdfs waits for the next attempt
    assert NightlyRun.objects.get(run_on=PENALTY_DAY).status == "failed"
    assert steps(PENALTY_DAY) == [(1, "bill", "done"), (2, "penalties", "failed"), (3, "bill_pdfs", "pending"), (4, "notices", "pending"), (5, "customer_notices", "pending"), (6, "paper_notices", "pending"), (7, "termination_deadlines", "pending"),
        (8, "backflow_tests_due", "pending"), (9, "payment_plans", "pending"), (10, "standings", "pending"),
        (11, "autopay_receipts", "pending")]
    failed = NightlyStep.objects.get(run__run_on=PENALTY_DAY, name="penalties")
    assert failed.error == "RuntimeError: the ledger is locked for the audit" and failed.finished_at is not None
    assert not LedgerEntry.objects.filter(kind="penalty").exists()

    monkeypatch.setattr(billing_nightly, "nightly_penalties", real_penalties)
    calls.clear()
    out = night(PENALTY_DAY)

    # The failed step and the one after it run; the done bill step is not run again.
    assert calls == {"nightly_penalties": 1, "nightly_bill_pdfs": 1}
    assert steps(PENALTY_DAY) == [(1, "bill", "done"), (2, "penalties", "done"), (3, "bill_pdfs", "done"), (4, "notices", "done"), (5, "customer_notices", "done"), (6, "paper_notices", "done"), (7, "termination_deadlines", "done"),
        (8, "backflow_tests_due", "done"), (9, "payment_plans", "done"), (10, "standings", "done"),
        (11, "autopay_receipts", "done")]
    assert NightlyRun.objects.get(run_on=PENALTY_DAY).status == "done"
    assert NightlyStep.objects.get(run__run_on=PENALTY_DAY, name="penalties").error == ""
    assert "1 penalties ($9.31)" in out
    assert list(LedgerEntry.objects.filter(kind="penalty").values_list("amount", flat=True)) == [Decimal("9.31")]


def test_a_step_left_running_by_a_process_that_died_is_run_again(account, calls):
    night(BILL_DAY)
    NightlyRun.objects.filter(run_on=BILL_DAY).update(status="running", finished_at=None)
    NightlyStep.objects.filter(run__run_on=BILL_DAY, name="bill_pdfs").update(status="running", finished_at=None)
    calls.clear()
    before = books()

    night(BILL_DAY)

    assert calls == {"nightly_bill_pdfs": 1}
    assert NightlyRun.objects.get().status == "done" and books() == before


def test_a_finished_night_run_again_does_nothing_more(account, calls):
    night(BILL_DAY)
    first = night(PENALTY_DAY)
    before = books()
    calls.clear()

    again = night(PENALTY_DAY)

    assert calls == {} and books() == before and again == first
    assert NightlyRun.objects.count() == 2 and NightlyStep.objects.count() == 22


def test_a_billing_run_that_fails_fails_the_bill_step(account, monkeypatch):
    def broken(**kwargs):
        raise ValueError("no rate for meter size 7/8")

    monkeypatch.setattr(runs, "bill_accounts", broken)
    with pytest.raises(CommandError, match=r"stopped at step 'bill': billing run \d+ for 2026-02-01 failed: chunk 1 "
                                           r"of 1 failed: ValueError: no rate for meter size 7/8; retry it"):
        night(BILL_DAY)
    assert steps(BILL_DAY) == [(1, "bill", "failed"), (2, "penalties", "pending"), (3, "bill_pdfs", "pending"), (4, "notices", "pending"), (5, "customer_notices", "pending"), (6, "paper_notices", "pending"), (7, "termination_deadlines", "pending"),
        (8, "backflow_tests_due", "pending"), (9, "payment_plans", "pending"), (10, "standings", "pending"),
        (11, "autopay_receipts", "pending")]


def test_the_bill_step_stops_waiting_for_the_workers_and_penalties_go_on(account, settings, monkeypatch):
    night(BILL_DAY)
    # A broker, but no worker takes the chunks of the March run.
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.NIGHTLY_RUN_WAIT_SECONDS = 1
    sent = []
    monkeypatch.setattr(billing_tasks.billing_run_chunk, "apply_async", lambda *args, **kwargs: sent.append(args))
    large, meter = account_with_meter(book=3, category="other", size="2", start=date(2026, 2, 27), value=0)
    read(meter, date(2026, 3, 30), 90_000)  # a 2" meter is billed monthly, on the 1st
    day = date(2026, 4, 1)
    assert runs.billing_candidates(run_on=day) == [large.pk]

    started = time.monotonic()
    out = night(day)

    assert time.monotonic() - started < 10 and len(sent) == 1
    report = nightly_run(as_of=day)
    run = BillingRun.objects.get(run_on=day)
    assert run.status == "running" and report["billing_run"] == run.pk and report["bills"] == 0
    assert report["billing_unfinished"] == (f"billing run {run.pk} was still running after 1 s (0 of 1 chunks "
                                            "done); the workers go on with it")
    assert "billing not finished" in out and "1 penalties ($9.31)" in out
    assert steps(day) == [(1, "bill", "done"), (2, "penalties", "done"), (3, "bill_pdfs", "done"), (4, "notices", "done"), (5, "customer_notices", "done"), (6, "paper_notices", "done"), (7, "termination_deadlines", "done"),
        (8, "backflow_tests_due", "done"), (9, "payment_plans", "done"), (10, "standings", "done"),
        (11, "autopay_receipts", "done")]


def test_only_the_steps_of_installed_apps_run_and_a_later_apps_step_fits_in(account, monkeypatch):
    assert [step.name for step in nightly_steps()] == [
        "bill", "penalties", "bill_pdfs", "notices", "customer_notices", "paper_notices", "termination_deadlines",
        "backflow_tests_due", "payment_plans", "standings", "autopay_receipts"]

    installed = {"billing"}
    monkeypatch.setattr(nightly.apps, "is_installed", lambda label: label in installed)
    assert [step.name for step in nightly_steps()] == ["bill", "penalties", "bill_pdfs", "standings"]

    # An installed app whose step is missing fails that step, with the reason, after billing's.
    monkeypatch.setattr(nightly, "STEPS", (*nightly.STEPS[:3], ("notices", "billing.services.nightly.nightly_notices")))
    monkeypatch.setattr(nightly.apps, "is_installed", lambda label: label == "billing")
    report = nightly_run(as_of=BILL_DAY)
    assert [(s["name"], s["status"]) for s in report["steps"]] == [
        ("bill", "done"), ("penalties", "done"), ("bill_pdfs", "done"), ("notices", "failed")]
    assert report["failed_step"] == "notices" and "nightly_notices" in report["error"]
    assert report["bills"] == 1


def test_the_pipeline_records_any_steps_in_the_order_given():
    seen = []
    steps_ = [Step("first", lambda *, as_of: seen.append(("first", as_of)) or {"n": 1}),
              Step("second", lambda *, as_of: seen.append(("second", as_of)) or {})]

    run = pipeline_run(run_on=BILL_DAY, steps=steps_)

    assert run.status == "done" and seen == [("first", BILL_DAY), ("second", BILL_DAY)]
    assert list(run.steps.values_list("position", "name", "counts")) == [(1, "first", {"n": 1}), (2, "second", {})]


def test_the_future_is_refused_and_nothing_is_recorded(account):
    with pytest.raises(CommandError, match="2099-01-01 is after today"):
        night(date(2099, 1, 1))
    with pytest.raises(ApplicationError, match="nothing is run by the nightly job in the future"):
        nightly_run(as_of=date(2099, 1, 1))
    assert not NightlyRun.objects.exists()


def test_the_beat_task_runs_the_same_job_and_fails_when_a_step_does(account, monkeypatch):
    from billing.services.nightly import NIGHTLY_TASK

    assert tasks.nightly.name == NIGHTLY_TASK == "waterbilling.tasks.nightly"
    report = tasks.nightly.delay(BILL_DAY.isoformat()).get()
    assert report["status"] == "done" and report["bills"] == 1

    monkeypatch.setattr(billing_nightly, "nightly_penalties", lambda *, as_of: 1 / 0)
    with pytest.raises(tasks.NightlyStopped, match="stopped at step 'penalties': ZeroDivisionError"):
        tasks.nightly.delay(PENALTY_DAY.isoformat()).get()


@pytest.mark.skipif(connection.vendor != "postgresql" and not os.environ.get("DATABASE_URL", "").startswith("postgres"),
                    reason="needs PostgreSQL (set DATABASE_URL): the date's lock is a PostgreSQL advisory lock")
def test_a_second_process_running_the_same_date_is_refused(account):
    import psycopg2

    params = connection.get_connection_params()
    other = psycopg2.connect(**params)
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(hashtext(%s))", ["nightly:2026-02-01"])
        with pytest.raises(Conflict, match="the nightly job for 2026-02-01 is running in another process"):
            nightly_run(as_of=BILL_DAY)
        assert not NightlyRun.objects.exists()
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", ["nightly:2026-02-01"])
    finally:
        other.close()
    assert nightly_run(as_of=BILL_DAY)["status"] == "done"


@pytest.mark.skipif(not os.environ.get("REDIS_URL"),
                    reason="needs REDIS_URL (redis://127.0.0.1:6379/0): a real worker takes tasks from Redis")
@pytest.mark.celery_worker
def test_with_a_real_worker_the_report_counts_the_bills_the_worker_issued(transactional_db, celery_worker_process,
                                                                           settings):
    call_command("setup_utility", "mineola", "--demo", "0", "--date", "2026-01-01", stdout=io.StringIO())
    for i in range(5):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_020_000 + 10_000 * i)
    settings.NIGHTLY_RUN_WAIT_SECONDS = 60

    report = nightly_run(as_of=BILL_DAY)  # the run's chunks go through Redis to the worker

    run = BillingRun.objects.get()
    assert run.status == "done" and report["billing_run"] == run.pk
    assert report["bills"] == run.bills_created == Bill.objects.count() == 5, \
        celery_worker_process.log_path.read_text()
    assert "billing_unfinished" not in report and report["status"] == "done"
