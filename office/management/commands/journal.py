"""The general ledger journal of a range of days, as CSV for the village's accounting (or the check register)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import parse_as_of
from core.csvout import csv_writer
from core.errors import ApplicationError
from office.journal import journal_entries, journal_rows
from office.services import check_register_rows


def _day(value: str | None, option: str):
    try:
        return parse_as_of(value)
    except CommandError as exc:
        raise CommandError(str(exc).replace("--date", option, 1)) from None


class Command(BaseCommand):
    help = ("Write the day's books as balanced general ledger journal entries by fund and account (CSV), or with "
            "--check-register the refunds approved for accounts payable to draw checks.")

    def add_arguments(self, parser):
        parser.add_argument("--from", dest="start", metavar="YYYY-MM-DD", help="first day (default: --to)")
        parser.add_argument("--to", dest="end", metavar="YYYY-MM-DD", help="last day (default: today)")
        parser.add_argument("--out", metavar="FILE.csv", help="where to write (default: standard output)")
        parser.add_argument("--check-register", action="store_true",
                            help="the check register of approved refunds instead of the journal")

    def handle(self, *args, start, end, out, check_register, **options):
        end_day = _day(end, "--to")
        start_day = _day(start, "--from") if start else end_day
        try:
            if check_register:
                rows = check_register_rows(start=start_day, end=end_day)
                words = f"{len(rows) - 2} refund check(s)"
            else:
                entries = journal_entries(start=start_day, end=end_day)
                rows = journal_rows(entries)
                unbalanced = [e for e in entries if e.debits != e.credits]
                if unbalanced:  # never expected: each ledger row is a debit and a credit of one amount
                    raise CommandError(f"{len(unbalanced)} journal entr(ies) do not balance: "
                                       + ", ".join(e.lines[0].entry_id for e in unbalanced))
                words = f"{len(entries)} journal entr{'y' if len(entries) == 1 else 'ies'}, {len(rows) - 1} lines"
        except ApplicationError as exc:
            raise CommandError(str(exc)) from None
        if out:
            path = Path(out)
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", newline="") as handle:
                csv_writer(handle).writerows(rows)
            self.stdout.write(f"Wrote {words} from {start_day} to {end_day} to {path}")
        else:
            csv_writer(self.stdout).writerows(rows)
