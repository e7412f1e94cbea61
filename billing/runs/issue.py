"""Issuing bills for a chunk of accounts: load their facts in a few queries, plan each bill in Python, write
bills, lines and ledger entries in bulk (COPY on PostgreSQL)."""


import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from django.db import connection
from django.db.models import Q
from django.utils import timezone
from djmoney.money import Money

from accounts.models import Account, Customer
from core.db import copy_rows, is_any_of, is_postgres, reserve_ids
from core.money import ZERO
from meters.models import Installation, Reading
from meters.units import size_inches

from ..calendars import Cycle
from ..consumption import Problem, Read, Span, usage_for_bill
from ..ledger.posting import Posting, bill_source, charge_source, ledger_post_many
from ..models import Bill, BillingException, BillingRun, BillLine, LedgerEntry, PendingCharge
from ..ordinance import BillingCalendar, ordinance_on
from ..rating import EarlierBill, Line, ProRata, Rated, RatingError, RatingInput

HIGH_USAGE_FACTOR = 4


@dataclass
class ChunkResult:
    bills: int = 0
    already_billed: int = 0
    exceptions: int = 0
    total: Decimal = ZERO
    charges: int = 0  # pending fees and fines the new bills carry
    new_bills: list = field(default_factory=list)
    # The rated lines of each new bill (its water lines, then the charges it carries), parallel to new_bills.
    new_lines: list = field(default_factory=list)
    new_exceptions: list = field(default_factory=list)
    warning: str = ""


@dataclass(frozen=True, slots=True)
class AccountRow:
    id: int
    account_no: str
    book: int
    category: str
    sprinkler_supply_inches: str
    owner_name: str
    owner_address: str
    rate_fields: dict  # ``Account.rate_fields``: what a general rate structure reads


@dataclass(frozen=True, slots=True)
class WaitingCharge:
    """A pending charge a bill of this run may carry (``PendingCharge``), as plain data."""

    id: int
    account_id: int
    kind: str
    description: str
    citation: str
    quantity: Decimal
    rate: Decimal
    amount: Decimal

    def line(self) -> Line:
        return Line(kind=self.kind, description=self.description, citation=self.citation, quantity=self.quantity,
                    rate=self.rate, amount=self.amount)


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
    final: bool = False  # an off-cycle final bill (``billing.services.final_bills``)

    def fields(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__ if name not in ("total", "pk")}


def _bill_number(run_on: date, account_no: str, voided: int) -> str:
    return f"{run_on:%Y%m}-{account_no}" + (f"-{voided + 1}" if voided else "")


class _RunDayCalendar:
    """The calendar's answers for one bill date, each worked out once per chunk: a thousand accounts share a
    handful of books, meter sizes and frequencies."""

    def __init__(self, calendar: BillingCalendar, run_on: date):
        self.calendar, self.run_on = calendar, run_on
        self._frequencies: dict[str, str] = {}
        self._cycles: dict[tuple[int, str], Cycle | None] = {}

    def frequency_for(self, size: str) -> str:
        if (frequency := self._frequencies.get(size)) is None:
            frequency = self._frequencies[size] = self.calendar.frequency_for(size)
        return frequency

    def cycle(self, *, book: int, frequency: str) -> Cycle | None:
        """The cycle of a bill of this book and frequency on the day, or None when the day bills neither."""
        key = (book, frequency)
        if key not in self._cycles:
            due = self.calendar.is_due(book=book, frequency=frequency, on=self.run_on)
            self._cycles[key] = (self.calendar.cycle(book=book, frequency=frequency, bill_date=self.run_on)
                                 if due else None)
        return self._cycles[key]


def _due_cycle(calendar: _RunDayCalendar, *, book: int, spans: list[Span]) -> tuple[Cycle, list[Span]] | None:
    """The account's cycle on the day and the meters in place at the end of its read window, or None when
    the calendar does not bill it that day. Its frequency is that of the largest meter in place at the end
    of that frequency's own read window."""
    for frequency in sorted({calendar.frequency_for(s.size) for s in spans}):
        cycle = calendar.cycle(book=book, frequency=frequency)
        if cycle is None:
            continue
        end = cycle.read_window[1]
        current = [s for s in spans if s.installed_on <= end and (s.removed_on is None or s.removed_on > end)]
        if current and calendar.frequency_for(max((s.size for s in current), key=size_inches)) == frequency:
            return cycle, current
    return None


