"""Billing runs: who is due, rating, and issuing bills — chunked, idempotent, crash-safe.

A run is a ``BillingRun`` row with ``BillingRunChunk`` rows (about 1,000 candidate accounts each) that any
Celery worker can take. A chunk is one transaction: it locks its accounts in id order, skips accounts
already billed for the date, rates the rest and writes bills, lines and ledger entries in bulk, and marks
itself done. The database forbids two live bills for one account and bill date, so two runs at once, or
a run re-started after a crash, cannot double-bill; re-running bills only what is still unbilled.

Nothing waits forever on a worker that is gone. A worker takes a chunk under a lease (committed before it
bills), counts an attempt and records who it is (the Celery worker's node and task id). The sweeper — Celery
beat every minute, the nightly job, and a billing command waiting on its run — asks the workers what they are
running (``workers_seen``): a chunk whose task no answering worker runs lost its worker (killed, out of memory)
and is handed out again at once, without waiting for its lease to run out; when no worker answers, the lease
decides. A run billed in one process (Celery eager: the command line, the development server) records that
process; the next run started on that host fails it, saying so, if the process is gone
(``billing_runs_orphaned_fail``). A transient database error releases the chunk for another attempt; any other error,
or a chunk out of attempts (``BILLING_CHUNK_ATTEMPTS``), fails the run with the error. The broker may lose
or redeliver messages; the run's state in the database decides what is done.

A run's status moves pending → running → done or failed, and a failed run back to running when a clerk
retries it once the cause is fixed; each change goes through ``core.workflow.transition`` and is recorded.
"""

import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.db.models import F, Q
from django.utils import timezone
from djmoney.money import Money

from core.clock import refuse_future
from core.errors import ApplicationError, NotFound
from core.money import ZERO
from core.workflow import transition

from ..models import Bill, BillingRun, BillingRunChunk
from ..ordinance import sample_rates_refusal, schedule_in_force
from ..signals import billing_chunk_due, billing_run_started, bills_issued
from .candidates import billing_candidates
from .issue import bill_accounts, bills_plan
from .plan import ChunkResult

logger = logging.getLogger(__name__)

CHUNK_SIZE = 1000


@transaction.atomic
def billing_run_create(*, run_on: date, actor=None, chunk_size: int = CHUNK_SIZE,
                       accept_sample_rates: bool = False) -> BillingRun:
    """A run for ``run_on``, refused while the rates in force are sample values on a real site unless
    ``accept_sample_rates``; the acceptance is recorded on the run when the rates were sample."""
    refuse_future(run_on, doing="billed")
    schedule_row, _ = schedule_in_force(run_on)  # refuse early when no rates apply
    if refusal := sample_rates_refusal(on=run_on, accept_sample_rates=accept_sample_rates):
        raise ApplicationError(refusal, field="accept_sample_rates")
    billing_runs_orphaned_fail()
    ids = billing_candidates(run_on=run_on)
    run = BillingRun.objects.create(run_on=run_on, started_by=actor, status=BillingRun.Status.PENDING,
                                    accounts_due=len(ids),
                                    accept_sample_rates=accept_sample_rates and schedule_row.is_sample,
                                    process=this_process() if settings.CELERY_TASK_ALWAYS_EAGER else "")
    chunks = [BillingRunChunk(run=run, index=i, account_ids=ids[start:start + chunk_size])
              for i, start in enumerate(range(0, len(ids), chunk_size))]
    BillingRunChunk.objects.bulk_create(chunks)
    transition(run, to=BillingRun.Status.RUNNING, actor=actor, note="started",
               changes={"chunks_total": len(chunks)})
    if not chunks:
        billing_run_finish(run_id=run.pk)
        run.refresh_from_db()
    return run


def billing_run_start(*, run_on: date, actor=None, accept_sample_rates: bool = False) -> BillingRun:
    """Create a run and hand its chunks to the workers (in-process when Celery runs eagerly), once the run
    is committed (``billing_run_started``; ``billing.receivers`` enqueues)."""
    run = billing_run_create(run_on=run_on, actor=actor, accept_sample_rates=accept_sample_rates)
    transaction.on_commit(lambda: billing_run_started.send(sender=BillingRun, run_id=run.pk))
    return run


# --- Leases: who bills a chunk, and what happens when it does not come back -------------------------------

