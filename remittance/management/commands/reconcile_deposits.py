"""``reconcile_deposits --date D [--format text|csv|json]``: the day's deposits against the payments posted."""

import io
import json

from django.core.management.base import BaseCommand

from core.commands import as_of_argument, parse_as_of
from core.csvout import csv_dict_rows
from core.money import fmt_dollars

from ...bank import deposits_reconcile
from ...configured import processor_configured


class Command(BaseCommand):
    help = "Each channel's deposits of the day (from the bank's BAI2 report) against the payments posted."

    def add_arguments(self, parser):
        as_of_argument(parser)
        parser.add_argument("--format", choices=["text", "csv", "json"], default="text")

    def handle(self, *args, **options):
        result = deposits_reconcile(on=parse_as_of(options["date"]), processor=processor_configured())
        rows = [{"channel": line.channel, "expected": f"{line.expected:.2f}", "deposited": f"{line.deposited:.2f}",
                 "difference": f"{line.difference:.2f}", "detail": line.detail} for line in result.lines]
        rows += [{"channel": "unmatched", "expected": "0.00", "deposited": f"{d.amount.amount:.2f}",
                  "difference": f"{d.amount.amount:.2f}", "detail": f"{d.type_code} {d.description}: {d.text}"}
                 for d in result.unmatched]
        rows += [{"channel": "not_paid_out", "expected": f"{o.amount.amount:.2f}", "deposited": "0.00",
                  "difference": f"{-o.amount.amount:.2f}",
                  "detail": f"{o.payment.reference} paid {o.payment.paid_on} by {o.account.account_no}, "
                            f"processor's {o.payment_ref}"} for o in result.not_paid_out]
        if options["format"] == "json":
            by_district = [{"district": name, "payments": count, "total": f"{total:.2f}"}
                           for name, count, total in result.by_district]
            self.stdout.write(json.dumps({"date": result.on.isoformat(), "matches": result.matches, "lines": rows,
                                          "notes": result.notes, "unreached": result.unreached,
                                          **({"by_district": by_district} if by_district else {})}, indent=2))
            return
        if options["format"] == "csv":
            out = io.StringIO()
            csv_dict_rows(out, columns=list(rows[0]), rows=rows, lineterminator="\n")
            self.stdout.write(out.getvalue(), ending="")
            return
        self.stdout.write(f"Deposits of {result.on}: " + (
            "every channel matches to the cent" if result.matches
            else "not complete: the processor could not be reached" if result.unreached else "differences below"))
        for line in result.lines:
            mark = "" if line.difference == 0 else f"  difference {fmt_dollars(line.difference)}"
            self.stdout.write(f"  {line.label}: expected {fmt_dollars(line.expected)}, deposited "
                              f"{fmt_dollars(line.deposited)}{mark}{f' ({line.detail})' if line.detail else ''}")
        for deposit in result.unmatched:
            self.stdout.write(f"  not ours to match: {deposit.type_code} {deposit.description} "
                              f"{fmt_dollars(deposit.amount.amount)} {deposit.text}")
        for online in result.not_paid_out:
            self.stdout.write(f"  posted online, in no payout since: {online.payment.reference} "
                              f"{fmt_dollars(online.amount.amount)} paid {online.payment.paid_on} by account "
                              f"{online.account.account_no} (processor's {online.payment_ref})")
        for name, count, total in result.by_district:
            self.stdout.write(f"  paid that day in {name}: {count} payment(s), {fmt_dollars(total)}")
        for note in result.notes:
            self.stdout.write(f"  {note}")
        for said in result.unreached:
            self.stderr.write(f"{said}: reconcile the day again once it answers")
