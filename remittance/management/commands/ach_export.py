"""``ach_export --date D [--settle D2] [--same-day] [--out FILE]`` and ``ach_export --again FILE_ID [--out FILE]``:
the NACHA debit file of autopay accounts whose debit was noticed, and a file made before written again."""

from datetime import date

from django.core.management.base import BaseCommand, CommandError

from core.commands import as_of_argument, parse_as_of
from core.dates import iso_date
from core.errors import ApplicationError
from core.money import fmt_dollars

from ...autopay import ach_export, ach_export_again, ach_file_write


def _errors(exc: ApplicationError) -> str:
    return "; ".join(f"{e.field}: {e.message}" if e.field else e.message for e in exc.errors)


class Command(BaseCommand):
    help = ("Make the ACH debit file (NACHA) of autopay accounts whose debit was noticed, to settle on a banking day "
            "ahead; each debit is posted and the file kept sealed. --again FILE_ID writes a file made before.")

    def add_arguments(self, parser):
        as_of_argument(parser)
        parser.add_argument("--settle", metavar="YYYY-MM-DD",
                            help="the effective entry date: a banking day after --date, may be in the future "
                                 "(default: the next banking day)")
        parser.add_argument("--same-day", action="store_true",
                            help="same-day ACH: the debits may settle on --date itself")
        parser.add_argument("--again", metavar="FILE_ID", type=int,
                            help="write the file made before with this id, identical, instead of making one")
        parser.add_argument("--out", metavar="FILE", help="where to write the file (default: standard output)")

    def handle(self, *args, **options):
        try:
            if options["again"] is not None:
                exported = ach_export_again(file_id=options["again"])
            else:
                on = parse_as_of(options["date"])
                exported = ach_export(on=on, settle=self._settle(options["settle"]), same_day=options["same_day"])
        except ApplicationError as exc:
            raise CommandError(_errors(exc)) from None
        if exported.file is None:
            self.stderr.write(f"nothing to debit on {on}: no autopay account has a noticed debit due by then")
            return
        file = exported.file
        what = (f"file {file.pk} ({file.created_on} {file.modifier}, settles {file.effective_on}): {file.entries} "
                f"debit(s) for {fmt_dollars(file.total.amount)}")
        if not options["out"]:
            self.stdout.write(exported.text, ending="")
            return
        try:
            ach_file_write(exported, options["out"])
        except OSError as exc:
            raise CommandError(f"--out: {options['out']} could not be written ({exc.strerror or exc}); {what} is kept "
                               f"sealed, each debit posted: write it with `ach_export --again {file.pk} --out FILE`") \
                from None
        self.stderr.write(f"wrote {options['out']}: {what}, each posted as a payment")

    @staticmethod
    def _settle(value: str | None) -> date | None:
        if value is None:
            return None
        try:
            return iso_date(value)
        except ValueError as exc:
            raise CommandError(f"--settle: {exc}") from None
