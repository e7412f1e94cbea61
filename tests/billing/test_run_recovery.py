"""A billing run never stays "running" forever: leases, attempts, the sweeper and the command's patience.

Six accounts in book 1 read at 20,000..70,000 gal, billed on 2026-02-01 in chunks of two: 45.00, 76.00,
107.00, 138.00, 45 + 93 + 38.50 = 176.50 and 45 + 93 + 77 = 215.00; $757.50 in all.
"""

import io
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError
from django.utils import timezone

from billing import tasks
from billing.models import Bill, BillingRun, BillingRunChunk
from billing.runs import lifecycle as runs
from billing.runs.lifecycle import billing_run_chunk_execute, billing_run_create
from tests.billing.steps import account_with_meter, read
from tests.factories import clerk_user
from waterbilling.nightly import nightly_run

pytestmark = pytest.mark.django_db

RUN_ON = date(2026, 2, 1)
TOTALS = [Decimal(x) for x in ("45.00", "76.00", "107.00", "138.00", "176.50", "215.00")]


class WorkerKilled(BaseException):
    """What the process sees of an out-of-memory kill: nothing after this point runs, no handler catches it."""


@pytest.fixture
def six_accounts(mineola):
    for i in range(6):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_000_000 + 20_000 + 10_000 * i)


def killed_mid_chunk(monkeypatch):
    """Make the next chunk die half-way through billing, once."""
    real = runs.bill_accounts

    def dies_once(**kwargs):
        monkeypatch.setattr(runs, "bill_accounts", real)
        real(**kwargs)  # written, then never committed
        raise WorkerKilled

    monkeypatch.setattr(runs, "bill_accounts", dies_once)


def killed_half_way(monkeypatch) -> tuple[BillingRun, BillingRunChunk]:
    """A run in chunks of two whose process bills the first and dies in the second; the third never starts."""
    killed = billing_run_create(run_on=RUN_ON, chunk_size=2)
    first, second, _third = killed.chunks.order_by("index")
    billing_run_chunk_execute(chunk_id=first.pk)
    killed_mid_chunk(monkeypatch)
    with pytest.raises(WorkerKilled):
        billing_run_chunk_execute(chunk_id=second.pk)
    return killed, second


def lease_runs_out(chunk: BillingRunChunk) -> None:
    BillingRunChunk.objects.filter(pk=chunk.pk).update(leased_until=timezone.now() - timedelta(seconds=1))


def billing_run(*args) -> str:
    out = io.StringIO()
    call_command("run_billing", "--date", RUN_ON.isoformat(), "--no-progress", *args, stdout=out)
    return out.getvalue()


def test_a_chunk_whose_worker_died_is_taken_again_once_its_lease_runs_out(six_accounts, monkeypatch):
    run = billing_run_create(run_on=RUN_ON, chunk_size=2)
    first, second, third = run.chunks.order_by("index")
    billing_run_chunk_execute(chunk_id=first.pk)
    killed_mid_chunk(monkeypatch)
    with pytest.raises(WorkerKilled):
        billing_run_chunk_execute(chunk_id=second.pk)
    second.refresh_from_db()
    assert not second.done and second.attempts == 1 and second.leased_until > timezone.now()
    assert Bill.objects.count() == 2  # the killed chunk's bills were never committed

    tasks.billing_runs_sweep()  # the lease still holds: the worker may be alive
    second.refresh_from_db()
    assert not second.done and second.attempts == 1

    lease_runs_out(second)
    tasks.billing_runs_sweep()  # eager here: the sweeper's re-dispatch bills in this process

    run.refresh_from_db()
    second.refresh_from_db()
    assert run.status == BillingRun.Status.DONE and run.chunks_done == 3 and run.bills_created == 6
    assert second.done and second.attempts == 2 and second.leased_until is None
    assert "stopped before finishing" in second.last_error
    assert sorted(Bill.objects.values_list("total", flat=True)) == TOTALS
    assert run.total_billed.amount == Decimal("757.50")


