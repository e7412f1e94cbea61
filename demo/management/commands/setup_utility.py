"""``setup_utility PRESET [--demo N]``: install or update an ordinance preset, and with ``--demo`` build a
demo village on it.

Installing the preset, the staff roles and the nightly schedule are services of billing, accounts and
core; the command lives with the demo builders because ``--demo`` is the one thing here that needs them.
"""

from django.core.management.base import BaseCommand, CommandError

from accounts.roles import roles_install
from billing.ordinance import sample_rates_refusal
from billing.presets import preset_install
from billing.services.nightly import nightly_schedule_install
from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError
from demo.village import demo_accounts_create


class Command(BaseCommand):
    help = ("Install or update an ordinance preset (idempotent); --demo N marks a demo/training site and adds "
            "N demo accounts.")

    def add_arguments(self, parser):
        parser.add_argument("preset", help="mineola, washingtonville, south_farmingdale, lansing, old_westbury")
        parser.add_argument("--demo", type=int, default=None, metavar="N",
                            help="a demo/training site (billing on the preset's sample rates is allowed; the "
                                 "mark stays on later runs without --demo): add N realistic accounts with "
                                 "meters and two years of readings (0: only mark the site)")
        parser.add_argument("--seed", type=int, default=45, help="random seed for --demo (repeatable data)")
        as_of_argument(parser)

    def handle(self, *args, preset, demo, seed, **options):
        if demo is not None and demo < 0:
            raise CommandError(f"--demo: {demo} is not a number of accounts; use 0 or more")
        try:
            as_of = parse_as_of(options["date"])
            report = preset_install(code=preset, mark_demo_site=demo is not None)
            groups = roles_install()
            nightly_schedule_install()
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Preset {preset}: {len(report.created)} created, {len(report.updated)} updated, "
                          f"{report.unchanged} unchanged; staff groups: {', '.join(groups)}")
        for label in report.created + report.updated:
            self.stdout.write(f"  {label}")
        try:
            refusal = sample_rates_refusal(on=as_of, accept_sample_rates=False)
        except ApplicationError:
            refusal = ""  # no rate schedule in force yet on that date: billing refuses for that reason
        if refusal:
            self.stdout.write(self.style.WARNING(f"Note: a billing run would be refused: {refusal}"))
        if demo:
            created = demo_accounts_create(count=demo, as_of=as_of, seed=seed, progress=True)
            self.stdout.write(f"Demo: {created} accounts added with meters and two years of readings.")
