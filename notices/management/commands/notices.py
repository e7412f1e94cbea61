"""``notices --date D [--dry-run] [--json]``: decide the day's customer notices (the bills issued that day, the
reminders before a due date and the late notices after it, the plans' installments due and missed) and give each
once; ``--dry-run`` lists them and gives none.

The notices that follow an event (an autopay debit scheduled, a payment returned, autopay suspended, a termination
notice served or a case reopened, a plan defaulted, a usage alert) are given when the event is committed; this
command decides the ones that follow from the date."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError
from notices.reminders import day_notices_decide, day_notices_give


class Command(BaseCommand):
    help = "Decide the day's bills ready, reminders and late notices and give each once (--dry-run: list them only)."

    def add_arguments(self, parser):
        as_of_argument(parser)
        parser.add_argument("--dry-run", action="store_true", help="list the notices the date calls for; give none")
        parser.add_argument("--json", action="store_true", help='print {"date", "dry_run", "given", "notices": […]}')

    def handle(self, *args, dry_run, **options):
        try:
            on = parse_as_of(options["date"])
            decided = day_notices_decide(on=on)
            given = 0 if dry_run else day_notices_give(decided, on=on)
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps({"date": on.isoformat(), "dry_run": dry_run, "given": given,
                                          "notices": [r.as_dict() for r in decided.all()]},
                                         indent=2))
            return
        for r in decided.ready:
            self.stdout.write(f"{r.kind:12} {r.account_no:10} bill {r.bill_number} due {r.due_date}: {r.amount:.2f}")
        for r in decided.reminders:
            self.stdout.write(f"{r.kind:12} {r.account_no:10} bill {r.bill_number} due {r.due_date}: {r.amount:.2f}"
                              + (f" (next charge {r.next_charge_on}, {r.citation})" if r.next_charge_on else ""))
        for r in decided.installments:
            self.stdout.write(f"{r.kind:12} {r.account_no:10} installment {r.number} due {r.due_on}: {r.amount:.2f}")
        count = len(decided)
        verb = "would be given" if dry_run else f"given now ({count - given} given before)"
        self.stdout.write(f"{count} notice(s) decided for {on}; {count if dry_run else given} {verb}")
