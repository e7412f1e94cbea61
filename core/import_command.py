"""The import commands' one shape (``import_readings``, ``import_accounts``, ``import_payments``, ``import_lockbox``):
parse the arguments, run the importer of ``core.csvimport``'s kind, print the counts or every error; ``--dry-run``
runs the whole import and keeps nothing (``import_dry_run``, the upload pages' preview too)."""

from __future__ import annotations

from datetime import date
from functools import partial
from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from .commands import as_of_argument, command_user, parse_as_of
from .csvimport import ImportResult, ImportSource
from .errors import ApplicationError

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


def import_dry_run(run):
    """``run()``'s import whole — every check and every write — then rolled back: nothing is kept, nothing is sent
    (the work queued for after the commit is dropped with it). Its result, or its ImportRejected."""
    with transaction.atomic():
        result = run()
        transaction.set_rollback(True)
    return result


class CsvImportCommand(BaseCommand):
    """A thin command: parse the arguments, call ``run_import``, print the counts or every error."""

    noun = "rows"

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="the CSV file (UTF-8)")
        as_of_argument(parser)
        parser.add_argument("--user", metavar="USERNAME", default=None,
                            help="the staff user doing the import, recorded with every row in the history")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument("--dry-run", action="store_true",
                            help="check and import the whole file, then keep nothing: what would be saved")

    def run_import(self, *, file: ImportSource, as_of: date, actor: AbstractBaseUser | None,
                   progress: bool) -> ImportResult:
        raise NotImplementedError

    def handle(self, *args: Any, file: str, **options: Any) -> None:
        as_of = parse_as_of(options["date"])
        actor = command_user(options["user"])
        show_progress = not options["no_progress"] and self.stderr.isatty()
        run = partial(self.run_import, file=file, as_of=as_of, actor=actor, progress=show_progress)
        try:
            result = import_dry_run(run) if options["dry_run"] else run()
        except ApplicationError as exc:
            for error in exc.errors:
                self.stderr.write(str(error))
            if exc.unlisted:
                self.stderr.write(f"… and {exc.unlisted} more error(s) not listed (the first {len(exc.errors)} are)")
            where = f" on {exc.error_lines} line(s)" if exc.error_lines else ""
            raise CommandError(f"{file}: rejected with {exc.error_count} error(s){where}; nothing was saved"
                               ) from None
        for error in getattr(result, "held", ()):
            self.stderr.write(f"held: {error}")
        dry = " — a dry run: nothing was saved" if options["dry_run"] else ""
        self.stdout.write(f"{file}: {self.noun} {result}{dry}")
        if options["dry_run"] and getattr(result, "held_lines", 0):
            # A dry run answers whether the file goes in whole: a line held is a line refused.
            raise CommandError(f"{file}: {result.held_lines} line(s) would be held; nothing was saved")
