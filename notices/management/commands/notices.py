"""``notices --date D [--dry-run] [--json]``: decide the day's customer notices (the reminders before a due date
and the late notices after it) and give each once; ``--dry-run`` lists them and gives none.

The notices that follow an event (a payment returned, autopay suspended, a case reopened, a plan defaulted) are
given when the event is committed; this command decides the ones that follow from the date."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError
from notices.reminders import (
    installment_reminders_decide,
    installment_reminders_give,
    reminders_decide,
    reminders_give,
)


class Command(BaseCommand):
    help = "Decide the day's reminders and late notices and give each once (--dry-run: list them only)."

    def add_arguments(self, parser):
        as_of_argument(parser)
        parser.add_argument("--dry-run", action="store_true", help="list the notices the date calls for; give none")
        parser.add_argument("--json", action="store_true", help='print {"date", "dry_run", "given", "notices": […]}')

    def handle(self, *args, dry_run, **options):
        try:
            on = parse_as_of(options["date"])
            reminders = reminders_decide(on=on)
            installments = installment_reminders_decide(on=on)
            given = 0 if dry_run else (reminders_give(reminders, on=on)
                                       + installment_reminders_give(installments, on=on))
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps({"date": on.isoformat(), "dry_run": dry_run, "given": given,
                                          "notices": [r.as_dict() for r in [*reminders, *installments]]},
                                         indent=2))
            return
        for r in reminders:
            self.stdout.write(f"{r.kind:12} {r.account_no:10} bill {r.bill_number} due {r.due_date}: {r.amount:.2f}"
                              + (f" (next charge {r.next_charge_on}, {r.citation})" if r.next_charge_on else ""))
        for r in installments:
            self.stdout.write(f"{r.kind:12} {r.account_no:10} installment {r.number} due {r.due_on}: {r.amount:.2f}")
        decided = len(reminders) + len(installments)
        verb = "would be given" if dry_run else f"given now ({decided - given} given before)"
        self.stdout.write(f"{decided} notice(s) decided for {on}; {decided if dry_run else given} {verb}")
