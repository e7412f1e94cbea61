from django.core.management.base import BaseCommand, CommandError

from accounts.selectors import account_get
from billing.services.final_bills import final_bill_issue, final_bill_preview, plan_words
from core.commands import as_of_argument, parse_as_of
from core.csvimport import iso_date
from core.errors import ApplicationError
from core.money import fmt_dollars


class Command(BaseCommand):
    help = ("Issue an account's final bill (a move-out or a sale) from its final reading, and close the account "
            "unless --keep-open.")

    def add_arguments(self, parser):
        parser.add_argument("account_no")
        parser.add_argument("--read-on", required=True, metavar="YYYY-MM-DD", help="the day of the final reading")
        parser.add_argument("--reading", required=True, help="the final register reading, in the meter's unit")
        parser.add_argument("--keep-open", action="store_true", help="issue the final bill but leave the account open")
        parser.add_argument("--preview", action="store_true", help="show the bill's lines and write nothing")
        parser.add_argument("--accept-sample-rates", action="store_true",
                            help="bill on the preset's sample rates on a real site (see run_billing)")
        as_of_argument(parser)

    def handle(self, *args, account_no, **options):
        as_of = parse_as_of(options["date"])
        try:
            read_on = iso_date(options["read_on"])
        except ValueError as exc:
            raise CommandError(f"--read-on: {exc}") from None
        try:
            reading = int(options["reading"].replace(",", ""))
        except ValueError:
            raise CommandError(f"--reading: '{options['reading']}' is not a whole number") from None
        try:
            account = account_get(account_no=account_no)
            plan = final_bill_preview(account=account, read_on=read_on, reading=reading, as_of=as_of)
            if not options["preview"]:
                final_bill_issue(account=account, read_on=read_on, reading=reading, as_of=as_of, actor=None,
                                 close=not options["keep_open"], accept_sample_rates=options["accept_sample_rates"])
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        w = self.stdout.write
        w(("Would issue " if options["preview"] else "Issued ") + plan_words(plan))
        for line in plan.lines:
            w(f"    {line.description:<72} {line.citation:<40} {fmt_dollars(line.amount):>10}")
        if not options["preview"]:
            w(f"Account {account.account_no} " + ("left open." if options["keep_open"] else f"closed on {read_on}."))
