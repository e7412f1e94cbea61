"""``ach_returns FILE [--date D]``: the bank's returns applied: payments reversed, fees charged, autopay suspended."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError

from ...autopay import ach_returns


class Command(BaseCommand):
    help = "Apply the bank's ACH returns file (NACHA, R-codes): reverse each returned debit and charge the fee."

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE")
        as_of_argument(parser)

    def handle(self, *args, file, **options):
        as_of = parse_as_of(options["date"])
        try:
            text = Path(file).read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{file}: cannot be read as a NACHA file ({exc})") from None
        try:
            applied = ach_returns(text, as_of=as_of)
        except ApplicationError as exc:
            for error in exc.errors:
                self.stderr.write(str(error))
            raise CommandError(f"{file}: refused with {exc.error_count} error(s); nothing was applied") from None
        self.stdout.write(f"{file}: {applied}")
