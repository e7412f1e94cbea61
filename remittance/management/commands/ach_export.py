"""``ach_export --date D [--out FILE]``: the NACHA debit file of autopay accounts with an amount due."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError
from core.money import fmt_dollars

from ...autopay import ach_export


class Command(BaseCommand):
    help = "Write the ACH debit file (NACHA) of autopay accounts with an amount due on the date; each debit is posted."

    def add_arguments(self, parser):
        as_of_argument(parser)
        parser.add_argument("--out", metavar="FILE", help="where to write the file (default: standard output)")

    def handle(self, *args, **options):
        on = parse_as_of(options["date"])
        try:
            exported = ach_export(on=on)
        except ApplicationError as exc:
            raise CommandError("; ".join(f"{e.field}: {e.message}" if e.field else e.message for e in exc.errors)) \
                from None
        if exported.file is None:
            self.stderr.write(f"nothing to debit on {on}: no autopay account has an amount due that day")
            return
        file = exported.file
        if options["out"]:
            Path(options["out"]).write_text(exported.text)
            self.stderr.write(f"wrote {options['out']}: file {file.created_on} {file.modifier}, {file.entries} "
                              f"debit(s) for {fmt_dollars(file.total.amount)}, each posted as a payment")
        else:
            self.stdout.write(exported.text, ending="")