def test_a_chunk_leased_by_a_live_worker_is_not_taken_twice(six_accounts):
    run = billing_run_create(run_on=RUN_ON, chunk_size=6)
    chunk = run.chunks.get()
    BillingRunChunk.objects.filter(pk=chunk.pk).update(attempts=1, leased_until=timezone.now() + timedelta(minutes=1))

    billing_run_chunk_execute(chunk_id=chunk.pk)  # a duplicate delivery while the first worker bills

    chunk.refresh_from_db()
    assert not chunk.done and chunk.attempts == 1 and not Bill.objects.exists()


def test_a_chunk_that_keeps_failing_with_a_transient_error_fails_the_run_after_three_attempts(six_accounts,
                                                                                               monkeypatch):
    calls = []

    def deadlock(**kwargs):
        calls.append(kwargs["account_ids"])
        raise OperationalError("deadlock detected")

    monkeypatch.setattr(runs, "bill_accounts", deadlock)
    with pytest.raises(CommandError, match="failed 3 times: OperationalError: deadlock detected"):
        billing_run("--chunk-size", "6")

    run = BillingRun.objects.get()
    chunk = run.chunks.get()
    assert len(calls) == 3 and chunk.attempts == 3 and not chunk.done and chunk.leased_until is None
    assert run.status == BillingRun.Status.FAILED and run.finished_at is not None
    assert run.error == "chunk 1 of 1 failed 3 times: OperationalError: deadlock detected"
    assert chunk.last_error == "OperationalError: deadlock detected"
    assert not Bill.objects.exists()


def test_any_other_error_fails_the_run_at_once_and_the_other_chunks_stop(six_accounts, monkeypatch):
    real, calls = runs.bill_accounts, []

    def broken_second_chunk(**kwargs):
        calls.append(kwargs["account_ids"])
        if len(calls) == 2:
            raise ValueError("no rate for meter size 7/8")
        return real(**kwargs)

    monkeypatch.setattr(runs, "bill_accounts", broken_second_chunk)
    with pytest.raises(CommandError, match=r"billing run \d+ for 2026-02-01 failed: chunk 2 of 3 failed: "
                                           r"ValueError: no rate for meter size 7/8"):
        billing_run("--chunk-size", "2")

    run = BillingRun.objects.get()
    assert run.status == BillingRun.Status.FAILED and run.chunks_done == 1 and run.bills_created == 2
    assert run.total_billed.amount == Decimal("121.00")  # 45.00 + 76.00, billed before the failure
    assert list(run.chunks.order_by("index").values_list("attempts", "done")) == [(1, True), (1, False), (0, False)]
    # The clerk fixes the cause and bills again: the new run bills only what is still unbilled.
    monkeypatch.setattr(runs, "bill_accounts", real)
    assert "4 bills issued totalling $636.50" in billing_run()
    assert sorted(Bill.objects.values_list("total", flat=True)) == TOTALS


def test_a_run_whose_workers_keep_dying_is_failed_by_the_sweeper(six_accounts):
    run = billing_run_create(run_on=RUN_ON, chunk_size=6)
    chunk = run.chunks.get()
    BillingRunChunk.objects.filter(pk=chunk.pk).update(attempts=3, dispatched_at=timezone.now())
    lease_runs_out(chunk)

    tasks.billing_runs_sweep()

    run.refresh_from_db()
    assert run.status == BillingRun.Status.FAILED
    assert run.error.startswith("chunk 1 of 1 failed 3 times: its worker stopped before finishing")
    assert not Bill.objects.exists()


def test_an_eager_run_killed_half_way_is_resumed_by_the_next_billing_command(six_accounts, monkeypatch):
    killed, second = killed_half_way(monkeypatch)
    lease_runs_out(second)

    out = billing_run()

    killed.refresh_from_db()
    assert killed.status == BillingRun.Status.DONE and killed.bills_created == 6
    assert f"Billing run {killed.pk} for 2026-02-01, left running: now done" in out
    assert "0 bills issued totalling $0.00, 6 already billed" in out
    assert sorted(Bill.objects.values_list("total", flat=True)) == TOTALS