def waiting_charges(account_ids, *, on: date, lock: bool) -> dict[int, list[WaitingCharge]]:
    """Fees and fines charged for a bill dated on or before ``on`` and not carried yet, oldest first; locked
    (``lock``) with the accounts, so a charge cancelled meanwhile is not carried, and one carried by the bill
    cannot be cancelled."""
    rows = PendingCharge.objects.filter(account_id__any=account_ids, bill__isnull=True, cancelled_at__isnull=True,
                                        earliest_bill_on__lte=on)
    if lock:
        rows = rows.select_for_update()
    waiting: dict[int, list[WaitingCharge]] = defaultdict(list)
    for row in rows.order_by("earliest_bill_on", "id").values_list(
            "id", "account_id", "kind", "description", "citation", "quantity", "rate", "amount"):
        waiting[row[1]].append(WaitingCharge(*row))
    return waiting


def installation_spans(account_ids) -> dict[int, list[Span]]:
    """Each account's meter installations, oldest first, as ``usage_for_bill`` reads them."""
    spans: dict[int, list[Span]] = defaultdict(list)
    for account_id, meter_id, installed_on, removed_on, unit, size in Installation.objects.filter(
            account_id__any=account_ids).values_list("account_id", "meter_id", "installed_on", "removed_on",
                                                     "meter__unit", "meter__size").order_by("installed_on"):
        spans[account_id].append(Span(meter_id, installed_on, removed_on, unit, size))
    return spans


BILL_HISTORY_COLUMNS = ("account_id", "bill_date", "frequency", "period_start", "period_end", "gallons",
                        "schedule_gallons", "includes_annual_minimum", "end_reading_id")


def high_usage_words(gallons: int, period_days: int, previous: dict) -> str:
    """Why a bill's use is over ``HIGH_USAGE_FACTOR``× the account's average daily use on its earlier bills
    (``previous``: the latest earlier bill, with the history's totals), or "" when it is not."""
    past_days, past_gallons = previous["history_days"], previous["history_gallons"]
    period_days = max(period_days, 1)
    if not past_days or gallons * past_days <= HIGH_USAGE_FACTOR * past_gallons * period_days:
        return ""
    return (f"{gallons:,} gal in {period_days} days ({gallons / period_days:,.0f} gal/day) is over "
            f"{HIGH_USAGE_FACTOR}× the average of {past_gallons / past_days:,.0f} gal/day on earlier bills")


def earlier_bills(account_ids, *, before: date, since: date = date.min) -> dict[int, list[dict]]:
    """Each account's live bills dated before ``before``, oldest first: those dated on or after ``since`` and
    the latest one (what rating and usage read of them). A bill converted from the previous system is one
    when it came with its period and gallons (``Bill.has_usage``): the next bill starts from the last reading
    of its period, and its gallons count in the average; one that brought only an open balance is not. Every
    row also carries the totals over all of the account's earlier bills, ``history_days`` and
    ``history_gallons``, for its average daily use; the database sums them, so a run's work does not grow
    with the years of history."""
    days = ("GREATEST(period_end - period_start, 1)" if is_postgres()
            else "MAX(CAST(julianday(period_end) - julianday(period_start) AS INTEGER), 1)")
    accounts_sql, accounts_params = is_any_of("account_id", account_ids)
    columns = ", ".join(BILL_HISTORY_COLUMNS)
    # The names are the models' own; values go as parameters.
    sql = (f"SELECT {columns}, history_days, history_gallons FROM ("  # noqa: S608
           f" SELECT {columns}, MAX(bill_date) OVER account AS latest,"
           f" SUM({days}) OVER account AS history_days, SUM(gallons) OVER account AS history_gallons"
           f" FROM {Bill._meta.db_table} WHERE {accounts_sql} AND bill_date < %s AND status <> %s"
           f" AND (converted_on IS NULL OR period_end > period_start)"
           f" WINDOW account AS (PARTITION BY account_id)) history"
           f" WHERE bill_date >= %s OR bill_date = latest ORDER BY account_id, bill_date")
    earlier: dict[int, list[dict]] = defaultdict(list)
    names = (*BILL_HISTORY_COLUMNS, "history_days", "history_gallons")
    with connection.cursor() as cursor:
        cursor.execute(sql, [*accounts_params, before, Bill.Status.VOID.value, since])
        for row in cursor.fetchall():
            bill = dict(zip(names, row, strict=True))
            for name in ("bill_date", "period_start", "period_end"):  # SQLite returns text
                if isinstance(bill[name], str):
                    bill[name] = date.fromisoformat(bill[name])
            bill["includes_annual_minimum"] = bool(bill["includes_annual_minimum"])
            bill["history_days"], bill["history_gallons"] = int(bill["history_days"]), int(bill["history_gallons"])
            earlier[bill["account_id"]].append(bill)
    return earlier


