"""Billing runs: who is due, rating, and issuing bills — chunked, idempotent, crash-safe.

A run is a ``BillingRun`` row with ``BillingRunChunk`` rows (about 1,000 candidate accounts each) that any
Celery worker can take. A chunk is one transaction: it locks its accounts in id order, skips accounts
already billed for the date, rates the rest and writes bills, lines and ledger entries in bulk, and marks
itself done. The database forbids two live bills for one account and bill date, so two runs at once, or
a run re-started after a crash, cannot double-bill; re-running bills only what is still unbilled.

Nothing waits forever on a worker that is gone. A worker takes a chunk under a lease (committed before it
bills) and counts an attempt; a worker killed mid-chunk (out of memory) leaves the lease to run out, and
the sweeper — Celery beat every minute, the nightly job, and a billing command waiting on its run — hands
the chunk out again. A transient database error releases the chunk for another attempt; any other error,
or a chunk out of attempts (``BILLING_CHUNK_ATTEMPTS``), fails the run with the error. The broker may lose
or redeliver messages; the run's state in the database decides what is done.
"""

import logging
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.db.models import F, Q
from django.utils import timezone
from djmoney.money import Money

from accounts.models import Account
from core.clock import refuse_future
from core.db import copy_rows, is_postgres, reserve_ids
from core.errors import ApplicationError
from core.money import ZERO
from meters.models import Installation, Reading
from meters.units import size_inches

from ..consumption import Problem, Read, Span, usage_for_bill
from ..models import Bill, BillingException, BillingRun, BillingRunChunk, BillLine, LedgerEntry
from ..rating import EarlierBill, RatingError, RatingInput, rate_bill, year_so_far
from ..signals import billing_chunk_due, billing_run_started, bills_issued
from ..utility import installed_utility, sample_rates_refusal, schedule_in_force

logger = logging.getLogger(__name__)

CHUNK_SIZE = 1000
HIGH_USAGE_FACTOR = 4
BILLABLE_STATUSES = (Account.Status.ACTIVE, Account.Status.VACANT)


@dataclass
class ChunkResult:
    bills: int = 0
    already_billed: int = 0
    exceptions: int = 0
    total: Decimal = ZERO
    new_bills: list = field(default_factory=list)
    new_exceptions: list = field(default_factory=list)
    warning: str = ""


def billing_candidates(*, run_on: date) -> list[int]:
    """Ids of accounts that may be due on ``run_on``: in a book billed that day, or with a monthly meter."""
    calendar = installed_utility().calendar
    books = calendar.due_books(run_on)
    base = Account.objects.filter(status__in=BILLABLE_STATUSES)
    if run_on.day != 1:
        return []
    monthly_sizes = [s for s in ("1 1/2", "2", "3", "4", "6", "8")
                     if calendar.frequency_for(s) == "monthly"]
    monthly = Installation.objects.filter(meter__size__in=monthly_sizes, installed_on__lte=run_on).filter(
        Q(removed_on__isnull=True) | Q(removed_on__gte=run_on)).values("account_id")
    return list(base.filter(Q(book__in=books) | Q(id__in=monthly)).order_by("id").values_list("id", flat=True))


@transaction.atomic
def billing_run_create(*, run_on: date, actor=None, chunk_size: int = CHUNK_SIZE,
                       accept_sample_rates: bool = False) -> BillingRun:
    """A run for ``run_on``, refused while the rates in force are sample values on a real site unless
    ``accept_sample_rates``; the acceptance is recorded on the run when the rates were sample."""
    refuse_future(run_on, doing="billed")
    schedule_row, _ = schedule_in_force(run_on)  # refuse early when no rates apply
    if refusal := sample_rates_refusal(on=run_on, accept_sample_rates=accept_sample_rates):
        raise ApplicationError(refusal, field="accept_sample_rates")
    ids = billing_candidates(run_on=run_on)
    run = BillingRun.objects.create(run_on=run_on, started_by=actor, status=BillingRun.Status.RUNNING,
                                    accounts_due=len(ids),
                                    accept_sample_rates=accept_sample_rates and schedule_row.is_sample)
    chunks = [BillingRunChunk(run=run, index=i, account_ids=ids[start:start + chunk_size])
              for i, start in enumerate(range(0, len(ids), chunk_size))]
    BillingRunChunk.objects.bulk_create(chunks)
    BillingRun.objects.filter(pk=run.pk).update(chunks_total=len(chunks))
    run.chunks_total = len(chunks)
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
        chunk.save(update_fields=["attempts", "leased_until", "last_error"])
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
        result = bill_accounts(account_ids=chunk.account_ids, run_on=chunk.run.run_on, run=chunk.run,
                               persist=True)
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


