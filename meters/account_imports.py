"""Importing accounts from a CSV file (``manage.py import_accounts`` and the admin upload page).

Each row brings an account with its meter and the meter's first reading, so the import stands on the
meters floor, above accounts.

One row per account and meter::

    account_no,book,category,owner_name,owner_address,occupant_name,service_address,sbl,
    meter_serial,meter_size,meter_unit,initial_reading,initial_read_date[,status][,closed_on][,units][,district]

An account with several meters (a domestic meter and a bypass meter on its sprinkler service, Mineola
§ 45.28 C(2); irrigation; the two registers of a compound meter read as two meters) is on one row per meter:
the first row brings the account, each later row with the same ``account_no`` one more meter, and every row
gives the same account columns (``book`` to ``sbl``, and ``status``). A bill counts the water through every
meter installed on the account.

``status`` (optional, active or vacant; blank is active) is what a new account opens with. An account the old
system closed comes over closed with ``status`` closed and its ``closed_on`` day (the optional last column, blank
otherwise), its meter removed that day, so what it still owes (its final bill, in the opening balances) is owed on
a closed account, as the relevy and the delinquency list read it. ``district`` (optional) puts a town's premises in
one of its water districts since before any bill; a premises already in another district is refused (a move is a
dated change on the premises).

The file is taken whole or not at all; every bad row is listed with its line, column and rule.

A new ``account_no`` creates the owner (``owner_address`` is the mailing address: one line per address
line, written as real line breaks inside a quoted value or as ``\\n``; commas are fine), the occupant if
named (mailed at the service address), the premises, the account (opened on ``initial_read_date``), the
open ownership row, the meter unless it is already on file, its installation, and the first reading
(``source="install"``), all dated ``initial_read_date``. Each account gets customer records of its own;
merging a landlord's duplicates is a clerk's decision, not a guess the import makes.

A meter already on file may be installed on a new account only if it is in stock (no open
installation), matches the file's size and unit, was removed on or before ``initial_read_date`` and has
no reading after it (an identical reading on that date is reused). A meter installed on any account is
an error naming that account.

An ``account_no`` already on file updates the names and addresses only, so a corrected file can be
imported again and importing the same file twice changes nothing:

* ``owner_name``: the same name (ignoring case and spacing) corrects the spelling and takes the new
  ``owner_address``; a different name is a change of owner — a new customer becomes the owner, the open
  ownership row ends and a new one starts, both on the import date;
* ``occupant_name``: a different name records a new occupant; a blank one removes the occupant;
* ``service_address`` and ``sbl`` update the premises.

The billing columns of an existing account — ``book``, ``category``, ``meter_serial``, ``meter_size``,
``meter_unit``, ``initial_reading``, ``initial_read_date`` and a ``status`` given — must match what is
recorded: a difference is an error pointing the clerk to the account page (or a meter change), because
moving an account between books or rewriting its installation reading changes bills and is not done
silently by a file.

Every row written gets a history entry naming the user and the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Subquery
from simple_history.utils import bulk_create_with_history, bulk_update_with_history

from accounts.models import Account, Customer, Ownership, Premises, PremisesDistrict
from core.csvimport import (
    CHUNK_SIZE,
    CsvLayout,
    CsvRow,
    ImportErrors,
    ImportResult,
    ImportSource,
    change_reason,
    chunked,
    control_problem,
    csv_rows,
    identifier,
    import_source_read,
    iso_date_until,
    one_of,
    progress_bar,
    text,
    whole_number,
)
from core.errors import ApplicationError, Conflict
from ordinance.models import BEGINNING
from ordinance.selectors import district_named, districts

from . import rules
from .models import Installation, Meter, Reading
from .selectors import meter_policy
from .services import reading_value
from .units import normalize_size

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

ACCOUNTS_LAYOUT = CsvLayout(required=(
    "account_no", "book", "category", "owner_name", "owner_address", "occupant_name", "service_address",
    "sbl", "meter_serial", "meter_size", "meter_unit", "initial_reading", "initial_read_date"),
    optional=("status", "closed_on", "units", "district"))
# The statuses a file may open an account with (blank: active); both are billed. A shut-off or a closing is a
# workflow of its own, never a file's.
IMPORT_STATUSES = (Account.Status.ACTIVE.value, Account.Status.VACANT.value)
INSTALL_SOURCE = "install"


def _max(model, name: str) -> int:
    return model._meta.get_field(name).max_length


def _name(*, required: bool):
    parse_text = text(max_length=_max(Customer, "name"), required=required)
    return lambda value: parse_text(" ".join(value.split()))


def _mailing_address(value: str) -> str:
    """One address line per text line; a literal ``\\n`` (some exports write it) is a line break too."""
    lines = (" ".join(line.split()) for line in value.replace("\\n", "\n").splitlines())
    address = "\n".join(line for line in lines if line)
    if not address:
        raise ValueError("is required (the owner's mailing address)")
    problem = control_problem(address, allow="\n")
    if problem:
        raise ValueError(problem)
    return address


def _district(value: str) -> str:
    try:
        return district_named(value)
    except ApplicationError as exc:
        raise ValueError(exc.errors[0].message) from None


def _size(value: str) -> str:
    if not value:
        raise ValueError("is required (inches: 5/8, 3/4, 1, 1 1/2, 2, …)")
    return normalize_size(value)


_PARSERS = {
    "account_no": identifier(max_length=_max(Account, "account_no")),
    "book": whole_number(minimum=1, maximum=10),
    "category": one_of(Account.Category.values),
    "owner_name": _name(required=True),
    "owner_address": _mailing_address,
    "occupant_name": _name(required=False),
    "service_address": text(max_length=_max(Premises, "service_address")),
    "sbl": text(max_length=_max(Premises, "sbl"), required=False),
    "meter_serial": identifier(max_length=_max(Meter, "serial")),
    "meter_size": _size,
    "meter_unit": one_of(Meter.Unit.values),
    "initial_reading": reading_value,
    "status": one_of((*IMPORT_STATUSES, Account.Status.CLOSED.value), default=""),
}


@dataclass
class _Row:
    line: int
    values: dict  # column → parsed value; a column whose value was bad is missing

    def __getattr__(self, column: str):
        # row.book and friends: the parsed value, or None when the value was bad.
        if column.startswith("_") or column == "values":
            raise AttributeError(column)
        return self.values.get(column)


@dataclass
class _StockMeter:
    meter: Meter
    open_on_account: str | None = None
    open_since: date | None = None
    last_removed: tuple[date, str] | None = None
    last_reading: tuple[date, int] | None = None


@dataclass
class _Existing:
    account: Account
    installations: list[Installation] = field(default_factory=list)
    ownership: Ownership | None = None
    install_readings: dict[tuple[int, date], int] = field(default_factory=dict)


@dataclass
class _Plan:
    """Everything the file writes, gathered before anything is saved."""

    new_rows: list[_Row] = field(default_factory=list)
    more_meters: list[tuple[_Row, _Row]] = field(default_factory=list)  # (a later meter's row, its account's row)
    reused_meters: dict[str, Meter] = field(default_factory=dict)
    reused_readings: set[str] = field(default_factory=set)
    # Existing rows the file changes, by id; the claims catch two rows giving one record different values.
    customers_changed: dict[int, Customer] = field(default_factory=dict)
    customer_claims: dict[int, tuple[int, str, str]] = field(default_factory=dict)
    premises_changed: dict[int, Premises] = field(default_factory=dict)
    premises_claims: dict[int, tuple[int, str, str]] = field(default_factory=dict)
    accounts_changed: dict[int, Account] = field(default_factory=dict)
    new_owners: dict[int, Customer] = field(default_factory=dict)  # by account id
    new_occupants: dict[int, Customer] = field(default_factory=dict)
    ownerships_ended: list[Ownership] = field(default_factory=list)
    districts_added: list[tuple[int, str]] = field(default_factory=list)  # (premises id, district) of a town
    unchanged: int = 0


def accounts_import(*, file: ImportSource, as_of: date, actor: AbstractBaseUser | None,
                    progress: bool = False) -> ImportResult:
    """Import every account in ``file``, or none: raises ImportRejected listing every bad row."""
    source = import_source_read(file)
    errors = ImportErrors(columns=ACCOUNTS_LAYOUT.columns)
    csv_data = csv_rows(text=source.text, layout=ACCOUNTS_LAYOUT, errors=errors)
    checking = progress_bar(csv_data, enabled=progress, desc="checking accounts", total=len(csv_data))
    rows = [_row_parse(row, as_of=as_of, errors=errors) for row in checking]
    policy = meter_policy()
    for row in rows:
        if row.meter_unit is not None and (problem := rules.unit_problem(policy, row.meter_unit)):
            errors.add(line=row.line, field="meter_unit", message=problem)
    first_rows = _meter_rows_check(rows, errors=errors)
    _duplicates_check(rows, "meter_serial", errors=errors)
    reason = change_reason(command="import_accounts", file=source)
    try:
        with transaction.atomic():
            existing = _existing_load([r.account_no for r in rows if r.account_no])
            stock = _meters_load([r.meter_serial for r in rows
                                  if r.meter_serial and r.account_no not in existing])
            plan = _Plan()
            for row in rows:
                first = first_rows.get(row.account_no)
                if row.account_no in existing:
                    if first is row:
                        _update_plan(row, existing[row.account_no], plan=plan, as_of=as_of, errors=errors)
                    else:
                        _recorded_check(row, existing[row.account_no], errors=errors)
                        plan.unchanged += 1
                elif row.account_no is not None and _create_check(row, stock.get(row.meter_serial), plan=plan,
                                                                  errors=errors):
                    if first is row:
                        plan.new_rows.append(row)
                    else:
                        plan.more_meters.append((row, first))
            errors.raise_if_any()
            _plan_save(plan, as_of=as_of, actor=actor, reason=reason)
    except IntegrityError as exc:
        raise Conflict("an account or meter in this file was saved by someone else while it was being "
                       "imported; nothing was saved — import the file again", field="file") from exc
    return ImportResult(created=len(plan.new_rows),
                        updated=len(rows) - len(plan.new_rows) - len(plan.more_meters) - plan.unchanged,
                        skipped=plan.unchanged)


# --- checking ---------------------------------------------------------------------------------------

def _row_parse(row: CsvRow, *, as_of: date, errors: ImportErrors) -> _Row:
    parsers = {**_PARSERS, "initial_read_date": iso_date_until(as_of)}
    if row["closed_on"]:
        parsers["closed_on"] = iso_date_until(as_of)
    if row["units"]:
        # The dwelling or commercial units the service supplies (1 when blank): a minimum "for each unit" counts them.
        parsers["units"] = whole_number(minimum=1, maximum=9999)
    if row["district"]:
        # A town's water district the premises is in (its code): its rules bill the account.
        parsers["district"] = _district
    values = {}
    for column, parser in parsers.items():
        value = errors.parse(row, column, parser)
        if value is not None:
            values[column] = value
    closed, closed_on, opened = values.get("status") == "closed", values.get("closed_on"), \
        values.get("initial_read_date")
    if closed and closed_on is None and not row["closed_on"]:
        errors.add(line=row.line, field="closed_on", message="is required for a closed account: the day it closed")
    elif closed_on is not None and not closed and "status" in values:
        errors.add(line=row.line, field="closed_on", message="is given only for a closed account (status closed)")
    elif closed_on is not None and opened is not None and closed_on < opened:
        errors.add(line=row.line, field="closed_on", message=f"{closed_on} is before the account opened "
                                                             f"({opened}, initial_read_date)")
    return _Row(line=row.line, values=values)


# The columns that describe the account, not the meter: the same on each row of an account with several meters.
ACCOUNT_COLUMNS = ("book", "category", "owner_name", "owner_address", "occupant_name", "service_address", "sbl",
                   "status", "closed_on", "units", "district")


def _meter_rows_check(rows: Sequence[_Row], *, errors: ImportErrors) -> dict[str, _Row]:
    """The first row of each account; a later row of the same account brings one more meter and must give the
    same account columns."""
    first: dict[str, _Row] = {}
    for row in rows:
        if row.account_no is None:
            continue
        if row.account_no not in first:
            first[row.account_no] = row
            continue
        account_row = first[row.account_no]
        for column in ACCOUNT_COLUMNS:
            if column in row.values and column in account_row.values \
                    and row.values[column] != account_row.values[column]:
                errors.add(line=row.line, field=column,
                           message=f"account {row.account_no} is also on line {account_row.line} (one row per "
                                   f"meter), with {column} {account_row.values[column]!r}; every row of an account "
                                   "gives the same account columns")
    return first


def _duplicates_check(rows: Sequence[_Row], column: str, *, errors: ImportErrors) -> None:
    first_line: dict[str, int] = {}
    for row in rows:
        value = row.values.get(column)
        if value is None:
            continue
        if value in first_line:
            errors.add(line=row.line, field=column,
                       message=f"'{value}' is already on line {first_line[value]} of this file; "
                               f"each {column} may appear once")
        else:
            first_line[value] = row.line


def _existing_load(account_nos: list[str]) -> dict[str, _Existing]:
    found: dict[str, _Existing] = {}
    for chunk in chunked(sorted(set(account_nos))):
        accounts = Account.objects.filter(account_no__in=chunk).select_related("owner", "occupant",
                                                                                "premises")
        found.update((a.account_no, _Existing(account=a)) for a in accounts)
    by_id = {e.account.id: e for e in found.values()}
    for chunk in chunked(sorted(by_id)):
        installed = Installation.objects.filter(account_id__in=chunk, removed_on__isnull=True)
        for inst in installed.select_related("meter"):
            by_id[inst.account_id].installations.append(inst)
        for ownership in Ownership.objects.filter(account_id__in=chunk, ended_on__isnull=True):
            by_id[ownership.account_id].ownership = ownership
    installs = [(inst.meter_id, inst.installed_on, e) for e in by_id.values() for inst in e.installations]
    for chunk in chunked(installs):
        wanted = {(meter_id, on): e for meter_id, on, e in chunk}
        readings = Reading.objects.filter(meter_id__in={m for m, _ in wanted},
                                          read_on__in={d for _, d in wanted})
        for meter_id, read_on, value in readings.order_by().values_list("meter_id", "read_on", "value"):
            if (meter_id, read_on) in wanted:
                wanted[meter_id, read_on].install_readings[meter_id, read_on] = value
    return found


def _meters_load(serials: list[str]) -> dict[str, _StockMeter]:
    found: dict[str, _StockMeter] = {}
    latest = Reading.objects.filter(meter=OuterRef("pk")).order_by("-read_on")
    for chunk in chunked(sorted(set(serials))):
        meters = Meter.objects.filter(serial__in=chunk).annotate(
            last_on=Subquery(latest.values("read_on")[:1]), last_value=Subquery(latest.values("value")[:1]))
        for meter in meters:
            found[meter.serial] = _StockMeter(
                meter=meter, last_reading=(meter.last_on, meter.last_value) if meter.last_on else None)
    by_id = {s.meter.id: s for s in found.values()}
    for chunk in chunked(sorted(by_id)):
        installations = Installation.objects.filter(meter_id__in=chunk).order_by("installed_on")
        for meter_id, installed_on, removed_on, account_no in installations.values_list(
                "meter_id", "installed_on", "removed_on", "account__account_no"):
            stock = by_id[meter_id]
            if removed_on is None:
                stock.open_on_account, stock.open_since = account_no, installed_on
            elif stock.last_removed is None or removed_on > stock.last_removed[0]:
                stock.last_removed = (removed_on, account_no)
    return found


def _create_check(row: _Row, stock: _StockMeter | None, *, plan: _Plan, errors: ImportErrors) -> bool:
    """Whether a new account's meter on ``row`` may be installed (a meter on file only from stock)."""
    if stock is None or row.meter_serial is None:
        return True
    meter, serial = stock.meter, row.meter_serial
    if stock.open_on_account is not None:
        errors.add(line=row.line, field="meter_serial",
                   message=f"meter {serial} is installed on account {stock.open_on_account} (since "
                           f"{stock.open_since}); remove it there first")
        return False
    if row.meter_size is not None and row.meter_size != meter.size:
        errors.add(line=row.line, field="meter_size",
                   message=f"meter {serial} is on file as {meter.size}\"; the file says {row.meter_size}\"")
    if row.meter_unit is not None and row.meter_unit != meter.unit:
        errors.add(line=row.line, field="meter_unit",
                   message=f"meter {serial} is on file reading in {meter.unit}; "
                           f"the file says {row.meter_unit}")
    installed_on, reading = row.initial_read_date, row.initial_reading
    if installed_on is not None and stock.last_removed and stock.last_removed[0] > installed_on:
        removed_on, account_no = stock.last_removed
        errors.add(line=row.line, field="initial_read_date",
                   message=f"meter {serial} was on account {account_no} until {removed_on}; it can be "
                           "installed again only on or after that date")
    elif installed_on is not None and reading is not None and stock.last_reading:
        last_on, last_value = stock.last_reading
        if last_on > installed_on:
            errors.add(line=row.line, field="initial_read_date",
                       message=f"meter {serial} already has a reading on {last_on}, after {installed_on}")
        elif last_on == installed_on and last_value != reading:
            errors.add(line=row.line, field="initial_reading",
                       message=f"meter {serial} already has a reading of {last_value} on {last_on}; "
                               f"the file says {reading}")
        elif last_value > reading:
            errors.add(line=row.line, field="initial_reading",
                       message=f"{reading} is lower than meter {serial}'s last reading {last_value} on "
                               f"{last_on}; a meter's readings never go down")
        elif last_on == installed_on:
            plan.reused_readings.add(serial)
    plan.reused_meters[serial] = meter
    return True


