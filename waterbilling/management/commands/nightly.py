from django.core.management.base import BaseCommand, CommandError

from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError
from waterbilling.nightly import nightly_run


class Command(BaseCommand):
    help = ("Everything the nightly job does, in order: bill what is due, assess penalties, render bill PDFs "
            "(and the steps of the other installed apps). Each step is recorded; running a date again goes on "
            "from the step that failed or never finished.")

    def add_arguments(self, parser):
        as_of_argument(parser)

    def handle(self, *args, **options):
        as_of = parse_as_of(options["date"])
        try:
            # Each step as it starts, goes and ends, on standard error: standard output keeps the night's report.
            report = nightly_run(as_of=as_of, tell=lambda text: self.stderr.write(text, style_func=str))
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Nightly {report['date']}: {report['bills']} bills, {report['billing_exceptions']} "
                          f"billing exceptions, {report['penalties']} penalties (${report['penalty_total']})")
        for position, step in enumerate(report["steps"], start=1):
            counts = ", ".join(f"{name} {value}" for name, value in sorted(step["counts"].items()))
            self.stdout.write(f"  {position}. {step['name']}: {step['status']}" + (f" ({counts})" if counts else ""))
        if "billing_skipped" in report:
            self.stdout.write(self.style.WARNING(f"  billing skipped: {report['billing_skipped']}"))
        if "billing_unfinished" in report:
            self.stdout.write(self.style.WARNING(f"  billing not finished: {report['billing_unfinished']}"))
        if report["status"] != "done":
            raise CommandError(f"the nightly job for {report['date']} stopped at step {report.get('failed_step')!r}: "
                               f"{report.get('error')}; run it again for the date to go on from that step")