def readings_since(since: dict[int, date], *, until: date, also: set[int]) -> dict[int, list[Read]]:
    """Each meter's readings (``since``: meter id -> first day wanted) up to ``until``, oldest first: those
    read on or after its day, the last one read before it, and the readings ``also`` names (the closing
    readings of previous bills). ``usage_for_bill`` finds in these the same start and end readings as in
    the meter's whole history, since it reads no further back than the previous bill's close. SQLite, the
    embedded database, reads each meter's whole history instead."""
    readings: dict[int, list[Read]] = defaultdict(list)
    if is_postgres():
        columns = "r.id, r.meter_id, r.read_on, r.value, r.read_type"
        table = Reading._meta.db_table
        # Each meter's rows by its own index range (LATERAL): a join may scan the whole table instead.
        sql = (f"WITH since(meter_id, since) AS (SELECT * FROM unnest(%s::bigint[], %s::date[]))"  # noqa: S608
               f" SELECT wanted.* FROM since s CROSS JOIN LATERAL ("
               f"  SELECT {columns} FROM {table} r WHERE r.meter_id = s.meter_id AND r.read_on >= s.since"
               f"  AND r.read_on <= %s) wanted"
               f" UNION SELECT last.* FROM since s CROSS JOIN LATERAL ("
               f"  SELECT {columns} FROM {table} r WHERE r.meter_id = s.meter_id AND r.read_on < s.since"
               f"  AND r.read_on <= %s ORDER BY r.read_on DESC LIMIT 1) last"
               f" UNION SELECT {columns} FROM {table} r WHERE r.id = ANY(%s)"
               f" ORDER BY read_on")
        with connection.cursor() as cursor:
            cursor.execute(sql, [list(since), list(since.values()), until, until, list(also)])
            rows = cursor.fetchall()
    else:
        rows = Reading.objects.filter(Q(meter_id__any=list(since), read_on__lte=until) | Q(id__any=list(also))
                                      ).order_by("read_on").values_list("id", "meter_id", "read_on", "value",
                                                                        "read_type")
    for rid, meter_id, read_on, value, read_type in rows:
        readings[meter_id].append(Read(rid, meter_id, read_on, value, read_type))
    return readings


def rate_usage(rates, *, frequency: str, account: AccountRow, gallons: int, meter_size: str, history: list[dict],
               billable_year_start: date, pro_rata: ProRata | None = None) -> Rated:
    """Rate one bill's gallons given the account's earlier bills (``earlier_bills``); raises ``RatingError``."""
    in_year = [b for b in history if b["bill_date"] >= billable_year_start]
    annual_minimum_charged, year_to_date_gallons = rates.year_so_far(
        (EarlierBill(b["frequency"], b["includes_annual_minimum"], b["schedule_gallons"]) for b in in_year),
        frequency=frequency)
    return rates.rate(RatingInput(
        frequency=frequency, category=account.category, gallons=gallons, meter_size=meter_size,
        annual_minimum_charged=annual_minimum_charged, year_to_date_gallons=year_to_date_gallons,
        sprinkler_supply_inches=account.sprinkler_supply_inches, first_bill_of_year=not in_year, pro_rata=pro_rata,
        facts=account.rate_fields or {}))


def _bills_on_the_day(account_ids, run_on: date) -> tuple[set[int], dict[int, int], dict[int, date]]:
    """The accounts with a live bill dated ``run_on``; and, for those whose bill of the day was voided,
    how many times and when the last void was recorded."""
    billed: set[int] = set()
    of_the_day: list[int] = []
    for bill_id, account_id, status in Bill.objects.filter(account_id__any=account_ids, bill_date=run_on).order_by(
            ).values_list("id", "account_id", "status"):
        of_the_day.append(bill_id)
        if status != Bill.Status.VOID:
            billed.add(account_id)
    voided: dict[int, int] = defaultdict(int)
    voided_on: dict[int, date] = {}
    if of_the_day:
        for account_id, void_posted_on in LedgerEntry.objects.filter(
                bill_id__any=of_the_day, kind=LedgerEntry.Kind.VOID).order_by().values_list("account_id",
                                                                                          "posted_on"):
            voided[account_id] += 1
            voided_on[account_id] = max(void_posted_on, voided_on.get(account_id, run_on))
    return billed, voided, voided_on


