from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from billing.ordinance import schedule_in_force
from billing.owrs.convert import export_text
from core.commands import today
from core.dates import iso_date
from core.errors import ApplicationError


class Command(BaseCommand):
    help = ("Write the rate schedule in force on a date as an Open Water Rate Specification (OWRS) file, to "
            "standard output or --output; import_rates reads it back as it is.")

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["owrs"], default="owrs", help="the file format (owrs)")
        parser.add_argument("--on", default=None, metavar="YYYY-MM-DD",
                            help="the schedule in force on this day (default: today, America/New_York)")
        parser.add_argument("--output", default=None, metavar="FILE", help="write here instead of standard output")

    def handle(self, *args, **options):
        try:
            on = iso_date(options["on"]) if options["on"] else today()
        except ValueError as exc:
            raise CommandError(f"--on: {exc}") from None
        try:
            schedule, _ = schedule_in_force(on)
            text = export_text(schedule)
        except ApplicationError as exc:
            raise CommandError(f"nothing written: {exc}") from exc
        if options["output"]:
            try:
                Path(options["output"]).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"nothing written: {options['output']}: {exc}") from None
            self.stdout.write(f"Wrote the rate schedule in force on {on} (effective {schedule.effective_on}, "
                              f"{schedule.citation}) to {options['output']}.")
        else:
            self.stdout.write(text, ending="")
