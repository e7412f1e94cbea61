"""The billing piece of scripts/bench.py on real Celery workers: monthly runs started as ``manage.py run_billing``
starts them, billed by ``celery -A waterbilling worker`` on a Redis database and a queue of its own."""

import contextlib
import os
import signal
import socket
import subprocess
import time
from datetime import date
from pathlib import Path

from bench_setup import ROOT, VENV_BIN, Bench, analyze, copy_limit_rate, rows_written


def billing_celery_row(bench: Bench, months: list[date]) -> dict:
    celery_months, peak_mb, written = billing_on_celery(bench, months)
    bills = sum(m["bills"] for m in celery_months)
    seconds = sum(m["seconds"] for m in celery_months)
    rate = bills / seconds if seconds else 0
    first, last = celery_months[0], celery_months[-1]
    print("  Celery: " + ", ".join(f"{m['date'][:7]} {m['bills_per_s']:,.0f}/s" for m in celery_months), flush=True)
    return bench.row(
        "billing",
        f"{rate:,.0f} bills/s ({bills:,} bills, {len(celery_months)} months {first['date'][:7]}…{last['date'][:7]}, "
        f"-c {bench.args.workers}); first month {first['bills_per_s']:,.0f}/s, last {last['bills_per_s']:,.0f}/s; "
        f"worker peak {peak_mb:,.0f} MB",
        rate, "bills/s", rate >= 5000 and last["bills_per_s"] >= first["bills_per_s"],
        copy_limit_rate(bench, written, bills, "bills/s"), months=celery_months)


def billing_on_celery(bench: Bench, months: list[date]) -> tuple[list[dict], float, int]:
    """Bill each month through a Celery worker; returns each month's figures, the worker's peak memory and
    the rows written."""

    env = bench.production_env(SECRET_KEY=os.environ["SECRET_KEY"])
    log_path = bench.scratch / "worker.log"
    node = f"{bench.queue}@{socket.gethostname()}"
    with log_path.open("w") as log:
        worker = subprocess.Popen(
            [str(VENV_BIN / "celery"), "-A", "waterbilling", "worker", "--loglevel", "INFO", "--concurrency",
             str(bench.args.workers), "--hostname", node, "--without-gossip", "--without-mingle",
             "--without-heartbeat"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while " ready." not in log_path.read_text():
            if worker.poll() is not None:
                raise RuntimeError(f"the Celery worker exited: {log_tail(log_path)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Celery worker was not ready in 60 s: {log_tail(log_path)}")
            time.sleep(0.5)
        figures = []
        before = rows_written()
        with celery_sending(bench):
            for month in months:
                figures.append(celery_month(month, worker, log_path))
                print(f"  {month}: {figures[-1]['bills']:,} bills in {figures[-1]['seconds']:.1f} s = "
                      f"{figures[-1]['bills_per_s']:,.0f} bills/s", flush=True)
        peak_mb = process_peak_mb(worker.pid)
    finally:
        process_stop(worker)
        queue_forget(bench)
    written = rows_written() - before
    return figures, peak_mb, written


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
        app.pool.force_close_all()
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
