"""The route going out to a handheld (``route_file``): a book's meters in route order, each with its last reading and
the range expected for the read, written so that the file comes back as it went out.

Each stop is a reading record of the mapping's own layout — the record prefix, the meter's serial, the last read's
day and register where the reading record has them (in the file's unit: the register ÷ the multiplier, in the
mapping's unit and decimal mark), the code of an actual read — with the route's own fields (the stop, the range
expected: low rounded up, high rounded down) where ``[route]`` puts them, clear of the reading's fields; the
layout's header and trailer records carry the count and total the import checks. A reader who keys a reading over
the last one sends back a file the same mapping imports; a stop keyed back unchanged is the reading already on
file, and nothing new is recorded.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from django.db.models import F

from core.csvout import csv_writer
from core.errors import ApplicationError
from ordinance.selectors import installed_utility

from .. import rules
from ..models import Installation
from .mapping import READ_FIELDS, ROUTE_FIELDS, ROUTE_READ_FIELDS, UNITS, Control, ReadMapping
from .registers import history_of


@dataclass(frozen=True)
class RouteStop:
    route_stop: int | None
    account_no: str
    service_address: str
    meter_serial: str
    meter_size: str
    meter_unit: str
    last_read_date: date | None
    last_reading: int | None
    low: int | None
    high: int | None
    meter_places: int = 0  # the register's places: its readings are kept in those steps


def route_stops(*, book: int, on: date) -> list[RouteStop]:
    """The book's meters in route order, each with its last reading and the range expected for a read ``on``."""
    utility = installed_utility()
    factor = utility.high_usage_factor if utility else Decimal(3)
    installations = list(Installation.objects.filter(account__book=book, installed_on__lte=on)
                         .filter(removed_on__isnull=True).select_related("meter", "account__premises")
                         .order_by(F("account__premises__route_order").asc(nulls_last=True),
                                   "account__premises__service_address", "account__account_no"))
    history = history_of({i.meter_id for i in installations}, before=on + timedelta(days=1))
    stops = []
    for installation in installations:
        earlier = history.get(installation.meter_id, [])
        last_on, last = earlier[-1] if earlier else (None, None)
        span = rules.expected_range(earlier, on, factor=factor)
        account = installation.account
        stops.append(RouteStop(route_stop=account.premises.route_order, account_no=account.account_no,
                               service_address=account.premises.service_address, meter_serial=installation.meter.serial,
                               meter_size=installation.meter.size, meter_unit=installation.meter.unit,
                               last_read_date=last_on, last_reading=last, low=span[0] if span else None,
                               high=span[1] if span else None, meter_places=installation.meter.places))
    return stops


def file_units(register: int, *, mapping: ReadMapping, meter_unit: str, places: int = 0,
               rounding: str = ROUND_FLOOR) -> Decimal:
    """A register in the meter's unit as the mapping's file writes it: ÷ the multiplier, in the file's unit, to the
    places the file can carry (a fixed layout: its implied decimals; whole numbers otherwise unless the unit needs
    places), rounded as asked where it does not fit."""
    _family, scale = UNITS.get(mapping.unit or meter_unit, (meter_unit, 1))
    number = Decimal(register).scaleb(-places) / (mapping.multiplier * scale)
    if mapping.layout == "fixed":
        return number.quantize(Decimal(1).scaleb(-mapping.implied_decimals), rounding=rounding)
    return number.normalize() if number != number.to_integral_value() else number.to_integral_value()


def _number_text(number: Decimal, mapping: ReadMapping) -> str:
    if mapping.layout == "fixed":
        return str(int(number.scaleb(mapping.implied_decimals)))
    return f"{number:f}".replace(".", mapping.decimal)


def _values(stop: RouteStop, mapping: ReadMapping) -> dict[str, str]:
    """Each route field's text in the file's notation."""
    out = {}
    for ours in ROUTE_FIELDS:
        value = getattr(stop, ours)
        if value is None:
            out[ours] = ""
        elif isinstance(value, date):
            out[ours] = value.strftime(mapping.date_format)
        elif ours in ("last_reading", "low", "high"):
            rounding = ROUND_CEILING if ours == "low" else ROUND_FLOOR
            out[ours] = _number_text(file_units(value, mapping=mapping, meter_unit=stop.meter_unit,
                                                places=stop.meter_places, rounding=rounding), mapping)
        else:
            out[ours] = str(value)
    return out