def test_the_nightly_job_resumes_a_stale_run(six_accounts):
    stale = billing_run_create(run_on=RUN_ON, chunk_size=4)
    BillingRunChunk.objects.filter(run=stale).update(dispatched_at=timezone.now() - timedelta(hours=1))

    nightly_run(as_of=date(2026, 2, 2))  # nothing is due that day; the stale run is

    stale.refresh_from_db()
    assert stale.status == BillingRun.Status.DONE and stale.total_billed.amount == Decimal("757.50")


def test_chunks_handed_out_recently_are_not_handed_out_again(six_accounts):
    run = billing_run_create(run_on=RUN_ON, chunk_size=2)
    assert len(runs.billing_run_chunks_due(run_id=run.pk)) == 3  # a new run: every chunk
    assert runs.billing_run_chunks_due(run_id=run.pk) == []  # queued, not yet taken: within the lease
    BillingRunChunk.objects.filter(run=run).update(dispatched_at=timezone.now() - timedelta(minutes=6))
    assert len(runs.billing_run_chunks_due(run_id=run.pk)) == 3  # the messages were lost: hand them out again


def test_billing_command_gives_up_on_a_run_that_makes_no_progress(six_accounts, settings, monkeypatch):
    # A broker, but no worker takes the chunks.
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent = []
    monkeypatch.setattr(tasks.billing_run_chunk, "apply_async", lambda *args, **kwargs: sent.append(args))

    # No worker answers (this process's own real worker, if a test before started one, is not asked).
    from billing.management.commands import run_billing

    for module in (runs, run_billing):
        monkeypatch.setattr(module, "workers_seen", lambda timeout=1.0: runs.WorkersSeen(active={}))
    with pytest.raises(CommandError, match=r"billing run \d+ for 2026-02-01 made no progress in 1 s \(0 of 1 "
                                           r"chunks done\). Asked what they run, no worker answered on this broker. "
                                           r"1 chunk\(s\) wait in the queue for a worker — is a Celery worker "
                                           r"running"):
        billing_run("--chunk-size", "6", "--stall-timeout", "1")

    run = BillingRun.objects.get()
    assert run.status == BillingRun.Status.RUNNING and len(sent) == 1  # handed out once, then waited


