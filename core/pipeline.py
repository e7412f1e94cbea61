"""A job of ordered steps that records how far it got, so a crash resumes where it stopped.

The nightly job (``waterbilling.nightly``) is such a job: one ``NightlyRun`` a date and a ``NightlyStep``
for each step, with its counts or its error. Running the date again skips the steps already done and goes
on from the first that is not (failed, or left running by a process that died); a step that raises is
recorded with its error and the job stops there, so the steps after it — which may rely on it — wait
for the next attempt. Each step must be idempotent: a step interrupted half-way is run again from the
start. The steps are plain functions ``func(*, as_of: date) -> dict`` returning counts (JSON: numbers,
strings, lists).

Two processes running the same date at once (beat, and a clerk at the command line) would both run its
steps; on PostgreSQL the second is refused while the first holds the date's lock, which the database
drops with the first's connection if it dies.

A long step says how far it has got (``step_progress``): the step's row keeps it (the nightly job's page in the admin
shows it), and whoever runs the job hears it with each step's start and end (``manage.py nightly`` prints them).
"""

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date

from django.db import connection
from django.utils import timezone

from .db import is_postgres
from .errors import ApplicationError, Conflict
from .models import NightlyRun, NightlyStep

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Step:
    name: str
    func: Callable[..., dict]


PROGRESS_EVERY = 1.0  # seconds: a step's progress is saved and told at most this often (and at its end)


@dataclass
class _Running:
    record: NightlyStep
    label: str  # "[3/11] bill_pdfs"
    tell: Callable[[str], None] | None
    told_at: float = field(default=0.0)


_running: ContextVar[_Running | None] = ContextVar("nightly_step_running", default=None)


def step_progress(done: int, total: int, *, what: str) -> None:
    """A step's progress, ``done`` of ``total`` ``what`` ("bill PDFs"): kept on its row and told to whoever runs the
    job, at most once a second and always at the last. Outside a job, nothing."""
    running = _running.get()
    if running is None:
        return
    now = time.monotonic()
    if done < total and now - running.told_at < PROGRESS_EVERY:
        return
    running.told_at = now
    text = f"{done:,} of {total:,} {what}"
    NightlyStep.objects.filter(pk=running.record.pk).update(progress=text)
    if running.tell:
        running.tell(f"{running.label}: {text}")


def _error_text(exc: BaseException) -> str:
    text = str(exc) if isinstance(exc, ApplicationError) else f"{type(exc).__name__}: {exc}"
    return text[:4000]


@contextmanager
def _date_lock(run_on: date) -> Iterator[None]:
    """Hold the date's lock for the whole job, across the steps' own transactions (a session lock, not a
    transaction's)."""
    if not is_postgres():
        yield
        return
    key = f"nightly:{run_on.isoformat()}"
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [key])
        if not cursor.fetchone()[0]:
            raise Conflict(f"the nightly job for {run_on} is running in another process; let it finish",
                           field="date")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", [key])


def pipeline_run(*, run_on: date, steps: Sequence[Step], tell: Callable[[str], None] | None = None) -> NightlyRun:
    """Run ``steps`` in order for ``run_on``, recorded; resume a date already begun. Returns the run: done,
    or failed at the step whose error it records. A step's exception is recorded, not raised. ``tell`` hears each
    step's start, progress and end, in words."""
    with _date_lock(run_on):
        run, _ = NightlyRun.objects.get_or_create(run_on=run_on)
        recorded = {record.name: record for record in run.steps.all()}
        plan = []
        for position, step in enumerate(steps, start=1):
            record = recorded.get(step.name) or NightlyStep(run=run, name=step.name, position=position)
            if record.pk is None or record.position != position:
                record.position = position
                record.save()
            plan.append((step, record))
        if run.status == NightlyRun.Status.DONE and all(r.status == NightlyStep.Status.DONE for _, r in plan):
            if tell:
                tell(f"the nightly job of {run_on} is done: nothing is left to run")
            return run
        _save(run, status=NightlyRun.Status.RUNNING, finished_at=None)
        for step, record in plan:
            label = f"[{record.position}/{len(plan)}] {step.name}"
            if record.status == NightlyStep.Status.DONE:
                if tell:
                    tell(f"{label}: done before")
                continue
            _save(record, status=NightlyStep.Status.RUNNING, started_at=timezone.now(), finished_at=None,
                  counts={}, error="", progress="")
            if tell:
                tell(f"{label}: started")
            began = time.monotonic()
            token = _running.set(_Running(record=record, label=label, tell=tell))
            try:
                counts = step.func(as_of=run_on) or {}
            except Exception as exc:  # noqa: BLE001 - recorded on the step, where the office looks for it
                logger.exception("nightly %s: step %s failed", run_on, step.name)
                _save(record, status=NightlyStep.Status.FAILED, finished_at=timezone.now(), error=_error_text(exc))
                _save(run, status=NightlyRun.Status.FAILED, finished_at=timezone.now())
                if tell:
                    tell(f"{label}: failed: {record.error}")
                return run
            finally:
                _running.reset(token)
            _save(record, status=NightlyStep.Status.DONE, finished_at=timezone.now(), counts=counts)
            if tell:
                said = ", ".join(f"{name} {value}" for name, value in sorted(counts.items())
                                 if isinstance(value, int | float | str))
                tell(f"{label}: done in {time.monotonic() - began:.1f} s" + (f" ({said})" if said else ""))
        _save(run, status=NightlyRun.Status.DONE, finished_at=timezone.now())
        return run


def _save(row, **values) -> None:
    for name, value in values.items():
        setattr(row, name, value)
    row.save(update_fields=list(values))
