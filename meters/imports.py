"""Importing meter readings from a CSV file (``manage.py import_readings`` and the admin upload page).

The file is ``meter_serial,read_date,reading[,read_type]``; ``read_type`` is actual (the default when the
column is left off or blank), estimated or final. The file is taken whole or not at all. Each row must:

* name a meter on file, with a date (YYYY-MM-DD) that is not after the import date and on which the meter
  was installed on an account (not before its installation, not after its removal — the removal day
  itself is allowed, for the final reading);
* give a whole, non-negative register value that keeps the meter's readings from going down over time,
  checked against both the readings already recorded and the other rows of the file, earlier and later;
* be the only reading for its meter and date, in the file and in the database. A row identical to a
  reading already recorded (same meter, date and value) is skipped, so importing the same file twice
  changes nothing; the same meter and date with a different value is an error.

Readings are written with ``source="import"``, ``entered_by`` the importing user, and a history row per
reading whose change reason names the file, so the audit trail shows who imported what.

The rules and the writing are ``meters.services.readings_record``'s, the same writer the API and the
admin's reading form use; this module only reads the file. Speed: the referenced meters, their
installations, their latest reading before the file's first date and every reading from that date on are
loaded in a handful of queries per 5,000 meters; the rows are checked in Python and written, with their
history rows, by COPY on PostgreSQL (bulk inserts elsewhere).
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from core.csvimport import ImportErrors, ImportResult, ImportSource, change_reason, csv_rows, import_source_read

from .services import FILE, READINGS_LAYOUT, readings_record

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

IMPORT_SOURCE = "import"

__all__ = ["IMPORT_SOURCE", "READINGS_LAYOUT", "readings_import"]


def readings_import(*, file: ImportSource, as_of: date, actor: AbstractBaseUser | None,
                    progress: bool = False, mapping: str = "") -> ImportResult:
    """Import every reading in ``file``, or none: raises ImportRejected listing every bad row. With ``mapping``
    (a read-file mapping's name or path), the file is a meter system's own, read through it (``readfiles``)."""
    if mapping:
        from .readfiles import readings_import_mapped

        return readings_import_mapped(file=file, as_of=as_of, actor=actor, mapping=mapping, progress=progress)
    source = import_source_read(file)
    errors = ImportErrors(columns=READINGS_LAYOUT.columns)
    rows = csv_rows(text=source.text, layout=READINGS_LAYOUT, errors=errors)
    return readings_record(rows=rows, as_of=as_of, actor=actor, source=IMPORT_SOURCE,
                           reason=change_reason(command="import_readings", file=source), words=FILE,
                           progress=progress, errors=errors)
