"""Demo accounts: a village of believable customers, meters and two years of readings.

The data is Long Island-flavoured: streets of a Nassau County village, owners some of whom live elsewhere
(mailing address differs from the service address), tenants on about 15% of accounts, tax-map SBLs like
``9-123-45``; the town line of local addresses is the last line of the installed utility's office address.
Each street lies in one book, so all ten books fill evenly (a calendar with one book bills them all alike).

What the village holds follows the installed preset, never its name: every meter size, category and
sprinkler supply a demo account gets is one the rate schedule in force rates at the frequency the
calendar bills that size (a size or sprinkler supply the schedule has no rate for is left out), so the
demo bills without exceptions under any preset.

Readings follow the installed billing calendar (``billing.calendars``): a meter is read once in the
read window of every bill date it is due on — for Mineola the month before each of its book's two
billing dates (§ 45.29 A–B), and every month for meters larger than 1" (§ 45.29 C); for a quarterly
calendar the month before each quarterly bill date — on a weekday
close to the meter's route day. Every meter has an install reading a little over two years before
``as_of``, so the first bills in the period have a starting read. Consumption is seasonal (more in
summer); about 2% of reads are estimates, always at or below the true register so readings never go
down.

Speed matters (100,000 accounts within a minute on PostgreSQL), so a chunk of accounts at a time is
made as plain rows in Python and written with COPY (``bulk_create`` on SQLite), ids reserved first so
the rows can refer to each other, memory staying flat. Customers, premises, accounts, ownerships, meters
and installations each get one "created" history row (reason "demo data"), so a clerk's first edit
already shows old → new; readings, the bulk of the rows, get none. The same seed gives the same village;
portal access codes and public ids stay random because they are secrets.
"""

import json
import math
import random
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, models, reset_queries, transaction
from django.utils import timezone
from tqdm import tqdm

from accounts.models import Account, Customer, Ownership, Premises, PremisesDistrict, new_access_code
from core.db import copy_rows, is_postgres, reserve_ids
from core.errors import ApplicationError
from meters.models import Installation, Meter, Reading
from meters.units import GALLONS_PER_CUBIC_FOOT
from ordinance.models import BEGINNING, District

from .directory import (
    BUSINESS_KINDS,
    BUSINESS_USES,
    DECK,
    FAITHS,
    FIRST_NAMES,
    GROUPS,
    LARGE_DAILY,
    LARGE_SIZES,
    LAST_NAMES,
    MAKES,
    NONPROFITS,
    OUT_OF_TOWN,
    PEAK_DAY,
    SAINTS,
    SBL_SECTIONS,
    SMALL_SIZES,
    SPRINKLER_INCHES,
    STREETS,
    TOWN_LINE,
    YEAR_DAYS,
)

CHUNK_ACCOUNTS = 2_000
BATCH_SIZE = 5_000
HISTORY_REASON = "demo data"



def demo_accounts_create(*, count: int, as_of: date, seed: int, progress: bool = False) -> int:
    """Add ``count`` demo accounts with meters and two years of readings up to ``as_of``; returns count."""
    if count <= 0:
        return 0
    village = _Village(rng=random.Random(seed), as_of=as_of, first_seq=_next_account_seq())
    with transaction.atomic(), tqdm(total=count, unit=" accounts", disable=not progress) as bar:
        for start in range(0, count, CHUNK_ACCOUNTS):
            size = min(CHUNK_ACCOUNTS, count - start)
            _write(village.chunk(start, size))
            _forget_logged_queries()
            bar.update(size)
    return count


def _forget_logged_queries() -> None:
    # With DEBUG on, Django keeps the SQL of every query, and each bulk insert's runs to megabytes; drop
    # it per chunk so memory stays flat (unless a test is capturing queries to count them).
    if settings.DEBUG and not connection.force_debug_cursor:
        reset_queries()


