"""``manage.py control_totals [--json] [--compare FILE]``: the books' control totals — how many accounts, bills,
payments and ledger rows, what the ledger sums to by kind, and what the stored bill PDFs are — to write down before a
backup and compare after a restore (docs/operations.md, the restore drill). Sums are worked in Python, to the cent.

``--compare FILE`` reads totals written before (``--json > FILE``) and exits 1 naming every difference."""

import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from accounts.models import Account
from billing.models import Bill, LedgerEntry, Payment
from core.money import ZERO
from waterbilling.readiness import DRILL_RECORD


def control_totals() -> dict:
    by_kind: dict[str, Decimal] = defaultdict(lambda: ZERO)
    for kind, amount in LedgerEntry.objects.values_list("kind", "amount").iterator(chunk_size=20_000):
        by_kind[kind] += amount
    paid = sum((a for a in Payment.objects.values_list("amount", flat=True).iterator(chunk_size=20_000)), ZERO)
    return {
        "accounts": Account.objects.count(),
        "bills": Bill.objects.count(),
        "bills_with_pdf": Bill.objects.exclude(pdf="").exclude(pdf__isnull=True).count(),
        "payments": Payment.objects.count(),
        "payments_total": str(paid),
        "ledger_rows": LedgerEntry.objects.count(),
        "ledger_by_kind": {kind: str(total) for kind, total in sorted(by_kind.items())},
        "ledger_total": str(sum(by_kind.values(), ZERO)),
    }


class Command(BaseCommand):
    help = "Print the books' control totals (before a backup; after a restore, --compare the two)."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print them as JSON (to keep for --compare)")
        parser.add_argument("--compare", metavar="FILE", help="the totals written before: exit 1 on any difference")

    def handle(self, *args, **options):
        now = control_totals()
        if options["compare"]:
            try:
                with open(options["compare"], encoding="utf-8") as f:
                    before = json.load(f)
            except (OSError, ValueError) as exc:
                raise CommandError(f"--compare: cannot read {options['compare']}: {exc}") from None
            differences = [f"{key}: {before.get(key)!r} before, {now.get(key)!r} now"
                           for key in sorted(set(before) | set(now)) if before.get(key) != now.get(key)]
            if differences:
                self.stdout.write("The books do not tie out:\n" + "\n".join(f"- {d}" for d in differences))
                raise SystemExit(1)
            self.stdout.write(f"The books tie out: {now['accounts']} accounts, {now['bills']} bills, "
                              f"{now['payments']} payments, ledger total {now['ledger_total']}.")
            if settings.BACKUP_DIR:  # the drill is recorded beside the backups, where the readiness check looks
                drill = Path(settings.BACKUP_DIR) / DRILL_RECORD
                drill.write_text(json.dumps({"tied_out_at": timezone.now().isoformat(), **now}, indent=2))
                self.stdout.write(f"Recorded in {drill}.")
            return
        if options["json"]:
            self.stdout.write(json.dumps(now, indent=2))
            return
        for key, value in now.items():
            self.stdout.write(f"{key}: {value}")
