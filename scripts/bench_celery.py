"""Celery for scripts/bench.py's bill day: this process sending tasks through the bench's Redis queue, a run
started as ``manage.py run_billing`` starts it and waited for, and the worker's processes measured and stopped."""

import contextlib
import os
import signal
import subprocess
import time
from datetime import date
from pathlib import Path

from bench_setup import Bench, analyze


@contextlib.contextmanager
def celery_sending(bench: Bench):
    """This process sends tasks through the bench's Redis queue instead of running them eagerly."""
    from waterbilling.celery import app

    changes = {"broker_url": bench.redis_url, "task_always_eager": False, "task_default_queue": bench.queue}
    saved = {key: app.conf[key] for key in changes}
    app.conf.update(changes)
    try:
        yield
    finally:
        from kombu import pools

        # Every connection to the bench's queue closed, and the pools forgotten (as Celery does after a fork),
        # so the next sending here opens new ones.
        pools.reset()
        app._pool = None
        app.amqp._producer_pool = None
        app.conf.update(saved)


def celery_month(month: date, worker: subprocess.Popen, log_path: Path) -> dict:
    """One run the way ``run_billing`` starts it with Celery workers: create it, send its dispatch, hand
    out again what is due while waiting. Timed from before the run's accounts are chosen to its end."""
    from django.utils import timezone

    from billing.models import BillingRun
    from billing.runs.lifecycle import billing_run_create, billing_run_hand_out
    from billing.tasks import billing_run_dispatch, chunk_send

    analyze()
    started = timezone.now()
    run = billing_run_create(run_on=month)
    billing_run_dispatch.delay(run.pk)
    progress, moved_at, handed_at = None, time.monotonic(), time.monotonic()
    while True:
        run = BillingRun.objects.get(pk=run.pk)
        if run.status != BillingRun.Status.RUNNING:
            break
        if worker.poll() is not None:
            raise RuntimeError(f"the Celery worker exited: {log_tail(log_path)}")
        if run.chunks_done != progress:
            progress, moved_at = run.chunks_done, time.monotonic()
        elif time.monotonic() - moved_at > 120:
            raise RuntimeError(f"the run for {month} made no progress in 120 s ({run.chunks_done} of "
                               f"{run.chunks_total} chunks): {log_tail(log_path)}")
        if time.monotonic() - handed_at > 1:
            billing_run_hand_out(run_id=run.pk, send=chunk_send)
            handed_at = time.monotonic()
        time.sleep(0.05)
    if run.status != BillingRun.Status.DONE:
        raise RuntimeError(f"the run for {month} ended {run.status}: {run.error}")
    seconds = ((run.finished_at or timezone.now()) - started).total_seconds()
    return {"date": month.isoformat(), "bills": run.bills_created, "seconds": seconds,
            "bills_per_s": run.bills_created / seconds if seconds else 0}


def process_peak_mb(pid: int) -> float:
    """The largest peak resident memory (VmHWM) of a process and its children."""
    import psutil

    peaks = []
    for process in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        try:
            for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
        except OSError:
            continue
    return max(peaks, default=0)


def process_stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


def queue_forget(bench: Bench) -> None:
    """The bench queue's keys in its Redis database (kombu's bindings, anything left unsent)."""
    try:
        import redis

        client = redis.Redis.from_url(bench.redis_url)
        client.delete(bench.queue, f"_kombu.binding.{bench.queue}", f"_kombu.binding_permanent.{bench.queue}")
        for key in client.scan_iter(f"waterbilling:{bench.queue}:*"):
            client.delete(key)
    except Exception as exc:  # noqa: BLE001 - tidying up; the figures stand
        print(f"  (could not tidy Redis: {exc})", flush=True)


def log_tail(path: Path, lines: int = 3) -> str:
    return " / ".join(path.read_text().strip().splitlines()[-lines:])