def _next_account_seq() -> int:
    """One past the highest ``B-NNNNN`` number in use, so repeated demos never collide."""
    pattern = re.compile(r"^\d{1,2}-(\d+)$")
    highest = 0
    for number in Account.objects.values_list("account_no", flat=True).iterator(chunk_size=10_000):
        match = pattern.match(number)
        if match:
            highest = max(highest, int(match.group(1)))
    return highest + 1


def _calendar(district: str = ""):
    """The installed utility's billing calendar (a district's own where it has one)."""
    from ordinance.selectors import installed_utility, section

    utility = installed_utility()
    if utility is None:
        raise ApplicationError("no preset is installed; run `manage.py setup_utility mineola` first", field="preset")
    return section("calendar", installed=utility, district=district)


def _districts() -> list[str]:
    """A town's districts by code ([] for a village): the demo's streets are shared out among them."""
    from ordinance.selectors import districts

    return list(districts())


def _town_line() -> str:
    """The last line of the installed utility's office address (its town), or Mineola's."""
    from ordinance.selectors import installed_utility

    address = getattr(installed_utility(), "office_address", "")
    lines = [line.strip() for line in address.splitlines() if line.strip()]
    return lines[-1] if lines else TOWN_LINE


def _rates(as_of: date):
    """The rate structure in force on ``as_of``, or None when no preset or schedule is installed yet."""
    from billing.models import RateSchedule
    from billing.ordinance import rate_structure_for

    row = RateSchedule.objects.filter(effective_on__lte=as_of).order_by("-effective_on").first()
    return rate_structure_for(row.rules) if row is not None else None


class _Billable:
    """Which meter sizes, categories and sprinkler supplies the preset's rates bill: each is tried once on
    the rate structure in force, at the frequency the calendar bills the size."""

    def __init__(self, calendar, rates):
        self.calendar, self.rates = calendar, rates

    def _rates_ok(self, **facts) -> bool:
        from billing.rating import RatingError, RatingInput

        if self.rates is None:
            return True
        facts.setdefault("category", Account.Category.OTHER)
        facts.setdefault("meter_size", "5/8")
        try:
            # The demo's accounts carry no rate fields; a structure that needs some bills none of them.
            self.rates.rate(RatingInput(frequency=self.calendar.frequency_for(facts["meter_size"]),
                                        gallons=50_000, facts={}, **facts))
        except RatingError:
            return False
        return True

    def sizes(self, table, category: str) -> tuple:
        kept = tuple((size, weight) for size, weight in table if self._rates_ok(meter_size=size, category=category))
        return kept or table

    def category(self, category: str) -> bool:
        return self._rates_ok(category=category)

    def sprinkler_sizes(self) -> tuple[str, ...]:
        return tuple(size for size in SPRINKLER_INCHES
                     if self._rates_ok(sprinkler_supply_inches=size, first_bill_of_year=True))


def _two_years_before(day: date) -> date:
    try:
        return day.replace(year=day.year - 2)
    except ValueError:  # 29 February
        return day.replace(year=day.year - 2, day=28)