# Errors after which the same chunk may well pass: a deadlock or serialization failure, a lost connection.
# Any other error would fail again the same way, so it fails the run at once.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)
WORKER_STOPPED = "its worker stopped before finishing (killed, out of memory?) and its lease ran out"
LOST_CHECK_SECONDS = 10  # how often a waiting command asks the workers whether its chunks' tasks still run


def this_process() -> str:
    return f"process {os.getpid()} on {socket.gethostname()}"


def _process_gone(process: str) -> bool:
    """Whether ``process`` (as ``this_process`` names one) is known to have ended: on this host, no such pid."""
    words = process.split()
    if len(words) != 4 or words[0] != "process" or words[2] != "on" or words[3] != socket.gethostname():
        return False  # another host's: it cannot be told from here
    try:
        os.kill(int(words[1]), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, ValueError):
        return False
    return False


def billing_runs_orphaned_fail() -> list[BillingRun]:
    """Fail each running run billed in a process of this host that has ended (killed mid-run), saying so; its
    finished chunks keep their bills, and billing the date again bills what is still unbilled."""
    failed = []
    for run in BillingRun.objects.filter(status=BillingRun.Status.RUNNING).exclude(process=""):
        if _process_gone(run.process):
            billing_run_fail(run_id=run.pk, error=f"the {run.process} that was billing it ended before the run "
                                                  f"finished ({run.chunks_done} of {run.chunks_total} chunks done; "
                                                  "killed?); billing the date again bills what is still unbilled")
            failed.append(run)
    return failed


@dataclass(frozen=True)
class WorkersSeen:
    """What the workers on the broker answered: each answering node with the ids of the tasks it is running.
    ``answered`` False: none answered within the timeout (none running, or the broker unreachable)."""

    active: dict[str, list[str]]

    @property
    def answered(self) -> bool:
        return bool(self.active)

    def running(self, task_id: str) -> bool:
        return any(task_id in ids for ids in self.active.values())

    def __str__(self) -> str:
        if not self.active:
            return "no worker answered on this broker"
        return "; ".join(f"{node} is running {len(ids)} task(s)" for node, ids in sorted(self.active.items()))


def workers_seen(timeout: float = 1.0) -> WorkersSeen:
    """Ask the Celery workers what they are running (none when tasks run eagerly in this process)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return WorkersSeen(active={})
    from celery import current_app

    try:
        replies = current_app.control.inspect(timeout=timeout).active() or {}
    except Exception:  # noqa: BLE001 - an unreachable broker is "no answer"; the lease still decides
        logger.warning("could not ask the workers what they run", exc_info=True)
        return WorkersSeen(active={})
    return WorkersSeen(active={node: [task.get("id", "") for task in tasks or []] for node, tasks in replies.items()})


def billing_run_lost_release(*, run_id: int, seen: WorkersSeen) -> list[int]:
    """Release the chunks of a run whose worker is gone — leased to a task none of the answering workers is
    running, or to a process of this host that has ended — so they are due at once. Nothing is released when no
    worker answered (the lease decides then). Returns the chunks released."""
    leased = list(BillingRunChunk.objects.filter(run_id=run_id, done=False, leased_until__gt=timezone.now())
                  .values_list("pk", "task_id", "worker"))
    lost = [pk for pk, task_id, worker in leased
            if (task_id and seen.answered and not seen.running(task_id)) or (not task_id and _process_gone(worker))]
    released = []
    for pk in lost:
        with transaction.atomic():
            chunk = (BillingRunChunk.objects.select_for_update(of=("self",), skip_locked=True)
                     .filter(pk=pk, done=False, leased_until__gt=timezone.now()).first())
            if chunk is None:  # done meanwhile, or being billed (its row is locked)
                continue
            chunk.last_error = f"its worker ({chunk.worker}) stopped before finishing (killed, out of memory?)"
            chunk.leased_until, chunk.dispatched_at = None, None
            chunk.save(update_fields=["last_error", "leased_until", "dispatched_at"])
            released.append(pk)
    if released:
        logger.warning("billing run %s: chunk(s) %s lost their worker and are handed out again", run_id, released)
    return released


def _taker() -> tuple[str, str]:
    """Who is taking a chunk: the Celery worker's node and task id, or this process."""
    from celery import current_task

    request = getattr(current_task, "request", None) if current_task else None
    if request is not None and request.id and not getattr(request, "is_eager", False):
        return str(request.hostname or "a worker")[:200], request.id
    return this_process(), ""


def _lease() -> timedelta:
    return timedelta(seconds=settings.BILLING_CHUNK_LEASE_SECONDS)