def bill_accounts(*, account_ids: list[int], run_on: date, run: BillingRun | None, persist: bool) -> ChunkResult:
    """Rate and (when ``persist``) issue the bills due on ``run_on`` for these accounts."""
    ordinance = ordinance_on(run_on)
    calendar, rates, schedule_row = ordinance.calendar, ordinance.rates, ordinance.rate_schedule
    result = ChunkResult()

    if persist and is_postgres():
        # A chunk's queries are small and the run's workers already share the cores: a parallel plan only
        # adds its workers' start-up to each query.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL max_parallel_workers_per_gather = 0")
    # Lock the chunk's accounts in id order (a concurrent run waits here, then sees our bills).
    account_rows = Account.objects.filter(id__any=account_ids).order_by("id")
    if persist:
        account_rows = account_rows.select_for_update(of=("self",))
    rows = list(account_rows.values_list("id", "account_no", "book", "category", "sprinkler_supply_inches",
                                         "owner_id", "rate_fields"))
    # The owners by id, apart: joined, PostgreSQL hashes the whole customer table for a chunk's thousand.
    owners = {pk: (name, address) for pk, name, address in Customer.objects.filter(
        id__any=list({row[5] for row in rows})).order_by().values_list("id", "name", "mailing_address")}
    accounts = [AccountRow(account_id, account_no, book, category, sprinkler, *owners[owner_id], rate_fields)
                for account_id, account_no, book, category, sprinkler, owner_id, rate_fields in rows]
    billed, voided, voided_on = _bills_on_the_day(account_ids, run_on)
    # Each account's own cycle; the rest is loaded only for the accounts the day bills and not yet billed.
    spans = installation_spans(account_ids)
    day = _RunDayCalendar(calendar, run_on)
    cycles = {account.id: found for account in accounts
              if (found := _due_cycle(day, book=account.book, spans=spans.get(account.id, [])))}
    result.already_billed = sum(1 for account_id in cycles if account_id in billed)
    due = [account.id for account in accounts if account.id in cycles and account.id not in billed]
    if not due:
        return result
    waiting = waiting_charges(due, on=run_on, lock=persist)
    released = set(BillingException.objects.filter(
        account_id__any=due, bill_date=run_on, status=BillingException.Status.RELEASED,
        kind=BillingException.Kind.HIGH_USAGE).order_by().values_list("account_id", flat=True))
    earlier = earlier_bills(due, before=run_on,
                            since=min(cycles[account_id][0].billable_year_start for account_id in due))

    # The readings of the chunk are loaded once, up to the widest read window, from each meter's previous close.
    widest_end = max(cycles[account_id][0].read_window[1] for account_id in due)
    since: dict[int, date] = {}
    for account_id in due:
        history = earlier.get(account_id)
        start = history[-1]["period_end"] if history else date.min
        for span in spans[account_id]:
            since[span.meter_id] = min(start, since.get(span.meter_id, start))
    readings = readings_since(since, until=widest_end,
                              also={b[-1]["end_reading_id"] for b in earlier.values() if b})
    by_id = {r.id: r for reads in readings.values() for r in reads}

    new_bills: list[NewBill] = []
    rated_lines: list[tuple] = []
    carried: list[list[WaitingCharge]] = []
    exceptions: list[BillingException] = []
    resolved: list[int] = []
    for account in accounts:
        if account.id not in cycles or account.id in billed:
            continue
        cycle, current = cycles[account.id]
        frequency, window = cycle.frequency, cycle.read_window
        account_spans = spans[account.id]
        account_readings = readings if window[1] == widest_end else {
            s.meter_id: [r for r in readings.get(s.meter_id, []) if r.read_on <= window[1]] for s in account_spans}
        history = earlier.get(account.id, [])
        previous = history[-1] if history else None
        usage = usage_for_bill(
            installations=account_spans, readings=account_readings, window=window,
            previous_end=by_id.get(previous["end_reading_id"]) if previous else None,
            previous_period_end=previous["period_end"] if previous else None)
        if isinstance(usage, Problem):
            exceptions.append(BillingException(account_id=account.id, bill_date=run_on, kind=usage.kind,
                                               detail=usage.detail, run=run))
            continue
        period_days = max((usage.end.read_on - usage.start.read_on).days, 1)
        if history and account.id not in released:
            high = high_usage_words(usage.gallons, period_days, previous)
            if high:
                exceptions.append(BillingException(
                    account_id=account.id, bill_date=run_on, kind=BillingException.Kind.HIGH_USAGE, run=run,
                    detail=f"{high}; held for review"))
                continue
        try:
            rated = rate_usage(rates, frequency=frequency, account=account, gallons=usage.gallons,
                               meter_size=max((s.size for s in current), key=size_inches), history=history,
                               billable_year_start=cycle.billable_year_start)
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
        charges = waiting.get(account.id, [])
        total = rated.total + sum(c.amount for c in charges) if charges else rated.total
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
        rated_lines.append((*rated.lines, *(c.line() for c in charges)))
        carried.append(charges)
        resolved.append(account.id)
        result.bills += 1
        result.charges += len(charges)
        result.total += total

    result.exceptions = len(exceptions)
    result.new_exceptions = exceptions
    result.new_bills = new_bills
    result.new_lines = rated_lines
    if not persist:
        return result

    _bills_write(new_bills, rated_lines, carried)
    BillingException.objects.bulk_create(exceptions, ignore_conflicts=True)
    if resolved:
        BillingException.objects.filter(account_id__any=resolved, bill_date=run_on,
                                        status=BillingException.Status.OPEN).update(status=BillingException.Status.RESOLVED,
                                                            resolved_at=timezone.now())
    return result


