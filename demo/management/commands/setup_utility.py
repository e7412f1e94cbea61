"""``setup_utility PRESET [--effective DATE] [--demo N]`` or ``setup_utility --file PATH``: install or update an
ordinance preset — a shipped one or a file kept outside the checkout (a mounted file under Docker) — and with
``--demo`` build a demo village on it.

Installing the preset (``ordinance.install``), the staff roles and the nightly schedule are services of the floors
below; the command lives with the demo builders because ``--demo`` is the one thing here that needs them.
"""

from django.core.management.base import BaseCommand, CommandError

from accounts.roles import roles_install
from billing.ordinance import sample_rates_refusal
from billing.services.nightly import nightly_schedule_install
from core.commands import as_of_argument, command_user, parse_as_of
from core.dates import iso_date
from core.errors import ApplicationError
from demo.village import demo_accounts_create
from notices.tasks import notices_schedule_install
from ordinance.files import shipped_presets
from ordinance.install import preset_install


class Command(BaseCommand):
    help = ("Install or update an ordinance preset (idempotent): a shipped one by name, or a preset file with --file; "
            "an amendment with the day it takes effect (--effective); --demo N marks a demo/training site and adds "
            "N demo accounts.")

    def add_arguments(self, parser):
        parser.add_argument("preset", nargs="?", help=f"a shipped preset: {', '.join(shipped_presets())}")
        parser.add_argument("--file", default=None, metavar="PATH",
                            help="a preset file kept outside the checkout (check it first with preset_check PATH)")
        parser.add_argument("--effective", default=None, metavar="YYYY-MM-DD",
                            help="the day the file's changed tables take effect (an amendment); bills, late charges, "
                                 "notices and case steps before it keep the rules in force before it")
        parser.add_argument("--rebill", action="store_true",
                            help="install an amendment whose day is before bills or late charges already posted "
                                 "under the rules it replaces (refused without it, listing them): the late charges "
                                 "are corrected on their own days, and the bills are voided and billed again once a "
                                 "supervisor approves (Billing › Amendment rebills)")
        parser.add_argument("--user", metavar="USERNAME",
                            help="the staff user installing it (with --rebill: a supervisor other than this one "
                                 "approves)")
        parser.add_argument("--demo", type=int, default=None, metavar="N",
                            help="a demo/training site (billing on the preset's sample rates is allowed; the "
                                 "mark stays on later runs without --demo): add N realistic accounts with "
                                 "meters and two years of readings (0: only mark the site)")
        parser.add_argument("--seed", type=int, default=45, help="random seed for --demo (repeatable data)")
        as_of_argument(parser)

    def handle(self, *args, preset, file, effective, demo, seed, rebill, user, **options):
        if demo is not None and demo < 0:
            raise CommandError(f"--demo: {demo} is not a number of accounts; use 0 or more")
        if (preset is None) == (file is None):
            raise CommandError("name a shipped preset (" + ", ".join(shipped_presets()) + ") or give --file PATH, "
                               "not both")
        try:
            effective_on = iso_date(effective) if effective else None
        except ValueError as exc:
            raise CommandError(f"--effective: {exc}") from None
        try:
            as_of = parse_as_of(options["date"])
            actor = command_user(user)
            report = preset_install(code=preset, path=file, effective_on=effective_on, mark_demo_site=demo is not None,
                                    rebill=rebill, actor=actor)
            groups = roles_install()
            nightly_schedule_install()
            notices_schedule_install()
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        name = preset or file
        version = f" (version {report.version})" if report.version else ""
        self.stdout.write(f"Preset {name}{version}: {len(report.created)} created, {len(report.updated)} updated, "
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