def test_billing_command_reports_a_run_failed_by_its_workers(six_accounts, settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = False

    def worker_fails(args, **kwargs):
        (chunk_id,) = args
        BillingRunChunk.objects.filter(pk=chunk_id).update(attempts=1)
        runs.billing_run_fail(run_id=BillingRunChunk.objects.get(pk=chunk_id).run_id,
                              error="chunk 1 of 1 failed: ValueError: boom")

    monkeypatch.setattr(tasks.billing_run_chunk, "apply_async", worker_fails)
    with pytest.raises(CommandError, match=r"billing run \d+ for 2026-02-01 failed: chunk 1 of 1 failed: "
                                           r"ValueError: boom"):
        billing_run("--chunk-size", "6", "--stall-timeout", "5")


def test_the_chunk_and_pdf_tasks_are_redelivered_when_their_worker_is_lost():
    assert tasks.billing_run_chunk.acks_late and tasks.billing_run_chunk.reject_on_worker_lost
    assert tasks.bill_pdfs_render.acks_late and tasks.bill_pdfs_render.reject_on_worker_lost


def test_the_sweeper_runs_every_minute(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["billing-runs-sweep"]
    assert entry == {"task": "billing.tasks.billing_runs_sweep", "schedule": 60.0}


def test_the_api_says_why_a_run_failed(six_accounts, monkeypatch, django_capture_on_commit_callbacks):
    from rest_framework.test import APIClient

    def broken(**kwargs):
        raise ValueError("no rate for meter size 7/8")

    monkeypatch.setattr(runs, "bill_accounts", broken)
    api = APIClient()
    api.force_authenticate(clerk_user("staff"))
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post("/api/v1/billing-runs/", {"run_on": "2026-02-01"}, format="json")
    assert started.status_code == 202  # run eagerly here: the run has already failed, and says so
    polled = api.get(f"/api/v1/billing-runs/{started.json()['id']}/").json()
    assert polled["status"] == "failed"
    assert polled["error"] == "chunk 1 of 1 failed: ValueError: no rate for meter size 7/8"


def test_the_stalled_message_says_what_the_workers_answered(six_accounts, settings, monkeypatch):
    """A worker answers, busy with something else: the message says so, not that no worker runs."""
    from billing.management.commands import run_billing

    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(tasks.billing_run_chunk, "apply_async", lambda *args, **kwargs: None)
    monkeypatch.setattr(run_billing, "workers_seen",
                        lambda timeout=1.0: runs.WorkersSeen(active={"celery@billing1": ["t-9", "t-10"]}))
    with pytest.raises(CommandError) as caught:
        billing_run("--chunk-size", "6", "--stall-timeout", "1")
    assert ("Asked what they run, celery@billing1 is running 2 task(s). 1 chunk(s) wait in the queue for a worker "
            "— the workers are busy with other tasks.") in str(caught.value)


def taken_by(chunk: BillingRunChunk, *, task_id: str, worker: str = "celery@billing1") -> None:
    BillingRunChunk.objects.filter(pk=chunk.pk).update(attempts=1, task_id=task_id, worker=worker,
                                                       leased_until=timezone.now() + timedelta(minutes=5))


def test_a_chunk_whose_worker_is_gone_is_handed_out_at_once_not_when_its_lease_runs_out(six_accounts):
    run = billing_run_create(run_on=RUN_ON, chunk_size=6)
    chunk = run.chunks.get()
    taken_by(chunk, task_id="t-1")
    sent = []
    # The worker answers and is running another task: the chunk's task died with its pool process.
    tasks_now = runs.WorkersSeen(active={"celery@billing1": ["t-2"]})
    runs.billing_runs_sweep(send=sent.append, seen=tasks_now)
    chunk.refresh_from_db()
    assert sent == [chunk.pk] and chunk.leased_until is None
    assert chunk.last_error == "its worker (celery@billing1) stopped before finishing (killed, out of memory?)"


def test_a_chunk_whose_task_still_runs_or_when_no_worker_answers_is_left_to_its_lease(six_accounts):
    run = billing_run_create(run_on=RUN_ON, chunk_size=6)
    chunk = run.chunks.get()
    taken_by(chunk, task_id="t-1")
    sent = []
    runs.billing_runs_sweep(send=sent.append, seen=runs.WorkersSeen(active={"celery@billing1": ["t-1"]}))
    runs.billing_runs_sweep(send=sent.append, seen=runs.WorkersSeen(active={}))  # the broker is down, say
    chunk.refresh_from_db()
    assert sent == [] and chunk.leased_until is not None and chunk.last_error == ""


def a_dead_process() -> str:
    import socket
    import subprocess

    child = subprocess.Popen(["sleep", "0"])
    child.wait()
    return f"process {child.pid} on {socket.gethostname()}"


def test_an_eager_run_whose_process_was_killed_is_failed_with_why_when_the_next_run_starts(six_accounts,
                                                                                          monkeypatch):
    killed, second = killed_half_way(monkeypatch)
    gone = a_dead_process()
    BillingRun.objects.filter(pk=killed.pk).update(process=gone)  # as it was: billed by a process now ended
    BillingRunChunk.objects.filter(pk=second.pk).update(worker=gone)

    out = billing_run()

    killed.refresh_from_db()
    assert killed.status == BillingRun.Status.FAILED
    assert killed.error == (f"the {gone} that was billing it ended before the run finished (1 of 3 chunks done; "
                            "killed?); billing the date again bills what is still unbilled")
    assert f"Billing run {killed.pk} for 2026-02-01, left running: now failed" in out
    assert "4 bills issued totalling $636.50, 2 already billed" in out  # the re-run bills the rest, once
    assert sorted(Bill.objects.values_list("total", flat=True)) == TOTALS