def _chunk_name(chunk: BillingRunChunk) -> str:
    return f"chunk {chunk.index + 1} of {chunk.run.chunks_total}"


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


def billing_run_chunk_execute(*, chunk_id: int) -> None:
    """Bill one chunk as the worker holding its lease. Safe to call twice, and safe against a concurrent run
    billing the same accounts.

    Taking the chunk (one more attempt, a lease of ``BILLING_CHUNK_LEASE_SECONDS``) commits on its own
    before billing starts, so a worker killed mid-chunk leaves a lease that runs out and the sweeper hands
    the chunk on. A chunk that is done, leased by a live worker, or in a run that is no longer running is
    left alone. A failure is recorded, not raised: the run's row says what happened (a worker that runs a
    chunk has no one to raise to). A transient error releases the chunk for another attempt; any other
    error, or the last attempt failing, fails the run with the error.
    """
    if not _chunk_take(chunk_id=chunk_id):
        return
    try:
        run_id = _chunk_bill(chunk_id=chunk_id)
    except TRANSIENT_ERRORS as exc:
        logger.warning("billing run chunk %s: %s; it will be tried again", chunk_id, _error_text(exc))
        _chunk_failed(chunk_id=chunk_id, error=_error_text(exc), transient=True)
        return
    except Exception as exc:  # noqa: BLE001 - recorded on the run, which is where anyone looks for it
        logger.exception("billing run chunk %s failed", chunk_id)
        _chunk_failed(chunk_id=chunk_id, error=_error_text(exc), transient=False)
        return
    billing_run_finish(run_id=run_id)


def _chunk_take(*, chunk_id: int) -> bool:
    with transaction.atomic():
        # Waits while another worker bills the chunk (its billing transaction holds this row), then sees it
        # done. Only the chunk's row: locking the run's would make the run's chunks wait for each other.
        chunk = (BillingRunChunk.objects.select_for_update(of=("self",)).select_related("run")
                 .get(pk=chunk_id))
        now = timezone.now()
        if chunk.done or chunk.run.status != BillingRun.Status.RUNNING:
            return False
        if chunk.leased_until is not None:
            if chunk.leased_until > now:
                return False  # a duplicate delivery while the worker that took it is billing it
            chunk.last_error = WORKER_STOPPED
        if chunk.attempts >= settings.BILLING_CHUNK_ATTEMPTS:
            chunk.leased_until = None
            chunk.save(update_fields=["leased_until", "last_error"])
            billing_run_fail(run_id=chunk.run_id, error=f"{_chunk_name(chunk)} failed {chunk.attempts} times: "
                                                        f"{chunk.last_error}")
            return False
        chunk.attempts += 1
        chunk.leased_until = now + _lease()
        chunk.worker, chunk.task_id = _taker()
        chunk.save(update_fields=["attempts", "leased_until", "last_error", "worker", "task_id"])
        return True


def _chunk_bill(*, chunk_id: int) -> int:
    """The chunk's one transaction: bill its accounts and mark it done. Returns the run's id."""
    try:
        return _chunk_bill_once(chunk_id=chunk_id)
    except IntegrityError:
        # Another run billed some of these accounts between our check and our insert; the second
        # attempt sees its bills and skips them.
        return _chunk_bill_once(chunk_id=chunk_id)


def _chunk_bill_once(*, chunk_id: int) -> int:
    with transaction.atomic():
        chunk = BillingRunChunk.objects.select_for_update(of=("self",)).select_related("run").get(pk=chunk_id)
        if chunk.done:
            return chunk.run_id
        result = bill_accounts(account_ids=chunk.account_ids, run_on=chunk.run.run_on, run=chunk.run)
        chunk.done = True
        chunk.leased_until = None
        chunk.save(update_fields=["done", "leased_until"])
        BillingRun.objects.filter(pk=chunk.run_id).update(
            chunks_done=F("chunks_done") + 1, bills_created=F("bills_created") + result.bills,
            already_billed=F("already_billed") + result.already_billed,
            exceptions_count=F("exceptions_count") + result.exceptions)
        issued = [bill.pk for bill in result.new_bills]
        if issued:
            transaction.on_commit(lambda: bills_issued.send(sender=BillingRun, bill_ids=issued))
        return chunk.run_id


