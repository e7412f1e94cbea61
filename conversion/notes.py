"""The notes the old system kept on its accounts ("called about the March bill; promised to pay by the 15th"),
checked all or nothing and brought over as the accounts' notes, dated as written and signed by who wrote them.

Design overview:

* **The file** (``NOTES_LAYOUT``), one row per note: ``account_no,written_on,author,note``. ``written_on`` is the
  day the note was written (before the cutover), ``author`` who wrote it in the old system (a name or a login;
  blank: not known), ``note`` its text (line breaks kept).
* **Checked as every import is**: every problem with its line and column, nothing saved — an unknown account, a
  day after the day before the cutover, an empty note.
* **Posted** in the conversion's transaction as ``accounts.AccountNote`` rows: the text, then who wrote it and
  that it came from the previous system, dated the day written; the ids are kept on the batch so a rollback
  removes them and the reconciliation counts them.
"""

from dataclasses import dataclass
from datetime import date, datetime, time

from django.utils import timezone

from accounts.models import AccountNote
from core.csvimport import (
    CsvLayout,
    ImportErrors,
    control_problem,
    csv_rows,
    identifier,
    import_source_read,
    text,
)
from core.dates import iso_date

from .opening import unknown_accounts

NOTES_LAYOUT = CsvLayout(required=("account_no", "written_on", "author", "note"))
NOTE_MAX = 4000


@dataclass(frozen=True)
class NoteRow:
    line: int
    account_no: str
    written_on: date
    author: str
    note: str


def _note(value: str) -> str:
    """The note's text: required, its line breaks kept, no other control character."""
    value = value.replace("\r\n", "\n").strip()
    if not value:
        raise ValueError("is required: the note's text")
    if len(value) > NOTE_MAX:
        raise ValueError(f"is {len(value)} characters long; at most {NOTE_MAX} allowed")
    problem = control_problem(value, allow="\n")
    if problem:
        raise ValueError(problem)
    return value


def notes_read(source, *, as_of: date) -> list[NoteRow]:
    """The notes checked, all or nothing (``ImportRejected``, each problem naming ``notes.<column>``)."""
    file = import_source_read(source)
    errors = ImportErrors(columns=NOTES_LAYOUT.columns)
    number = identifier(max_length=20)
    author = text(max_length=100, required=False)
    rows: list[NoteRow] = []
    first_line: dict[str, int] = {}
    for row in csv_rows(text=file.text, layout=NOTES_LAYOUT, errors=errors):
        written_on = errors.parse(row, "written_on", iso_date)
        if written_on is not None and written_on > as_of:
            errors.add(line=row.line, field="written_on", message=f"{written_on} is after {as_of}: a note of the old "
                                                                  "system was written before the cutover")
            written_on = None
        values = (errors.parse(row, "account_no", number), written_on,
                  errors.parse(row, "author", author), errors.parse(row, "note", _note))
        if values[0] is not None:
            first_line.setdefault(values[0], row.line)
        if None not in (values[0], values[1], values[3]):
            rows.append(NoteRow(row.line, values[0], values[1], values[2] or "", values[3]))
    unknown_accounts(errors, first_line)
    errors.raise_if_any(file="notes")
    return rows


def notes_post(rows: list[NoteRow], *, accounts: dict[str, int]) -> dict:
    """The notes written (in the caller's transaction), dated the day each was written; their ids for the batch."""
    made = AccountNote.objects.bulk_create([AccountNote(
        account_id=accounts[r.account_no],
        text=f"{r.note}\n— {r.author or 'not known'}, in the previous system") for r in rows], batch_size=2000)
    for note, row in zip(made, rows, strict=True):
        note.created_at = timezone.make_aware(datetime.combine(row.written_on, time(12)))
    AccountNote.objects.bulk_update(made, ["created_at"], batch_size=2000)
    return {"notes": [note.pk for note in made]}


def notes_reconciled(made: list[dict], told: list[dict]) -> tuple[int, int]:
    """The notes in the files against the notes on the books."""
    ids = [pk for m in made for pk in m.get("notes", [])]
    return sum(t.get("notes", 0) for t in told), AccountNote.objects.filter(pk__in=ids).count()


def notes_remove(made: dict) -> None:
    AccountNote.objects.filter(pk__in=made.get("notes", [])).delete()