def billing_runs_sweep(*, send: Callable[[int], object] = chunk_announce) -> list[BillingRun]:
    """Move every running run on: hand out its chunks that are due (see ``billing_run_chunks_due``).
    Returns the runs that were running, as they are now."""
    run_ids = list(BillingRun.objects.filter(status=BillingRun.Status.RUNNING).order_by("id")
                   .values_list("id", flat=True))
    for run_id in run_ids:
        billing_run_hand_out(run_id=run_id, send=send)
    return list(BillingRun.objects.filter(pk__in=run_ids).order_by("id"))


def billing_run_fail(*, run_id: int, error: str) -> None:
    """Mark a running run failed with the error. The bills its finished chunks issued stay issued: billing
    the date again bills only what is still unbilled."""
    with transaction.atomic():
        run = BillingRun.objects.select_for_update().get(pk=run_id)
        if run.status != BillingRun.Status.RUNNING:
            return
        logger.error("billing run %s for %s failed: %s", run.pk, run.run_on, error)
        totals = Bill.objects.filter(run=run).values_list("total", flat=True)
        run.total_billed = Money(sum(totals, ZERO), "USD")
        run.status = BillingRun.Status.FAILED
        run.error = error
        run.finished_at = timezone.now()
        run.save(update_fields=["total_billed", "status", "error", "finished_at"])


def billing_run_finish(*, run_id: int) -> None:
    with transaction.atomic():
        run = BillingRun.objects.select_for_update().get(pk=run_id)
        if run.status != BillingRun.Status.RUNNING or run.chunks_done < run.chunks_total:
            return
        totals = Bill.objects.filter(run=run).values_list("total", flat=True)
        run.total_billed = Money(sum(totals, ZERO), "USD")
        run.status = BillingRun.Status.DONE
        run.finished_at = timezone.now()
        run.save(update_fields=["total_billed", "status", "finished_at"])


def billing_run_preview(*, run_on: date, accept_sample_rates: bool = False) -> ChunkResult:
    """What a run would bill on ``run_on``, writing nothing. Rates a real run would refuse (sample values)
    are previewed anyway, with the refusal as the result's ``warning``."""
    refuse_future(run_on, doing="billed")
    ids = billing_candidates(run_on=run_on)
    overall = ChunkResult(
        warning=sample_rates_refusal(on=run_on, accept_sample_rates=accept_sample_rates) if ids else "")
    for start in range(0, len(ids), CHUNK_SIZE):
        part = bill_accounts(account_ids=ids[start:start + CHUNK_SIZE], run_on=run_on, run=None, persist=False)
        overall.bills += part.bills
        overall.already_billed += part.already_billed
        overall.exceptions += part.exceptions
        overall.total += part.total
        overall.new_exceptions.extend(part.new_exceptions)
    return overall


@dataclass(frozen=True, slots=True)
class AccountRow:
    id: int
    account_no: str
    book: int
    category: str
    sprinkler_supply_inches: str
    owner_name: str
    owner_address: str


@dataclass(slots=True)
class NewBill:
    """A bill rated in a run, before it is written (plain data: thousands are built per chunk)."""

    number: str
    public_id: uuid.UUID
    account_id: int
    run_id: int | None
    frequency: str
    bill_date: date
    issued_on: date
    recipient_name: str
    recipient_address: str
    due_date: date
    period_start: date
    period_end: date
    gallons: int
    schedule_gallons: int
    includes_annual_minimum: bool
    start_reading_id: int
    end_reading_id: int
    estimated: bool
    rate_schedule_id: int
    total: Decimal
    pk: int | None = None

    def fields(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__ if name not in ("total", "pk")}