def _chunk_failed(*, chunk_id: int, error: str, transient: bool) -> None:
    with transaction.atomic():
        chunk = BillingRunChunk.objects.select_for_update(of=("self",)).select_related("run").get(pk=chunk_id)
        chunk.last_error = error
        chunk.leased_until = None
        if transient:
            chunk.dispatched_at = None  # due again at once: the next sweep hands it out
        chunk.save(update_fields=["last_error", "leased_until", "dispatched_at"])
        if not transient:
            billing_run_fail(run_id=chunk.run_id, error=f"{_chunk_name(chunk)} failed: {error}")
        elif chunk.attempts >= settings.BILLING_CHUNK_ATTEMPTS:
            billing_run_fail(run_id=chunk.run_id, error=f"{_chunk_name(chunk)} failed {chunk.attempts} times: "
                                                        f"{error}")


def billing_run_chunks_due(*, run_id: int) -> list[int]:
    """Claim the chunks of a running run that a worker should be handed now, and return their ids.

    Due: a chunk never handed out (a new run, or one whose dispatch was lost with its process), one handed
    out more than a lease ago and still not taken (its message was lost: Redis keeps no queue across a
    restart), one released after a transient error, and one whose worker's lease ran out. Claiming stamps
    the dispatch time, so a second caller (the beat sweeper, a billing command waiting on the run) does
    not hand the same chunks out again. A run whose chunks are all done is finished; a run with a chunk
    out of attempts is failed with that chunk's error. Chunks a live worker is billing are locked in
    PostgreSQL and skipped.
    """
    now = timezone.now()
    pending = BillingRunChunk.objects.filter(run_id=run_id, run__status=BillingRun.Status.RUNNING, done=False)
    if not pending.exists():
        billing_run_finish(run_id=run_id)
        return []
    lease_ran_out = Q(leased_until__lte=now)
    unleased = Q(leased_until__isnull=True) & (Q(dispatched_at__isnull=True) | Q(dispatched_at__lte=now - _lease()))
    claimed = []
    with transaction.atomic():
        for chunk in (pending.filter(lease_ran_out | unleased).select_for_update(of=("self",), skip_locked=True)
                      .select_related("run").order_by("index")):
            if chunk.leased_until is not None:
                chunk.last_error = WORKER_STOPPED
            chunk.leased_until = None
            if chunk.attempts >= settings.BILLING_CHUNK_ATTEMPTS:
                chunk.save(update_fields=["leased_until", "last_error"])
                billing_run_fail(run_id=run_id, error=f"{_chunk_name(chunk)} failed {chunk.attempts} times: "
                                                      f"{chunk.last_error}")
                return []
            chunk.dispatched_at = now
            chunk.save(update_fields=["leased_until", "last_error", "dispatched_at"])
            claimed.append(chunk.pk)
    return claimed


def billing_run_hand_out(*, run_id: int, send: Callable[[int], object]) -> None:
    """Hand every chunk of the run that is due to ``send`` (a Celery task's ``delay``, or the chunk's
    execution in this process), until none is. A chunk that fails with a transient error in this process
    is due again at once; the attempts limit ends that."""
    while chunk_ids := billing_run_chunks_due(run_id=run_id):
        for chunk_id in chunk_ids:
            send(chunk_id)


def chunk_announce(chunk_id: int) -> None:
    """Hand a chunk to the workers: ``billing_chunk_due``, which ``billing.receivers`` enqueues."""
    billing_chunk_due.send(sender=BillingRunChunk, chunk_id=chunk_id)


def billing_runs_sweep(*, send: Callable[[int], object] = chunk_announce,
                       seen: WorkersSeen | None = None) -> list[BillingRun]:
    """Move every running run on: release the chunks whose worker is gone (asking the workers, ``seen``, what they
    run) and hand out the chunks that are due (see ``billing_run_chunks_due``). Returns the runs that were running,
    as they are now."""
    billing_runs_orphaned_fail()
    run_ids = list(BillingRun.objects.filter(status=BillingRun.Status.RUNNING).order_by("id")
                   .values_list("id", flat=True))
    if run_ids and seen is None and BillingRunChunk.objects.filter(
            run_id__in=run_ids, done=False, leased_until__gt=timezone.now()).exclude(task_id="").exists():
        seen = workers_seen()
    for run_id in run_ids:
        if seen is not None:
            billing_run_lost_release(run_id=run_id, seen=seen)
        billing_run_hand_out(run_id=run_id, send=send)
    return list(BillingRun.objects.filter(pk__in=run_ids).order_by("id"))


