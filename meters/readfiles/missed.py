"""The lines a reader's file says were not read (a ``no_read`` code): kept as missed reads, never readings."""

from __future__ import annotations

from datetime import date

from core.csvimport import ImportErrors

from ..models import MissedRead
from .mapping import ReadMapping
from .parse import MissedRead as Missed


def missed_problems(missed: list[Missed], *, as_of: date, errors: ImportErrors, mapping: ReadMapping) -> None:
    for miss in missed:
        if miss.read_on > as_of:
            errors.add(line=miss.line, field=mapping.named("read_date"),
                       message=f"{miss.read_on} is after the import date {as_of}; nothing is recorded in the future")


def missed_record(missed: list[Missed], *, meters: dict, source: str) -> int:
    """Keep each no-read line as a missed read (once per meter and day)."""
    if not missed:
        return 0
    MissedRead.objects.bulk_create([MissedRead(meter_id=meters[m.serial][0], read_on=m.read_on, code=m.code,
                                               source=f"{source}, line {m.line}"[:200]) for m in missed],
                                   ignore_conflicts=True, batch_size=2000)
    return len(missed)
