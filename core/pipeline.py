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
"""

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
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


def pipeline_run(*, run_on: date, steps: Sequence[Step]) -> NightlyRun:
    """Run ``steps`` in order for ``run_on``, recorded; resume a date already begun. Returns the run: done,
    or failed at the step whose error it records. A step's exception is recorded, not raised."""
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
            return run
        _save(run, status=NightlyRun.Status.RUNNING, finished_at=None)
        for step, record in plan:
            if record.status == NightlyStep.Status.DONE:
                continue
            _save(record, status=NightlyStep.Status.RUNNING, started_at=timezone.now(), finished_at=None,
                  counts={}, error="")
            try:
                counts = step.func(as_of=run_on) or {}
            except Exception as exc:  # noqa: BLE001 - recorded on the step, where the office looks for it
                logger.exception("nightly %s: step %s failed", run_on, step.name)
                _save(record, status=NightlyStep.Status.FAILED, finished_at=timezone.now(), error=_error_text(exc))
                _save(run, status=NightlyRun.Status.FAILED, finished_at=timezone.now())
                return run
            _save(record, status=NightlyStep.Status.DONE, finished_at=timezone.now(), counts=counts)
        _save(run, status=NightlyRun.Status.DONE, finished_at=timezone.now())
        return run


def _save(row, **values) -> None:
    for name, value in values.items():
        setattr(row, name, value)
    row.save(update_fields=list(values))
