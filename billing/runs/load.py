"""Loading a chunk of a billing run: each account's facts in a few queries (locked, when the run issues), and
which accounts the calendar bills on the day. Nothing here decides a bill; ``plan`` does, in Python."""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from django.db import connection
from django.db.models import Q

from accounts.models import Account, Customer
from core.db import is_any_of, is_postgres, lock_in_order
from meters.models import Installation, Reading
from meters.units import size_inches

from ..calendars import Cycle
from ..consumption import Read, Span
from ..models import Bill, BillingException, LedgerEntry, PendingCharge
from ..ordinance import BillingCalendar
from ..rating import Line
from ..sewer import winter_bill


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
    units: int = 1  # ``Account.units``: a minimum charged per dwelling unit counts them


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
    for account_id, meter_id, installed_on, removed_on, unit, size, places in Installation.objects.filter(
            account_id__any=account_ids).values_list("account_id", "meter_id", "installed_on", "removed_on",
                                                     "meter__unit", "meter__size", "meter__places"
                                                     ).order_by("installed_on"):
        spans[account_id].append(Span(meter_id, installed_on, removed_on, unit, size, places))
    return spans


BILL_HISTORY_COLUMNS = ("account_id", "bill_date", "frequency", "period_start", "period_end", "gallons",
                        "schedule_gallons", "includes_annual_minimum", "end_reading_id")


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


@dataclass
class ChunkFacts:
    """What the plan reads of a chunk of accounts on a run day."""

    accounts: list[AccountRow]
    # The accounts with a live bill of the day; how often, and when last, each one's bill of the day was voided.
    billed: set[int]
    voided: dict[int, int]
    voided_on: dict[int, date]
    spans: dict[int, list[Span]]
    # The cycle the calendar bills each account in on the day, with the meters in place at its read window's end.
    cycles: dict[int, tuple[Cycle, list[Span]]]
    waiting: dict[int, list[WaitingCharge]]
    released: set[int]  # accounts whose high-usage hold of the day the clerk released
    earlier: dict[int, list[dict]]
    readings: dict[int, list[Read]]
    widest_end: date | None  # the latest read window's end: the readings are loaded up to it
    # The districts of each account's premises, oldest first, where the installation names districts
    # (``billing.districts``); and each account's latest winter bill where a sewer rent caps at winter use.
    districts: dict = field(default_factory=dict)
    winter: dict[int, tuple[int, int]] = field(default_factory=dict)

    @property
    def due(self) -> list[int]:
        """The accounts the day bills that have no live bill of the day yet, in id order."""
        return [a.id for a in self.accounts if a.id in self.cycles and a.id not in self.billed]


def winter_bills(account_ids, *, months: tuple[int, ...], before: date) -> dict[int, tuple[int, int]]:
    """Each account's latest live bill whose period ended in ``months`` within the year before ``before``: (its
    gallons, its days) — what a sewer rent's winter cap reads (``billing.sewer``)."""
    history: dict[int, list[dict]] = defaultdict(list)
    # By the bill date, which the account's index orders (a period ends on or before its bill's date); the
    # period's end and its months are picked here.
    since = before - timedelta(days=366)
    for account_id, start, end, gallons in Bill.objects.filter(
            account_id__any=account_ids, bill_date__gte=since, bill_date__lt=before + timedelta(days=366),
            ).exclude(status=Bill.Status.VOID).order_by().values_list(
            "account_id", "period_start", "period_end", "gallons"):
        if end.month in months and since <= end < before:
            history[account_id].append({"period_start": start, "period_end": end, "gallons": gallons})
    for bills in history.values():
        bills.sort(key=lambda bill: bill["period_end"])
    return {account_id: found for account_id, bills in history.items()
            if (found := winter_bill(bills, months=months, before=before))}


def chunk_load(*, account_ids: list[int], run_on: date, calendar: BillingCalendar, lock: bool,
               districts: dict | None = None, winter_months: tuple[int, ...] = (),
               calendar_of: dict[int, BillingCalendar] | None = None) -> ChunkFacts:
    """The facts of a chunk of accounts on ``run_on``. With ``lock``, the accounts (in id order: a concurrent run
    waits here, then sees our bills) and the charges their bills would carry are locked until the transaction
    ends. ``districts``: the accounts' district histories (``billing.districts.district_history``);
    ``winter_months``: the months of a sewer rent's winter cap, whose latest bills are loaded; ``calendar_of``: a
    town's accounts whose district bills by a calendar of its own, each with it (``calendar`` for the others)."""
    account_rows = Account.objects.filter(id__any=account_ids)
    columns = ("id", "account_no", "book", "category", "sprinkler_supply_inches", "owner_id", "rate_fields", "units")
    rows = (lock_in_order(account_rows, *columns) if lock
            else list(account_rows.order_by("id").values_list(*columns)))
    # The owners by id, apart: joined, PostgreSQL hashes the whole customer table for a chunk's thousand.
    owners = {pk: (name, address) for pk, name, address in Customer.objects.filter(
        id__any=list({row[5] for row in rows})).order_by().values_list("id", "name", "mailing_address")}
    accounts = [AccountRow(account_id, account_no, book, category, sprinkler, *owners[owner_id], rate_fields, units)
                for account_id, account_no, book, category, sprinkler, owner_id, rate_fields, units in rows]
    billed, voided, voided_on = _bills_on_the_day(account_ids, run_on)
    # Each account's own cycle; the rest is loaded only for the accounts the day bills and not yet billed.
    spans = installation_spans(account_ids)
    day = _RunDayCalendar(calendar, run_on)
    days = {id(own): _RunDayCalendar(own, run_on) for own in (calendar_of or {}).values()}
    cycles = {account.id: found for account in accounts
              if (found := _due_cycle(days[id(calendar_of[account.id])] if calendar_of and account.id in calendar_of
                                      else day, book=account.book, spans=spans.get(account.id, [])))}
    facts = ChunkFacts(accounts=accounts, billed=billed, voided=voided, voided_on=voided_on, spans=spans,
                       cycles=cycles, waiting={}, released=set(), earlier={}, readings={}, widest_end=None,
                       districts=districts or {})
    due = facts.due
    if not due:
        return facts
    facts.waiting = waiting_charges(due, on=run_on, lock=lock)
    facts.released = set(BillingException.objects.filter(
        account_id__any=due, bill_date=run_on, status=BillingException.Status.RELEASED,
        kind=BillingException.Kind.HIGH_USAGE).order_by().values_list("account_id", flat=True))
    facts.earlier = earlier_bills(due, before=run_on,
                                  since=min(cycles[account_id][0].billable_year_start for account_id in due))
    # The readings of the chunk are loaded once, up to the widest read window, from each meter's previous close.
    facts.widest_end = max(cycles[account_id][0].read_window[1] for account_id in due)
    since: dict[int, date] = {}
    for account_id in due:
        history = facts.earlier.get(account_id)
        start = history[-1]["period_end"] if history else date.min
        for span in spans[account_id]:
            since[span.meter_id] = min(start, since.get(span.meter_id, start))
    facts.readings = readings_since(since, until=facts.widest_end,
                                    also={b[-1]["end_reading_id"] for b in facts.earlier.values() if b})
    if winter_months:
        facts.winter = winter_bills(due, months=winter_months, before=run_on)
    return facts
