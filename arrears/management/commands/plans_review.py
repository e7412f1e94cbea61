from django.core.management.base import BaseCommand

from core.commands import as_of_argument, parse_as_of

from ...services import plans_review


class Command(BaseCommand):
    help = "Default each payment plan with an installment missed past the grace days; complete each paid in full."

    def add_arguments(self, parser):
        as_of_argument(parser)

    def handle(self, *args, **options):
        counts = plans_review(as_of=parse_as_of(options["date"]))
        self.stdout.write(f"{counts['defaulted']} plan(s) defaulted, {counts['completed']} completed")