def _same_name(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def _update_plan(row: _Row, existing: _Existing, *, plan: _Plan, as_of: date, errors: ImportErrors) -> None:
    account = existing.account
    _recorded_check(row, existing, errors=errors)
    if row.line in errors.bad_lines:
        return
    changed = False
    if row.district:
        current = PremisesDistrict.objects.filter(premises_id=account.premises_id).order_by(
            "-effective_on").values_list("district__code", flat=True).first()
        if current is None:
            plan.districts_added.append((account.premises_id, row.district))
            changed = True
        elif current != row.district:
            errors.add(line=row.line, field="district",
                       message=f"the premises of account {account.account_no} is in district {current}; a premises "
                               "moves to another district by a dated change on the premises, not by a file")
            return

    owner = account.owner
    if _same_name(owner.name, row.owner_name):
        changed |= _customer_change(owner, name=row.owner_name, address=row.owner_address, row=row, plan=plan,
                                    column="owner_name", errors=errors)
    else:
        ownership = existing.ownership
        if ownership is not None and ownership.started_on > as_of:
            errors.add(line=row.line, field="owner_name",
                       message=f"the current owner of account {account.account_no}, {owner.name}, took over "
                               f"on {ownership.started_on}, after the import date {as_of}; a change of owner "
                               "cannot be dated before that")
            return
        plan.new_owners[account.id] = Customer(name=row.owner_name, mailing_address=row.owner_address)
        plan.accounts_changed[account.id] = account
        if ownership is not None:
            ownership.ended_on = as_of
            plan.ownerships_ended.append(ownership)
        changed = True

    occupant = account.occupant
    if not row.occupant_name:
        if occupant is not None:
            account.occupant = None
            plan.accounts_changed[account.id] = account
            changed = True
    elif occupant is not None and _same_name(occupant.name, row.occupant_name):
        changed |= _customer_change(occupant, name=row.occupant_name, address=occupant.mailing_address,
                                    row=row, plan=plan, column="occupant_name", errors=errors)
    else:
        plan.new_occupants[account.id] = Customer(name=row.occupant_name, mailing_address=row.service_address)
        plan.accounts_changed[account.id] = account
        changed = True

    premises = account.premises
    wanted = (row.service_address, row.sbl)
    claim = plan.premises_claims.setdefault(premises.id, (row.line, *wanted))
    if claim[1:] != wanted:
        errors.add(line=row.line, field="service_address",
                   message=f"account {account.account_no} shares its premises with the account on line "
                           f"{claim[0]}, which gives a different service address or SBL; give the same on "
                           "both rows")
    elif (premises.service_address, premises.sbl) != wanted:
        premises.service_address, premises.sbl = wanted
        plan.premises_changed[premises.id] = premises
        changed = True
    if not changed:
        plan.unchanged += 1


def _customer_change(customer: Customer, *, name: str, address: str, row: _Row, plan: _Plan, column: str,
                     errors: ImportErrors) -> bool:
    """Correct a customer's name or mailing address; one customer may be named on several rows."""
    claim = plan.customer_claims.setdefault(customer.id, (row.line, name, address))
    if claim[1:] != (name, address):
        errors.add(line=row.line, field=column,
                   message=f"{customer.name} is also named on line {claim[0]} (another account), with a "
                           "different spelling or mailing address; give the same on both rows")
        return False
    if customer.id in plan.customers_changed:
        return True
    if (customer.name, customer.mailing_address) == (name, address):
        return False
    customer.name, customer.mailing_address = name, address
    plan.customers_changed[customer.id] = customer
    return True


def _recorded_check(row: _Row, existing: _Existing, *, errors: ImportErrors) -> None:
    """An existing account's billing columns must match what is recorded; the import never rewrites them."""
    account = existing.account
    advice = "the import only updates names and addresses; change it on the account page"
    # A blank status (or a file without the column) leaves the recorded one alone.
    for column, recorded in (("book", account.book), ("category", account.category),
                             *((("status", account.status),) if row.status else ()),
                             *((("closed_on", account.closed_on),) if row.closed_on else ()),
                             *((("units", account.units),) if row.units else ())):
        value = row.values.get(column)
        if value is not None and value != recorded:
            errors.add(line=row.line, field=column,
                       message=f"account {account.account_no} is recorded with {column} {recorded}, the file "
                               f"says {value}; {advice}")
    if row.meter_serial is None or account.status == Account.Status.CLOSED:
        return  # a closed account's meters are out: nothing of theirs is recorded to compare
    installation = next((i for i in existing.installations if i.meter.serial == row.meter_serial), None)
    if installation is None:
        installed = ", ".join(sorted(i.meter.serial for i in existing.installations)) or "no meter"
        errors.add(line=row.line, field="meter_serial",
                   message=f"account {account.account_no} has {installed} installed, not {row.meter_serial}; "
                           "a meter added to an account already on file (a bypass or irrigation meter) or a "
                           "change of meter is recorded on the account's page, not by the file")
        return
    meter = installation.meter
    recorded_reading = existing.install_readings.get((meter.id, installation.installed_on))
    for column, recorded in (("meter_size", meter.size), ("meter_unit", meter.unit),
                             ("initial_read_date", installation.installed_on),
                             ("initial_reading", recorded_reading)):
        value = row.values.get(column)
        if value is not None and recorded is not None and value != recorded:
            errors.add(line=row.line, field=column,
                       message=f"meter {meter.serial} on account {account.account_no} is recorded with "
                               f"{column} {recorded}, the file says {value}; {advice}")


# --- saving -----------------------------------------------------------------------------------------

def _plan_save(plan: _Plan, *, as_of: date, actor: AbstractBaseUser | None, reason: str) -> None:
    def create(model, objs):
        if not objs:
            return []
        return bulk_create_with_history(objs, model, batch_size=CHUNK_SIZE, default_user=actor,
                                        default_change_reason=reason)

    def update(model, objs, fields):
        if objs:
            bulk_update_with_history(objs, model, fields, batch_size=CHUNK_SIZE, default_user=actor,
                                     default_change_reason=reason)

    new = plan.new_rows
    # Changes to existing accounts first, then the new accounts; parents before the rows that point at them.
    update(Customer, list(plan.customers_changed.values()), ["name", "mailing_address"])
    update(Premises, list(plan.premises_changed.values()), ["service_address", "sbl"])
    update(Ownership, plan.ownerships_ended, ["ended_on"])
    owners = [Customer(name=r.owner_name, mailing_address=r.owner_address) for r in new]
    occupants = {r.line: Customer(name=r.occupant_name, mailing_address=r.service_address)
                 for r in new if r.occupant_name}
    create(Customer, [*owners, *occupants.values(), *plan.new_owners.values(), *plan.new_occupants.values()])

    for account_id, owner in plan.new_owners.items():
        plan.accounts_changed[account_id].owner = owner
    for account_id, occupant in plan.new_occupants.items():
        plan.accounts_changed[account_id].occupant = occupant
    update(Account, list(plan.accounts_changed.values()), ["owner", "occupant"])
    create(Ownership, [Ownership(account_id=account_id, owner=owner, started_on=as_of)
                       for account_id, owner in plan.new_owners.items()])

    premises = create(Premises, [Premises(service_address=r.service_address, sbl=r.sbl) for r in new])
    accounts = create(Account, [
        Account(account_no=r.account_no, book=r.book, category=r.category,
                status=r.status or Account.Status.ACTIVE, closed_on=r.closed_on, units=r.units or 1,
                premises=p, owner=o,
                occupant=occupants.get(r.line), opened_on=r.initial_read_date)
        for r, p, o in zip(new, premises, owners, strict=True)])
    create(Ownership, [Ownership(account=a, owner=a.owner, started_on=r.initial_read_date)
                       for r, a in zip(new, accounts, strict=True)])
    # A town's premises in its district since before any bill (a later move is the clerk's dated change).
    town = districts()
    create(PremisesDistrict, [
        *(PremisesDistrict(premises=p, district=town[r.district], effective_on=BEGINNING,
                           note="brought over with the account") for r, p in zip(new, premises, strict=True)
          if r.district),
        *(PremisesDistrict(premises_id=premises_id, district=town[code], effective_on=BEGINNING,
                           note="brought over with the account") for premises_id, code in plan.districts_added)])
    # Each account's meters: its own row's, then one more for each later row of the account.
    by_line = {r.line: a for r, a in zip(new, accounts, strict=True)}
    metered = [*((r, a) for r, a in zip(new, accounts, strict=True)),
               *((r, by_line[first.line]) for r, first in plan.more_meters)]
    fresh = create(Meter, [Meter(serial=r.meter_serial, size=r.meter_size, unit=r.meter_unit)
                           for r, _a in metered if r.meter_serial not in plan.reused_meters])
    meters = {**{m.serial: m for m in fresh}, **plan.reused_meters}
    create(Installation, [
        Installation(meter=meters[r.meter_serial], account=a, installed_on=r.initial_read_date,
                     removed_on=a.closed_on)  # a closed account's meters came out the day it closed
        for r, a in metered])
    create(Reading, [
        Reading(meter=meters[r.meter_serial], read_on=r.initial_read_date, value=r.initial_reading,
                read_type=Reading.ReadType.ACTUAL, source=INSTALL_SOURCE, entered_by=actor)
        for r, _a in metered if r.meter_serial not in plan.reused_readings])
