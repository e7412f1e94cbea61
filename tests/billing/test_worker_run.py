"""A billing run's chunks travel through Redis to a real Celery worker, which bills them in PostgreSQL; a
worker killed mid-chunk leaves the chunk to the sweeper."""

import io
import os
import signal
import subprocess
import time
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from billing import tasks
from billing.models import Bill, BillingRun, BillingRunChunk
from billing.runs.lifecycle import billing_run_create, billing_run_start
from tests.billing.steps import account_with_meter, read


@pytest.mark.skipif(not os.environ.get("REDIS_URL"),
                    reason="needs REDIS_URL (redis://127.0.0.1:6379/0): a real worker takes tasks from Redis")
@pytest.mark.celery_worker
def test_a_billing_run_is_billed_by_a_real_worker(transactional_db, celery_worker_process):
    call_command("setup_utility", "mineola", "--demo", "0", "--date", "2026-01-01", stdout=io.StringIO())
    for i in range(5):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_020_000 + 10_000 * i)

    run = billing_run_start(run_on=date(2026, 2, 1))  # dispatched to the broker when it commits

    deadline = time.monotonic() + 60
    while (run := BillingRun.objects.get(pk=run.pk)).status == BillingRun.Status.RUNNING:
        assert time.monotonic() < deadline, celery_worker_process.log_path.read_text()
        time.sleep(0.2)
    assert run.status == BillingRun.Status.DONE and run.bills_created == 5
    # 20,000..60,000 gal: 45.00, 76.00, 107.00, 138.00, 45 + 93 + 38.50 = 176.50
    assert sorted(Bill.objects.values_list("total", flat=True)) == [
        Decimal("45.00"), Decimal("76.00"), Decimal("107.00"), Decimal("138.00"), Decimal("176.50")]
    assert run.total_billed.amount == Decimal("542.50")
    celery_worker_process.wait_idle()


def five_accounts() -> list:
    call_command("setup_utility", "mineola", "--demo", "0", "--date", "2026-01-01", stdout=io.StringIO())
    accounts = []
    for i in range(5):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_020_000 + 10_000 * i)
        accounts.append(account)
    return accounts


def wait_for(predicate, worker, *, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, worker.log_path.read_text()
        time.sleep(0.2)


@pytest.mark.skipif(not os.environ.get("REDIS_URL"),
                    reason="needs REDIS_URL (redis://127.0.0.1:6379/0): a real worker takes tasks from Redis")
@pytest.mark.celery_worker
def test_a_pool_process_killed_mid_chunk_is_handed_on_by_the_next_sweep(transactional_db, celery_worker_process):
    """The sweep asks the workers what they run: the chunk's task is no longer running, so the chunk is handed out
    again at once, long before its lease would run out (what beat sends every minute)."""
    accounts = five_accounts()
    run = billing_run_create(run_on=date(2026, 2, 1), chunk_size=5)
    chunk = run.chunks.get()
    with transaction.atomic():
        # Hold the first account, so the worker that takes the chunk waits in the middle of it; kill it there.
        Account.objects.select_for_update().get(pk=accounts[0].pk)
        tasks.billing_run_dispatch.delay(run.pk)
        wait_for(lambda: BillingRunChunk.objects.get(pk=chunk.pk).attempts == 1, celery_worker_process)
        time.sleep(0.5)
        pool = subprocess.run(["pgrep", "-P", str(celery_worker_process.process.pid)], capture_output=True,
                              text=True, check=True).stdout.split()
        for pid in pool:
            os.kill(int(pid), signal.SIGKILL)
    # The message comes back (reject_on_worker_lost), but the dead worker's lease still holds the chunk.
    time.sleep(2)
    chunk.refresh_from_db()
    assert not chunk.done and chunk.attempts == 1 and chunk.leased_until is not None
    assert BillingRun.objects.get(pk=run.pk).status == BillingRun.Status.RUNNING

    assert chunk.leased_until > timezone.now() + timedelta(seconds=60) and chunk.task_id and chunk.worker
    tasks.billing_runs_sweep.delay()  # what beat sends every minute

    wait_for(lambda: BillingRun.objects.get(pk=run.pk).status != BillingRun.Status.RUNNING, celery_worker_process)
    run.refresh_from_db()
    chunk.refresh_from_db()
    assert run.status == BillingRun.Status.DONE and run.bills_created == 5
    assert run.total_billed.amount == Decimal("542.50")
    assert chunk.attempts == 2 and "stopped before finishing" in chunk.last_error
    celery_worker_process.wait_idle()
