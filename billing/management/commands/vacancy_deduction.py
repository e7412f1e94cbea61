from django.core.management.base import BaseCommand, CommandError

from accounts.selectors import account_get
from billing.services.vacancy import vacancy_deduction_claim
from core.commands import as_of_argument, parse_as_of
from core.dates import iso_date
from core.errors import ApplicationError
from core.money import fmt_dollars


class Command(BaseCommand):
    help = ("Credit the minimum charges of the bills a vacancy covered, where the preset allows a deduction for "
            "vacancy (Washingtonville § 169-23: not for less than three months).")

    def add_arguments(self, parser):
        parser.add_argument("account_no")
        parser.add_argument("--from", dest="vacant_from", required=True, metavar="YYYY-MM-DD",
                            help="the day the water was shut off for the vacancy")
        parser.add_argument("--until", dest="vacant_until", required=True, metavar="YYYY-MM-DD",
                            help="the day it was turned on again")
        as_of_argument(parser)

    def handle(self, *args, account_no, vacant_from, vacant_until, **options):
        try:
            as_of = parse_as_of(options["date"])
            start, end = iso_date(vacant_from), iso_date(vacant_until)
        except ValueError as exc:
            raise CommandError(f"--from/--until: {exc}") from None
        try:
            credits = vacancy_deduction_claim(account=account_get(account_no=account_no), vacant_from=start,
                                              vacant_until=end, as_of=as_of, actor=None)
        except ApplicationError as exc:
            raise CommandError(f"nothing credited: {exc}") from None
        for credit in credits:
            self.stdout.write(f"{credit.description}: {fmt_dollars(credit.amount.amount)} credited")
