from datetime import date, datetime

from django.core.management.base import BaseCommand, CommandError

from accounts.selectors import account_get
from billing.appointments import Appointment
from billing.services.charges import charge_create, charge_figures_parse
from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError, FieldError
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
        parser.add_argument("--at", metavar="YYYY-MM-DDTHH:MM",
                            help="for a fee with appointment rules (a tap): when the work is done, local time")
        parser.add_argument("--noticed-at", metavar="YYYY-MM-DDTHH:MM", help="when notice was given the inspector")
        parser.add_argument("--permit-from", metavar="YYYY-MM-DD", help="the permit's first day")
        parser.add_argument("--permit-until", metavar="YYYY-MM-DD", help="the permit's last day")
        parser.add_argument("--note", default="", metavar="TEXT", help="internal note, never shown to the customer")
        as_of_argument(parser)

    def handle(self, *args, account_no, code, **options):
        as_of = parse_as_of(options["date"])
        try:
            amount, base = charge_figures_parse(amount=options["amount"], base=options["base"])
            appointment = _appointment(options)
            charge = charge_create(account=account_get(account_no=account_no), code=code, as_of=as_of, actor=None,
                                   amount=amount, base=base, size=options["size"], note=options["note"],
                                   appointment=appointment)
        except ApplicationError as exc:
            raise CommandError(f"nothing charged: {exc}") from exc
        self.stdout.write(f"Charged {fmt_dollars(charge.amount.amount)} to account {account_no}: "
                          f"{charge.description} ({charge.citation}), on {charge.charged_on}. It goes on the "
                          f"account's next bill dated on or after {charge.earliest_bill_on} as a fee line.")


def _appointment(options) -> Appointment | None:
    """The appointment given with --at, --noticed-at, --permit-from and --permit-until (all or none)."""
    given = {name: options[name] for name in ("at", "noticed_at", "permit_from", "permit_until")}
    if not any(given.values()):
        return None
    errors, parsed = [], {}
    for name, value in given.items():
        parse = datetime.fromisoformat if name in ("at", "noticed_at") else date.fromisoformat
        try:
            parsed[name] = parse(value) if value else None
        except ValueError:
            kind = "date and time" if name in ("at", "noticed_at") else "date"
            errors.append(FieldError(field=name, message=f"'{value}' is not a {kind}"))
        if not value:
            errors.append(FieldError(field=name, message="is needed with the rest of the appointment"))
    if errors:
        raise ApplicationError(errors=errors)
    return Appointment(**{"at": parsed["at"], "noticed_at": parsed["noticed_at"],
                          "permit_from": parsed["permit_from"], "permit_until": parsed["permit_until"]})
