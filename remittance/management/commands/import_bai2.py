"""``import_bai2 FILE``: the bank's BAI2 report of the village account's credits, for the deposits reconciliation."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError

from ...bank_report import bai2_import


class Command(BaseCommand):
    help = "Read the bank's BAI2 report: each credit with its channel (lockbox, autopay, processor, counter, other)."

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE")
        as_of_argument(parser)  # a report dated after the day after it is refused

    def handle(self, *args, file, **options):
        today = parse_as_of(options["date"])
        try:
            report = Path(file).read_bytes()
        except OSError as exc:
            raise CommandError(f"{file}: cannot be read ({exc.strerror})") from None
        try:
            self.stdout.write(f"{file}: {bai2_import(report, today=today)}")
        except ApplicationError as exc:
            said = "\n".join(f"  {error}" for error in exc.errors)
            more = f"\n  … and {exc.unlisted} more" if exc.unlisted else ""
            raise CommandError(f"{file}: refused, nothing was read:\n{said}{more}") from None
