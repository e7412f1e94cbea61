from django.core.management.base import BaseCommand, CommandError

from accounts.selectors import account_get
from billing.services.charges import charge_create, charge_figures_parse
from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError
from core.money import fmt_dollars


class Command(BaseCommand):
    help = ("Charge a fee of the preset (code as in the preset file) to an account: it waits as a pending charge "
            "and goes on the account's next bill as a fee line with its citation.")

    def add_arguments(self, parser):
        parser.add_argument("account_no")
        parser.add_argument("code", help="the fee's code in the preset's fee schedule (e.g. connect, construction)")
        parser.add_argument("--amount", metavar="D", help="dollars, for a fee whose amount the ordinance leaves open")
        parser.add_argument("--base", metavar="D", help="dollars a pro-rata fee is computed from (construction cost)")
        parser.add_argument("--size", metavar="INCHES", help="the supply or meter size, for a fee by size")
        parser.add_argument("--note", default="", metavar="TEXT", help="internal note, never shown to the customer")
        as_of_argument(parser)

    def handle(self, *args, account_no, code, **options):
        as_of = parse_as_of(options["date"])
        try:
            amount, base = charge_figures_parse(amount=options["amount"], base=options["base"])
            charge = charge_create(account=account_get(account_no=account_no), code=code, as_of=as_of, actor=None,
                                   amount=amount, base=base, size=options["size"], note=options["note"])
        except ApplicationError as exc:
            raise CommandError(f"nothing charged: {exc}") from exc
        self.stdout.write(f"Charged {fmt_dollars(charge.amount.amount)} to account {account_no}: "
                          f"{charge.description} ({charge.citation}), on {charge.charged_on}. It goes on the "
                          f"account's next bill dated on or after {charge.earliest_bill_on} as a fee line.")
