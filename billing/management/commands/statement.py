import json

from django.core.management.base import BaseCommand, CommandError

from accounts.selectors import account_get
from billing.selectors import account_statement
from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError


class Command(BaseCommand):
    help = "The account as of the date: balance, bills with lines, penalties, payments."

    def add_arguments(self, parser):
        parser.add_argument("account_no")
        parser.add_argument("--json", action="store_true", help="the statement JSON contract")
        as_of_argument(parser)

    def handle(self, *args, account_no, **options):
        as_of = parse_as_of(options["date"])
        try:
            statement = account_statement(account=account_get(account_no=account_no), as_of=as_of)
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(statement, indent=2))
            return
        w = self.stdout.write
        w(f"Account {statement['account_no']} as of {statement['as_of']}: balance ${statement['balance']}")
        for bill in statement["bills"]:
            w(f"\nBill {bill['number']} dated {bill['bill_date']}, due {bill['due_date']}: "
              f"{bill['gallons']:,} gal ({bill['period_start']} – {bill['period_end']}), "
              f"total ${bill['total']}, unpaid ${bill['balance']}")
            for line in bill["lines"]:
                w(f"    {line['description']:<70} {line['citation']:<24} ${line['amount']:>10}")
        if statement["charges"]:
            w("\nCharges")
            for charge in statement["charges"]:
                w(f"    {charge['date']}  {charge['kind']:<8} {charge['description'][:60]:<60} "
                  f"{charge['citation']:<12} ${charge['amount']:>10}")
        if statement["payments"]:
            w("\nPayments")
            for p in statement["payments"]:
                w(f"    {p['paid_on']}  {p['reference']:<30} ${p['amount']:>10}")
