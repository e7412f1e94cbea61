from django.core.management.base import BaseCommand, CommandError

from core.commands import as_of_argument, parse_as_of
from meters.selectors import meter_policy, meters_due_inspection


class Command(BaseCommand):
    help = ("List the meters in service whose installation is as old as the preset's inspection cycle or older "
            "on the date (each meter inspected, rebuilt or replaced every N years from installation).")

    def add_arguments(self, parser):
        parser.add_argument("--years", type=int, default=None,
                            help="years from installation (default: the preset's [meters] inspection_years)")
        as_of_argument(parser)

    def handle(self, *args, **options):
        on = parse_as_of(options["date"])
        years = options["years"] or meter_policy().inspection_years
        if not years or years < 1:
            raise CommandError("the installed preset sets no meter inspection cycle; give --years")
        due = meters_due_inspection(on=on, years=years)
        citation = meter_policy().inspection_citation
        self.stdout.write(f"{len(due)} meter(s) installed {years} years or more on {on}"
                          + (f" ({citation})" if citation else "") + ":")
        for item in due:
            i = item.installation
            self.stdout.write(f'  {i.meter.serial}  {i.meter.size}"  account {i.account.account_no}  '
                              f"installed {i.installed_on}  due {item.due_on}")
