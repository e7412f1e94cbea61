"""``import_bai2 FILE``: the bank's BAI2 report of the village account's credits, for the deposits reconciliation."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import ApplicationError

from ...bank import bai2_import


class Command(BaseCommand):
    help = "Read the bank's BAI2 report: each credit with its channel (lockbox, autopay, processor, counter, other)."

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE")

    def handle(self, *args, file, **options):
        try:
            text = Path(file).read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{file}: cannot be read as a BAI2 report ({exc})") from None
        try:
            self.stdout.write(f"{file}: {bai2_import(text)}")
        except ApplicationError as exc:
            raise CommandError(f"{file}: {exc.errors[0].message}; nothing was read") from None