def _bills_write(bills: list["NewBill"], lines_per_bill: list[tuple],
                 charges_per_bill: list[list[WaitingCharge]]) -> None:
    """Write the bills, their lines and their ledger entries: COPY on PostgreSQL, bulk_create elsewhere.

    A bill's ``water`` entry is its water lines; each charge it carries is its own ``fee`` or ``fine`` entry
    (source ``charge:<id>``, once), and the charge is marked as carried by the bill."""
    now = timezone.now()
    if is_postgres():
        for bill, bill_id in zip(bills, reserve_ids(Bill, len(bills)), strict=True):
            bill.pk = bill_id
    else:
        created = Bill.objects.bulk_create([Bill(**bill.fields(), total=Money(bill.total, "USD")) for bill in bills],
                                           batch_size=2000)
        for bill, row in zip(bills, created, strict=True):
            bill.pk = row.pk
    lines, entries, billed_charges = [], [], []
    water = LedgerEntry.Kind.WATER.value
    for bill, bill_lines, charges in zip(bills, lines_per_bill, charges_per_bill, strict=True):
        for position, line in enumerate(bill_lines, start=1):
            lines.append((bill.pk, position, line.kind, line.description, line.citation, line.quantity, line.rate,
                          line.amount, "USD"))
        entries.append(Posting(account_id=bill.account_id, kind=water, posted_on=bill.issued_on,
                               amount=bill.total - sum(c.amount for c in charges) if charges else bill.total,
                               source=bill_source(bill.pk), bill_id=bill.pk, description=f"Bill {bill.number}",
                               citation=bill_lines[0].citation if bill_lines else ""))
        if charges:
            entries.extend(Posting(account_id=bill.account_id, kind=c.kind, posted_on=bill.issued_on,
                                   amount=c.amount, source=charge_source(c.id), bill_id=bill.pk, citation=c.citation,
                                   description=c.description) for c in charges)
            billed_charges.extend(PendingCharge(pk=c.id, bill_id=bill.pk) for c in charges)
    line_columns = ("bill_id", "position", "kind", "description", "citation", "quantity", "rate", "amount",
                    "amount_currency")
    if is_postgres():
        bill_columns = ("id", "number", "public_id", "account_id", "run_id", "status", "frequency", "bill_date",
                        "issued_on", "recipient_name", "recipient_address", "due_date", "period_start",
                        "period_end", "gallons", "schedule_gallons",
                        "includes_annual_minimum", "start_reading_id", "end_reading_id", "estimated",
                        "rate_schedule_id", "total", "total_currency", "created_at", "void_reason", "void_description",
                        "pdf", "final")
        copy_rows(Bill, bill_columns, [
            (b.pk, b.number, b.public_id, b.account_id, b.run_id, Bill.Status.ISSUED.value, b.frequency, b.bill_date,
             b.issued_on, b.recipient_name, b.recipient_address, b.due_date, b.period_start, b.period_end,
             b.gallons, b.schedule_gallons,
             b.includes_annual_minimum, b.start_reading_id, b.end_reading_id, b.estimated, b.rate_schedule_id,
             b.total, "USD", now, "", "", "", b.final)
            for b in bills])
        copy_rows(BillLine, line_columns, lines)
    else:
        BillLine.objects.bulk_create([BillLine(**dict(zip(line_columns, row, strict=True))) for row in lines],
                                     batch_size=5000)
    ledger_post_many(entries, fresh=True)
    if billed_charges:
        PendingCharge.objects.bulk_update(billed_charges, ["bill"], batch_size=2000)