def _bill_number(run_on: date, account_no: str, voided: int) -> str:
    return f"{run_on:%Y%m}-{account_no}" + (f"-{voided + 1}" if voided else "")


def bill_accounts(*, account_ids: list[int], run_on: date, run: BillingRun | None, persist: bool) -> ChunkResult:
    """Rate and (when ``persist``) issue the bills due on ``run_on`` for these accounts."""
    installed = installed_utility()
    calendar = installed.calendar
    schedule_row, schedule = schedule_in_force(run_on)
    result = ChunkResult()

    # Lock the chunk's accounts in id order (a concurrent run waits here, then sees our bills).
    account_rows = Account.objects.filter(id__in=account_ids).order_by("id")
    if persist:
        account_rows = account_rows.select_for_update(of=("self",))
    accounts = [AccountRow(*row) for row in account_rows.values_list(
        "id", "account_no", "book", "category", "sprinkler_supply_inches", "owner__name",
        "owner__mailing_address")]
    billed = set(Bill.objects.filter(account_id__in=account_ids, bill_date=run_on)
                 .exclude(status=Bill.Status.VOID).values_list("account_id", flat=True))
    # A bill replacing a voided one is issued when the void was recorded (not before), and is due by the
    # calendar's rule from that day: the customer gets the full term to pay the corrected amount.
    voided: dict[int, int] = defaultdict(int)
    voided_on: dict[int, date] = {}
    for account_id, void_posted_on in LedgerEntry.objects.filter(
            account_id__in=account_ids, kind=LedgerEntry.Kind.VOID, bill__bill_date=run_on).values_list(
            "account_id", "posted_on"):
        voided[account_id] += 1
        voided_on[account_id] = max(void_posted_on, voided_on.get(account_id, run_on))
    released = set(BillingException.objects.filter(
        account_id__in=account_ids, bill_date=run_on, status=BillingException.Status.RELEASED,
        kind=BillingException.Kind.HIGH_USAGE).values_list("account_id", flat=True))

    spans: dict[int, list[Span]] = defaultdict(list)
    for account_id, meter_id, installed_on, removed_on, unit, size in Installation.objects.filter(
            account_id__in=account_ids).values_list("account_id", "meter_id", "installed_on", "removed_on",
                                                    "meter__unit", "meter__size").order_by("installed_on"):
        spans[account_id].append(Span(meter_id, installed_on, removed_on, unit, size))

    earlier: dict[int, list[dict]] = defaultdict(list)
    for row in Bill.objects.filter(account_id__in=account_ids, bill_date__lt=run_on).exclude(
            status=Bill.Status.VOID).order_by("bill_date").values(
            "account_id", "bill_date", "frequency", "period_start", "period_end", "gallons", "schedule_gallons",
            "includes_annual_minimum", "end_reading_id"):
        earlier[row["account_id"]].append(row)

    window = calendar.cycle(book=1, frequency="semiannual", bill_date=run_on).read_window
    meter_ids = {s.meter_id for spans_ in spans.values() for s in spans_}
    readings: dict[int, list[Read]] = defaultdict(list)
    end_ids = {b[-1]["end_reading_id"] for b in earlier.values() if b}
    for rid, meter_id, read_on, value, read_type in Reading.objects.filter(
            Q(meter_id__in=meter_ids, read_on__lte=window[1]) | Q(id__in=end_ids)).order_by(
            "read_on").values_list("id", "meter_id", "read_on", "value", "read_type"):
        readings[meter_id].append(Read(rid, meter_id, read_on, value, read_type))
    by_id = {r.id: r for reads in readings.values() for r in reads}

    new_bills: list[NewBill] = []
    rated_lines: list[tuple] = []
    exceptions: list[BillingException] = []
    resolved: list[int] = []
    for account in accounts:
        account_spans = spans.get(account.id, [])
        current = [s for s in account_spans if s.installed_on <= window[1]
                   and (s.removed_on is None or s.removed_on > window[1])]
        if not current:
            continue
        frequency = calendar.frequency_for(max((s.size for s in current), key=size_inches))
        if not calendar.is_due(book=account.book, frequency=frequency, on=run_on):
            continue
        if account.id in billed:
            result.already_billed += 1
            continue
        history = earlier.get(account.id, [])
        previous = history[-1] if history else None
        usage = usage_for_bill(
            installations=account_spans, readings=readings, window=window,
            previous_end=by_id.get(previous["end_reading_id"]) if previous else None,
            previous_period_end=previous["period_end"] if previous else None)
        if isinstance(usage, Problem):
            exceptions.append(BillingException(account_id=account.id, bill_date=run_on, kind=usage.kind,
                                               detail=usage.detail, run=run))
            continue
        cycle = calendar.cycle(book=account.book, frequency=frequency, bill_date=run_on)
        period_days = max((usage.end.read_on - usage.start.read_on).days, 1)
        if history and account.id not in released:
            past_days = sum(max((b["period_end"] - b["period_start"]).days, 1) for b in history)
            past_gallons = sum(b["gallons"] for b in history)
            if usage.gallons * past_days > HIGH_USAGE_FACTOR * past_gallons * period_days:
                average = past_gallons / past_days
                exceptions.append(BillingException(
                    account_id=account.id, bill_date=run_on, kind=BillingException.Kind.HIGH_USAGE, run=run,
                    detail=f"{usage.gallons:,} gal in {period_days} days ({usage.gallons / period_days:,.0f} "
                           f"gal/day) is over {HIGH_USAGE_FACTOR}× the average of {average:,.0f} gal/day on "
                           f"earlier bills; held for review"))
                continue
        in_year = [b for b in history if b["bill_date"] >= cycle.billable_year_start]
        annual_minimum_charged, year_to_date_gallons = year_so_far(
            EarlierBill(b["frequency"], b["includes_annual_minimum"], b["schedule_gallons"]) for b in in_year)
        try:
            rated = rate_bill(schedule, RatingInput(
                frequency=frequency, category=account.category, gallons=usage.gallons,
                meter_size=max((s.size for s in current), key=size_inches),
                annual_minimum_charged=annual_minimum_charged, year_to_date_gallons=year_to_date_gallons,
                sprinkler_supply_inches=account.sprinkler_supply_inches, first_bill_of_year=not in_year))
        except RatingError as exc:
            exceptions.append(BillingException(account_id=account.id, bill_date=run_on,
                                               kind=BillingException.Kind.RATING, detail=str(exc), run=run))
            continue
        if not rated.lines:
            # A bill with no lines is never issued (ORDINANCES.md, Mineola § 45.29 C): it would charge
            # nothing and explain nothing. A clerk looks at it instead.
            exceptions.append(BillingException(
                account_id=account.id, bill_date=run_on, kind=BillingException.Kind.RATING, run=run,
                detail=f"rating {usage.gallons:,} gal on a {frequency} bill gave no lines under the schedule "
                       f"effective {schedule_row.effective_on}; a bill with no lines is never issued"))
            continue
        total = rated.total
        issued_on = voided_on.get(account.id, run_on)
        new_bills.append(NewBill(
            number=_bill_number(run_on, account.account_no, voided[account.id]), public_id=uuid.uuid4(),
            account_id=account.id, run_id=run.pk if run else None, frequency=frequency, bill_date=run_on,
            issued_on=issued_on, due_date=calendar.due_date(issued_on),
            recipient_name=account.owner_name, recipient_address=account.owner_address,
            period_start=usage.start.read_on, period_end=usage.end.read_on,
            gallons=usage.gallons, schedule_gallons=rated.schedule_gallons,
            includes_annual_minimum=rated.includes_annual_minimum, start_reading_id=usage.start.id,
            end_reading_id=usage.end.id, estimated=usage.estimated, rate_schedule_id=schedule_row.pk,
            total=total))
        rated_lines.append(rated.lines)
        resolved.append(account.id)
        result.bills += 1
        result.total += total

    result.exceptions = len(exceptions)
    result.new_exceptions = exceptions
    if not persist:
        return result

    _bills_write(new_bills, rated_lines)
    BillingException.objects.bulk_create(exceptions, ignore_conflicts=True)
    if resolved:
        BillingException.objects.filter(account_id__in=resolved, bill_date=run_on,
                                        status=BillingException.Status.OPEN).update(status=BillingException.Status.RESOLVED,
                                                            resolved_at=timezone.now())
    result.new_bills = new_bills
    return result


