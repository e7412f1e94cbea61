from django.core.management.base import BaseCommand, CommandError

from billing.services.nightly import nightly_run
from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError


class Command(BaseCommand):
    help = "Everything the nightly job does, in order: bill what is due, then assess penalties."

    def add_arguments(self, parser):
        as_of_argument(parser)

    def handle(self, *args, **options):
        as_of = parse_as_of(options["date"])
        try:
            report = nightly_run(as_of=as_of)
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Nightly {report['date']}: {report['bills']} bills, {report['billing_exceptions']} "
                          f"billing exceptions, {report['penalties']} penalties (${report['penalty_total']})")
        if "billing_skipped" in report:
            self.stdout.write(self.style.WARNING(f"  billing skipped: {report['billing_skipped']}"))