def _first_of_month(day: date, months: int = 0) -> date:
    index = day.month - 1 + months
    return date(day.year + index // 12, index % 12 + 1, 1)


# The rows of one chunk, as plain objects: a row names the rows it refers to, whose ids ``_write`` sets as it
# writes them, parents first.

@dataclass(slots=True, eq=False)
class _Customer:
    name: str
    mailing_address: str
    email: str
    phone: str
    id: int | None = None


@dataclass(slots=True, eq=False)
class _Premises:
    service_address: str
    sbl: str
    use_category: str
    district: str = ""  # a town's water district (its code)
    id: int | None = None


@dataclass(slots=True, eq=False)
class _InDistrict:
    premises: _Premises
    id: int | None = None


@dataclass(slots=True, eq=False)
class _Meter:
    serial: str
    make: str
    size: str
    unit: str
    dials: int = 6
    id: int | None = None


@dataclass(slots=True, eq=False)
class _Account:
    account_no: str
    book: int
    category: str
    premises: _Premises
    owner: _Customer
    occupant: _Customer | None
    opened_on: date
    paperless: bool
    sprinkler_supply_inches: str
    id: int | None = None


@dataclass(slots=True, eq=False)
class _Ownership:
    account: _Account
    owner: _Customer
    started_on: date
    ended_on: date | None = None
    id: int | None = None


@dataclass(slots=True, eq=False)
class _Installation:
    meter: _Meter
    account: _Account
    installed_on: date
    id: int | None = None


@dataclass
class _Chunk:
    customers: list[_Customer] = field(default_factory=list)
    premises: list[_Premises] = field(default_factory=list)
    meters: list[_Meter] = field(default_factory=list)
    accounts: list[_Account] = field(default_factory=list)
    ownerships: list[_Ownership] = field(default_factory=list)
    installations: list[_Installation] = field(default_factory=list)
    # (meter, read_on, value, read_type, source, note)
    readings: list[tuple] = field(default_factory=list)


def _write(chunk: _Chunk) -> None:
    """Write the chunk's rows, parents first, each but the readings with its "created" history row."""
    _avoid_serials_in_use(chunk.meters)
    now = timezone.now()
    _insert(Customer, ("name", "mailing_address", "email", "phone"), chunk.customers,
            lambda c: (c.name, c.mailing_address, c.email, c.phone), now=now)
    _insert(Premises, ("service_address", "sbl", "use_category"), chunk.premises,
            lambda p: (p.service_address, p.sbl, p.use_category), now=now)
    town = {p.district for p in chunk.premises if p.district}
    if town:
        district_ids = dict(District.objects.filter(code__in=town).values_list("code", "id"))
        _insert(PremisesDistrict, ("premises_id", "district_id", "effective_on", "note"),
                [_InDistrict(p) for p in chunk.premises if p.district],
                lambda row: (row.premises.id, district_ids[row.premises.district], BEGINNING, "demo"), now=now)
    _insert(Meter, ("serial", "make", "size", "unit", "dials"), chunk.meters,
            lambda m: (m.serial, m.make, m.size, m.unit, m.dials), now=now)
    _insert(Account, ("account_no", "public_id", "access_code", "book", "category", "premises_id", "owner_id",
                      "occupant_id", "status", "paperless", "sprinkler_supply_inches", "rate_fields", "opened_on"),
            chunk.accounts,
            # The portal secrets are drawn as the model's defaults draw them, never from the seeded generator.
            lambda a: (a.account_no, uuid.uuid4(), new_access_code(), a.book, a.category, a.premises.id, a.owner.id,
                       a.occupant.id if a.occupant is not None else None, Account.Status.ACTIVE, a.paperless,
                       a.sprinkler_supply_inches, {}, a.opened_on), now=now)
    _insert(Ownership, ("account_id", "owner_id", "started_on", "ended_on"), chunk.ownerships,
            lambda o: (o.account.id, o.owner.id, o.started_on, o.ended_on), now=now)
    _insert(Installation, ("meter_id", "account_id", "installed_on"), chunk.installations,
            lambda i: (i.meter.id, i.account.id, i.installed_on), now=now)
    fields = ("meter_id", "read_on", "value", "read_type", "source", "note", "entered_at")
    readings = [(meter.id, read_on, value, read_type, source, note, now)
                for meter, read_on, value, read_type, source, note in chunk.readings]
    if is_postgres():
        copy_rows(Reading, fields, readings)
    else:
        Reading.objects.bulk_create([Reading(**dict(zip(fields, row, strict=True))) for row in readings],
                                    batch_size=BATCH_SIZE)


def _insert(model: type[models.Model], fields: tuple[str, ...], rows: list, values: Callable[[Any], tuple], *,
            now: datetime) -> None:
    """Write one row of ``model`` per item of ``rows`` (``values(row)`` gives its ``fields``, by attribute
    name) and a "created" history row for each, then set each item's ``id``.

    On PostgreSQL the ids are reserved first and both tables are written with COPY; elsewhere with
    ``bulk_create`` and simple_history's ``bulk_history_create``, which write the same rows.
    """
    if not rows:
        return
    table = [values(row) for row in rows]
    if not is_postgres():
        objs = [model(**dict(zip(fields, row, strict=True))) for row in table]
        model.objects.bulk_create(objs, batch_size=BATCH_SIZE)
        model.history.bulk_history_create(objs, batch_size=BATCH_SIZE, default_date=now,
                                          default_change_reason=HISTORY_REASON)
        ids = [obj.pk for obj in objs]
    else:
        # COPY reads a JSON column's text as it stands, so those values are written as JSON first.
        as_json = {at for at, name in enumerate(fields) if isinstance(model._meta.get_field(name), models.JSONField)}
        if as_json:
            table = [tuple(json.dumps(v) if at in as_json else v for at, v in enumerate(row)) for row in table]
        ids = reserve_ids(model, len(table))
        columns = ("id", *(model._meta.get_field(name).column for name in fields))
        copy_rows(model, columns, [(pk, *row) for pk, row in zip(ids, table, strict=True)])
        copy_rows(model.history.model, (*columns, "history_date", "history_change_reason", "history_type"),
                  [(pk, *row, now, HISTORY_REASON, "+") for pk, row in zip(ids, table, strict=True)])
    for row, pk in zip(rows, ids, strict=True):
        row.id = pk


def _avoid_serials_in_use(meters: list[_Meter]) -> None:
    """Demo serials follow the account numbers; a real meter on file with the same serial keeps it."""
    taken = set(Meter.objects.filter(serial__in=[m.serial for m in meters]).values_list("serial", flat=True))
    for meter in meters:
        if meter.serial in taken:
            suffix = 1
            while Meter.objects.filter(serial=f"{meter.serial}-{suffix}").exists():
                suffix += 1
            meter.serial = f"{meter.serial}-{suffix}"


class _Village:
    def __init__(self, *, rng: random.Random, as_of: date, first_seq: int):
        self.rng = rng
        self.as_of = as_of
        self.first_seq = first_seq
        self.calendar = _calendar()
        # A town's streets are shared out among its districts, each read and billed by its district's calendar.
        self.districts = _districts()
        self.calendars = {code: _calendar(code) for code in self.districts}
        self.town_line = _town_line()
        self.town = self.town_line.split(",")[0]
        billable = _Billable(self.calendar, _rates(as_of))
        self.large_sizes = billable.sizes(LARGE_SIZES, Account.Category.OTHER)
        self.small_sizes = {category: billable.sizes(table, category) for category, table in SMALL_SIZES.items()}
        self.sprinkler_sizes = billable.sprinkler_sizes()
        # A category the rates cannot bill is dealt as "other use" instead.
        self.deck_cards = [(category if billable.category(category) else Account.Category.OTHER, large)
                           for category, large in DECK]
        self.deck: list = []
        self.open_base = _two_years_before(as_of)
        self._windows: dict[tuple[int, str, str], list[tuple[date, date]]] = {}

    # -- the pieces of one account ------------------------------------------------------------

    def chunk(self, start: int, size: int) -> _Chunk:
        out = _Chunk()
        for i in range(size):
            self._account(out, self.first_seq + start + i)
        return out

    def _account(self, out: _Chunk, seq: int) -> None:
        rng = self.rng
        if not self.deck:
            self.deck = list(self.deck_cards)
            rng.shuffle(self.deck)
        category, large = self.deck.pop()
        if large is None:
            large = rng.random() < 0.4
        street_index, row = seq % len(STREETS), seq // len(STREETS)
        book = 1 + street_index % 10
        # Rows map one-to-one onto scattered house numbers, odd or even side, never repeating on a street.
        house = 1 + 2 * ((row * 101) % 331) + 662 * (row // 331) + rng.randint(0, 1)
        service_address = f"{house} {STREETS[street_index]}"
        sbl = (f"{SBL_SECTIONS[street_index % 3]}-{1 + street_index // 3 + 40 * (row // 30)}"
               f"-{1 + row % 30 + rng.choice((0, 0, 0, 30, 60))}")
        opened_on = self._weekday_on_or_before(self.open_base - timedelta(days=rng.randint(0, 20)))

        district = self.districts[street_index % len(self.districts)] if self.districts else ""
        premises = _Premises(service_address=service_address, sbl=sbl, use_category=self._use(category),
                             district=district)
        owner = self._owner(category, service_address)
        occupant = self._occupant(category, service_address)
        if occupant is not None and rng.random() < 0.85:
            owner.mailing_address = self._elsewhere()
        account = _Account(
            account_no=f"{book}-{seq:05d}", book=book, category=category, premises=premises, owner=owner,
            occupant=occupant, opened_on=opened_on, paperless=bool(owner.email) and rng.random() < 0.2,
            sprinkler_supply_inches=(rng.choice(self.sprinkler_sizes)
                                     if self.sprinkler_sizes and category == Account.Category.OTHER
                                     and rng.random() < 0.05 else ""),
        )
        out.premises.append(premises)
        out.customers.append(owner)
        if occupant is not None:
            out.customers.append(occupant)
        out.accounts.append(account)
        self._ownerships(out, account, owner, opened_on)

        size = self._weighted(self.large_sizes if large else self.small_sizes[category])
        unit = Meter.Unit.CUBIC_FEET if rng.random() < 0.03 else Meter.Unit.GALLONS
        make, prefix = self._make()
        meter = _Meter(serial=f"{prefix}{seq:08d}", make=make, size=size, unit=unit)
        out.meters.append(meter)
        out.installations.append(_Installation(meter=meter, account=account, installed_on=opened_on))
        self._readings(out, meter, book=book, category=category, opened_on=opened_on, district=district)

    def _use(self, category: str) -> str:
        if category == Account.Category.ONE_TWO_FAMILY:
            return Premises.UseCategory.RESIDENTIAL
        if category == Account.Category.NONPROFIT:
            return Premises.UseCategory.INSTITUTIONAL
        return self.rng.choice((Premises.UseCategory.COMMERCIAL,) * 8 + (Premises.UseCategory.INDUSTRIAL,))

    def _person(self) -> tuple[str, str, str]:
        rng = self.rng
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        roll = rng.random()
        if roll < 0.25:
            return f"{first} and {rng.choice(FIRST_NAMES)} {last}", first, last
        if roll < 0.28:
            return f"{last} Family Trust", first, last
        if roll < 0.30:
            return f"Estate of {first} {last}", first, last
        return f"{first} {last}", first, last

    def _contact(self, first: str, last: str) -> tuple[str, str]:
        rng = self.rng
        handle = re.sub(r"[^a-z.]", "", f"{first}.{last}".lower())
        email = f"{handle}{rng.randint(1, 999)}@example.{rng.choice(('com', 'net', 'org'))}" \
            if rng.random() < 0.45 else ""
        phone = f"(516) 555-01{rng.randint(0, 99):02d}" if rng.random() < 0.6 else ""
        return email, phone

    def _owner(self, category: str, service_address: str) -> _Customer:
        rng = self.rng
        at_home = f"{service_address}\n{self.town_line}"
        if category == Account.Category.ONE_TWO_FAMILY:
            name, first, last = self._person()
            mailing = self._elsewhere() if rng.random() < 0.08 else at_home
        elif category == Account.Category.NONPROFIT:
            template = rng.choice(NONPROFITS)
            name = template.format(saint=rng.choice(SAINTS), faith=rng.choice(FAITHS),
                                   group=rng.choice(GROUPS), street=service_address.split(" ", 1)[1],
                                   town=self.town,
                                   n=rng.randint(1, 6))
            first, last = "office", "nonprofit"
            mailing = at_home if rng.random() < 0.8 else f"PO Box {rng.randint(100, 999)}\n{self.town_line}"
        else:
            last = rng.choice(LAST_NAMES)
            first = "info"
            if rng.random() < 0.5:
                name = f"{last} {rng.choice(BUSINESS_KINDS)}"
            else:
                name = f"{service_address.split(' ', 1)[1]} {rng.choice(BUSINESS_KINDS)}"
            mailing = self._elsewhere() if rng.random() < 0.7 else at_home
        email, phone = self._contact(first, last)
        return _Customer(name=name, mailing_address=mailing, email=email, phone=phone)

    def _occupant(self, category: str, service_address: str) -> _Customer | None:
        rng = self.rng
        chance = {Account.Category.ONE_TWO_FAMILY: 0.13, Account.Category.OTHER: 0.3}.get(category, 0.0)
        if rng.random() >= chance:
            return None
        if category == Account.Category.OTHER:
            name, first, last = f"{rng.choice(LAST_NAMES)}'s {rng.choice(BUSINESS_USES)}", "shop", "tenant"
        else:
            name, first, last = self._person()
        email, phone = self._contact(first, last)
        return _Customer(name=name, mailing_address=f"{service_address}\n{self.town_line}", email=email,
                        phone=phone)

    def _elsewhere(self) -> str:
        rng = self.rng
        town = rng.choice(OUT_OF_TOWN)
        if rng.random() < 0.15:
            return f"PO Box {rng.randint(10, 9999)}\n{town}"
        street = rng.choice(STREETS).rsplit(" ", 1)[0]
        suffix = rng.choice(("Street", "Avenue", "Road", "Lane", "Court", "Drive"))
        apt = f", Apt {rng.randint(1, 12)}{rng.choice('ABCD')}" if rng.random() < 0.2 else ""
        return f"{rng.randint(1, 2999)} {street} {suffix}{apt}\n{town}"

    def _ownerships(self, out: _Chunk, account: _Account, owner: _Customer, opened_on: date) -> None:
        rng = self.rng
        if rng.random() < 0.04:
            # The premises changed hands during the two years: the seller's ownership is closed.
            sold_on = opened_on + timedelta(days=rng.randint(60, 600))
            name, first, last = self._person()
            email, phone = self._contact(first, last)
            seller = _Customer(name=name, mailing_address=self._elsewhere(), email=email, phone=phone)
            out.customers.append(seller)
            out.ownerships.append(_Ownership(account=account, owner=seller, started_on=opened_on,
                                             ended_on=sold_on - timedelta(days=1)))
            out.ownerships.append(_Ownership(account=account, owner=owner, started_on=sold_on))
        else:
            out.ownerships.append(_Ownership(account=account, owner=owner, started_on=opened_on))

    def _make(self) -> tuple[str, str]:
        weights = [w for _, _, w in MAKES]
        make, prefix, _ = self.rng.choices(MAKES, weights=weights)[0]
        return make, prefix

    def _weighted(self, table) -> str:
        return self.rng.choices([v for v, _ in table], weights=[w for _, w in table])[0]

    # -- readings -----------------------------------------------------------------------------

    def _read_windows(self, book: int, frequency: str, district: str = "") -> list[tuple[date, date]]:
        """Read windows of every bill date from before the install reading up to just after as_of."""
        key = (book, frequency, district)
        calendar = self.calendars.get(district, self.calendar)
        if key not in self._windows:
            windows = []
            bill_date = _first_of_month(self.open_base, -1)
            last = _first_of_month(self.as_of, 2)
            while bill_date <= last:
                if calendar.is_due(book=book, frequency=frequency, on=bill_date):
                    windows.append(calendar.cycle(book=book, frequency=frequency, bill_date=bill_date)
                                   .read_window)
                bill_date = _first_of_month(bill_date, 1)
            self._windows[key] = windows
        return self._windows[key]

    def _daily_use(self, category: str, size: str) -> tuple[float, float]:
        """(gallons a day on average, seasonal swing) for one premises."""
        rng = self.rng
        if size in LARGE_DAILY:
            low, high = LARGE_DAILY[size]
            return rng.uniform(low, high), 0.2
        if category == Account.Category.ONE_TWO_FAMILY:
            return min(430.0, max(200.0, rng.lognormvariate(math.log(300), 0.2))), 0.25
        if category == Account.Category.NONPROFIT:
            return min(1500.0, max(80.0, rng.lognormvariate(math.log(300), 0.5))), 0.2
        return min(2500.0, max(100.0, rng.lognormvariate(math.log(500), 0.5))), 0.15

    @staticmethod
    def _seasonal_days(start: date, end: date, swing: float) -> float:
        """∫ (1 + swing·cos(2π(t − peak)/year)) dt from start to end, in days."""
        w = 2 * math.pi / YEAR_DAYS
        a, b = start.toordinal() - PEAK_DAY, end.toordinal() - PEAK_DAY
        return (b - a) + swing / w * (math.sin(w * b) - math.sin(w * a))

    def _readings(self, out: _Chunk, meter: _Meter, *, book: int, category: str, opened_on: date,
                  district: str = "") -> None:
        rng = self.rng
        frequency = self.calendar.frequency_for(meter.size)
        daily, swing = self._daily_use(category, meter.size)
        per_unit = float(GALLONS_PER_CUBIC_FOOT) if meter.unit == Meter.Unit.CUBIC_FEET else 1.0
        route_day = rng.randint(3, 22)
        start_value = rng.randint(0, 400_000 if per_unit > 1 else 4_000_000)
        if meter.size in LARGE_DAILY:
            start_value *= 10

        reads = [(opened_on, start_value, Reading.ReadType.ACTUAL, "install", "")]
        gallons = 0.0
        previous_day, value = opened_on, start_value
        for first, last in self._read_windows(book, frequency, district):
            day = self._route_date(first, last, route_day + rng.randint(-2, 2))
            # The install reading stands for the window it falls in, so the first bill is a full period.
            if first <= opened_on or day > self.as_of:
                continue
            gallons += daily * self._seasonal_days(previous_day, day, swing) * rng.uniform(0.85, 1.15)
            true_value = start_value + int(gallons / per_unit)
            if rng.random() < 0.02:
                # Could not get to the meter: estimated low from average use, trued up by the next read.
                value += int((true_value - value) * rng.uniform(0.8, 0.98))
                reads.append((day, value, Reading.ReadType.ESTIMATED, "estimate",
                              "No access to the meter; estimated from average daily use."))
            else:
                value = true_value
                reads.append((day, value, Reading.ReadType.ACTUAL, "import", ""))
            previous_day = day
        meter.dials = max(7 if per_unit == 1.0 else 6, len(str(value)))
        out.readings.extend((meter, *read) for read in reads)

    @staticmethod
    def _route_date(first: date, last: date, day_of_month: int) -> date:
        """The route day within the window, moved off the weekend (Saturday back, Sunday forward)."""
        day = min(max(first, first.replace(day=max(1, min(day_of_month, 28)))), last)
        weekday = day.weekday()
        if weekday == 5:
            day = day - timedelta(days=1) if day - timedelta(days=1) >= first else day + timedelta(days=2)
        elif weekday == 6:
            day = day + timedelta(days=1) if day + timedelta(days=1) <= last else day - timedelta(days=2)
        return day

    @staticmethod
    def _weekday_on_or_before(day: date) -> date:
        while day.weekday() >= 5:
            day -= timedelta(days=1)
        return day
