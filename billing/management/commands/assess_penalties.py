from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from billing.services.penalties import penalties_assess_due
from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError


class Command(BaseCommand):
    help = "Post every penalty and interest charge due on or before the date that is not yet posted."

    def add_arguments(self, parser):
        as_of_argument(parser)
        parser.add_argument("--no-progress", action="store_true")
        parser.add_argument("--workers", type=int, default=1,
                            help="processes to share the accounts among (a catch-up of months; default 1)")

    def handle(self, *args, **options):
        as_of = parse_as_of(options["date"])
        bar = tqdm(unit="acct", disable=options["no_progress"] or options["verbosity"] < 1, desc="Penalties")
        try:
            result = penalties_assess_due(as_of=as_of, progress=bar.update, workers=options["workers"])
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        self.stdout.write(f"Penalties through {as_of}: {result.posted} posted on {result.accounts} accounts, "
                          f"totalling ${result.total:,.2f}")