def _reading_fields(values: dict[str, str], mapping: ReadMapping) -> dict[str, str]:
    """The reading record's own fields of a stop: its serial, last read day and register, an actual read's code."""
    record = {read: values[route] for route, read in ROUTE_READ_FIELDS.items()}
    record["read_type"] = mapping.code_for("actual")
    return record


def _fixed_line(width: int, fields: list[tuple[tuple[int, int], str, str]]) -> str:
    line = [" "] * width
    for (first, last), value, name in fields:
        size = last - first + 1
        if len(value) > size:
            raise ApplicationError(f"{name} '{value}' does not fit characters {first}–{last} of the layout",
                                   field="mapping")
        # Numbers right-aligned with zeros, words left-aligned with spaces, as handhelds read them.
        padded = value.rjust(size, "0") if value.isdigit() else value.ljust(size)
        line[first - 1:last] = list(padded)
    return "".join(line)


def _control_line(control: Control, *, count: int, total: Decimal, mapping: ReadMapping) -> str:
    figures = [(place, text) for place, text in ((control.count, str(count)),
                                                 (control.total, _number_text(total, mapping))) if place is not None]
    if mapping.layout == "csv":
        places = max([place for place, _ in figures], default=1)
        values = [""] * places
        values[0] = control.prefix
        for place, text in figures:
            values[place - 1] = text
        return mapping.delimiter.join(values)
    end = max([place[1] for place, _ in figures], default=len(control.prefix))
    line = list(control.prefix.ljust(end))
    for (first, last), text in figures:
        line[first - 1:last] = list(text.rjust(last - first + 1, "0"))
    return "".join(line)


def route_file(stops: list[RouteStop], mapping: ReadMapping) -> str:
    """The stops in the mapping's own reading layout with its ``[route]`` fields, header and trailer."""
    if mapping.reads in ("daily", "interval"):
        raise ApplicationError(f"the mapping {mapping.name} reads an AMI head-end's daily reads: the head-end reads "
                               "its meters itself, and no route goes out", field="mapping")
    rows = []
    total = Decimal(0)
    for stop in stops:
        values = _values(stop, mapping)
        rows.append((values, _reading_fields(values, mapping)))
        if stop.last_reading is not None:
            total += file_units(stop.last_reading, mapping=mapping, meter_unit=stop.meter_unit,
                                places=stop.meter_places)
    lines = []
    if mapping.layout == "fixed":
        width = mapping.width or max(last for _, last in [*mapping.positions.values(),
                                                          *mapping.route_positions.values()])
        for values, record in rows:
            fields = [((1, len(mapping.record_prefix)), mapping.record_prefix, "record prefix")] \
                if mapping.record_prefix else []
            fields += [(mapping.positions[ours], record[ours], ours) for ours in record if ours in mapping.positions]
            fields += [(span, values[ours], ours) for ours, span in mapping.route_positions.items()
                       if ours not in ROUTE_READ_FIELDS]
            lines.append(_fixed_line(width, fields))
    else:
        read_columns = [ours for ours in READ_FIELDS if ours in mapping.columns and ours in
                        ("meter_serial", "read_date", "reading", "read_type")]
        extra = [ours for ours in ROUTE_FIELDS if ours not in ROUTE_READ_FIELDS]
        names = {ours: mapping.route_columns.get(ours, ours) for ours in extra}
        out = io.StringIO()
        writer = csv_writer(out, delimiter=mapping.delimiter, lineterminator="\n")
        writer.writerow([mapping.columns[ours] for ours in read_columns] + [names[ours] for ours in extra])
        for values, record in rows:
            writer.writerow([record[ours] for ours in read_columns] + [values[ours] for ours in extra])
        lines = out.getvalue().splitlines()
    if mapping.header:
        lines.insert(0, _control_line(mapping.header, count=len(stops), total=total, mapping=mapping))
    if mapping.trailer:
        lines.append(_control_line(mapping.trailer, count=len(stops), total=total, mapping=mapping))
    return "\n".join(lines) + "\n"