def billing_run_fail(*, run_id: int, error: str) -> None:
    """Mark a running run failed with the error. The bills its finished chunks issued stay issued: retrying
    the run (``billing_run_retry``), or billing the date again, bills only what is still unbilled."""
    with transaction.atomic():
        run = BillingRun.objects.select_for_update().get(pk=run_id)
        if run.status != BillingRun.Status.RUNNING:
            return
        logger.error("billing run %s for %s failed: %s", run.pk, run.run_on, error)
        transition(run, to=BillingRun.Status.FAILED, note=error,
                   changes={"total_billed": _total_billed(run), "error": error, "finished_at": timezone.now()})


def billing_run_finish(*, run_id: int) -> None:
    """Mark a running run done once all its chunks are."""
    with transaction.atomic():
        run = BillingRun.objects.select_for_update().get(pk=run_id)
        if run.status != BillingRun.Status.RUNNING or run.chunks_done < run.chunks_total:
            return
        transition(run, to=BillingRun.Status.DONE,
                   changes={"total_billed": _total_billed(run), "error": "", "finished_at": timezone.now()})


def _total_billed(run: BillingRun) -> Money:
    return Money(sum(Bill.objects.filter(run=run).values_list("total", flat=True), ZERO), "USD")


def _retry_refusals(run: BillingRun) -> list[str]:
    """What stops a run from being billed again now, every reason (the run's own status is the workflow's)."""
    refusals = []
    try:
        schedule_in_force(run.run_on)
    except ApplicationError as exc:
        refusals.extend(e.message for e in exc.errors)
    else:
        if refusal := sample_rates_refusal(on=run.run_on, accept_sample_rates=run.accept_sample_rates):
            refusals.append(refusal)
    return refusals


def billing_run_retry(*, run_id: int, actor=None) -> BillingRun:
    """Bill a failed run's unfinished chunks again, once its cause is fixed: the run is running again, its
    chunks not done get fresh attempts, and they are handed out as a new run's are (on commit). Chunks
    already done keep their bills. Refused, with every reason, for a run that has not failed or that
    could not be billed now (no rates in force, sample rates the run did not accept)."""
    run = BillingRun.objects.filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"there is no billing run {run_id}", field="run_id")
    with transaction.atomic():
        run = transition(run, to=BillingRun.Status.RUNNING, actor=actor, note="retried",
                         guard=_retry_refusals, changes={"error": "", "finished_at": None})
        BillingRunChunk.objects.filter(run=run, done=False).update(attempts=0, leased_until=None, last_error="",
                                                                   dispatched_at=None)
        if run.chunks_done >= run.chunks_total:
            billing_run_finish(run_id=run.pk)
        transaction.on_commit(lambda: billing_run_started.send(sender=BillingRun, run_id=run.pk))
    run.refresh_from_db()
    return run


def billing_run_wait(*, run_id: int, seconds: float, send: Callable[[int], object] = chunk_announce,
                     poll: float = 0.5) -> BillingRun:
    """Wait up to ``seconds`` for a run to finish or fail, handing out its chunks that are due meanwhile and, every
    ``LOST_CHECK_SECONDS``, those whose worker is gone (as the sweeper does). Returns the run as it is then: still
    running when the time ran out."""
    deadline = time.monotonic() + seconds
    checked = time.monotonic()
    while True:
        run = BillingRun.objects.get(pk=run_id)
        if run.status != BillingRun.Status.RUNNING or time.monotonic() >= deadline:
            return run
        if time.monotonic() - checked >= LOST_CHECK_SECONDS:
            billing_run_lost_release(run_id=run_id, seen=workers_seen())
            checked = time.monotonic()
        billing_run_hand_out(run_id=run_id, send=send)
        time.sleep(poll)


def billing_run_preview(*, run_on: date, accept_sample_rates: bool = False) -> ChunkResult:
    """What a run would bill on ``run_on``, writing nothing. Rates a real run would refuse (sample values)
    are previewed anyway, with the refusal as the result's ``warning``."""
    refuse_future(run_on, doing="billed")
    ids = billing_candidates(run_on=run_on)
    overall = ChunkResult(
        warning=sample_rates_refusal(on=run_on, accept_sample_rates=accept_sample_rates) if ids else "")
    for start in range(0, len(ids), CHUNK_SIZE):
        part = bills_plan(account_ids=ids[start:start + CHUNK_SIZE], run_on=run_on)
        overall.bills += part.bills
        overall.already_billed += part.already_billed
        overall.exceptions += part.exceptions
        overall.total += part.total
        overall.charges += part.charges
        overall.new_exceptions.extend(part.new_exceptions)
    return overall