def _bills_write(bills: list["NewBill"], lines_per_bill: list[tuple]) -> None:
    """Write the bills, their lines and their ledger entries: COPY on PostgreSQL, bulk_create elsewhere."""
    now = timezone.now()
    if is_postgres():
        for bill, bill_id in zip(bills, reserve_ids(Bill, len(bills)), strict=True):
            bill.pk = bill_id
    else:
        created = Bill.objects.bulk_create([Bill(**bill.fields(), total=Money(bill.total, "USD")) for bill in bills],
                                           batch_size=2000)
        for bill, row in zip(bills, created, strict=True):
            bill.pk = row.pk
    lines, entries = [], []
    for bill, bill_lines in zip(bills, lines_per_bill, strict=True):
        for position, line in enumerate(bill_lines, start=1):
            lines.append((bill.pk, position, line.kind, line.description, line.citation, line.quantity, line.rate,
                          line.amount, "USD"))
        entries.append((bill.account_id, bill.pk, LedgerEntry.Kind.WATER.value, bill.issued_on, bill.total,
                        "USD", bill_lines[0].citation if bill_lines else "", f"Bill {bill.number}", now))
    line_columns = ("bill_id", "position", "kind", "description", "citation", "quantity", "rate", "amount",
                    "amount_currency")
    entry_columns = ("account_id", "bill_id", "kind", "posted_on", "amount", "amount_currency", "citation",
                     "description", "created_at")
    if is_postgres():
        bill_columns = ("id", "number", "public_id", "account_id", "run_id", "status", "frequency", "bill_date",
                        "issued_on", "recipient_name", "recipient_address", "due_date", "period_start",
                        "period_end", "gallons", "schedule_gallons",
                        "includes_annual_minimum", "start_reading_id", "end_reading_id", "estimated",
                        "rate_schedule_id", "total", "total_currency", "created_at", "void_reason", "void_description",
                        "pdf")
        copy_rows(Bill, bill_columns, [
            (b.pk, b.number, b.public_id, b.account_id, b.run_id, Bill.Status.ISSUED.value, b.frequency, b.bill_date,
             b.issued_on, b.recipient_name, b.recipient_address, b.due_date, b.period_start, b.period_end,
             b.gallons, b.schedule_gallons,
             b.includes_annual_minimum, b.start_reading_id, b.end_reading_id, b.estimated, b.rate_schedule_id,
             b.total, "USD", now, "", "", "")
            for b in bills])
        copy_rows(BillLine, line_columns, lines)
        copy_rows(LedgerEntry, entry_columns, entries)
    else:
        BillLine.objects.bulk_create([BillLine(**dict(zip(line_columns, row, strict=True))) for row in lines],
                                     batch_size=5000)
        LedgerEntry.objects.bulk_create([LedgerEntry(**dict(zip(entry_columns, row, strict=True)))
                                         for row in entries], batch_size=5000)


@transaction.atomic
def billing_exception_release(*, exception: BillingException, actor) -> BillingException:
    """A clerk accepts a held high-usage reading as read: the next run bills it."""
    exception = BillingException.objects.select_for_update().get(pk=exception.pk)
    if exception.kind != BillingException.Kind.HIGH_USAGE:
        raise ApplicationError("only a bill held for high usage can be released as read; for a missing or "
                               "lower reading, enter a corrected or estimated reading", field="kind")
    if exception.status != BillingException.Status.OPEN:
        raise ApplicationError(f"this exception is already {exception.get_status_display().lower()}",
                               field="status")
    exception.status = BillingException.Status.RELEASED
    exception.resolved_by = actor
    exception.resolved_at = timezone.now()
    exception.save(update_fields=["status", "resolved_by", "resolved_at"])
    return exception
