"""``manage.py control_totals [--json] [--compare FILE]``: the books' control totals — how many accounts, bills,
payments and ledger rows, what the ledger sums to by kind, and what the stored bill PDFs are — to write down before a
backup and compare after a restore (docs/operations.md, the restore drill). Sums are worked in Python, to the cent.

``--compare FILE`` reads totals written before (``--json > FILE``) and exits 1 naming every difference. Run on a copy
restored from ``--dump DUMP`` that ties out, it records the drill in ``BACKUP_DIR`` (``restore-drill.json``: the
database compared, the one the totals came from, and the dump), where the readiness check looks; run on the very
database the totals came from, it refuses: that proves no restore."""

import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.utils import timezone

from accounts.models import Account
from billing.models import Bill, LedgerEntry, Payment
from core.db import database_identity
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
        parser.add_argument("--dump", metavar="DUMP", default="",
                            help="with --compare: the dump this database was restored from, recorded with the drill")

    def handle(self, *args, **options):
        now = control_totals()
        this = {"name": str(connection.settings_dict["NAME"]), "identity": database_identity()}
        if not options["compare"]:
            if options["json"]:
                self.stdout.write(json.dumps({**now, "database": this}, indent=2))
                return
            for key, value in now.items():
                self.stdout.write(f"{key}: {value}")
            return
        try:
            with open(options["compare"], encoding="utf-8") as f:
                before = json.load(f)
            source = before.pop("database", None) or {}
        except (OSError, ValueError, AttributeError) as exc:
            raise CommandError(f"--compare: cannot read {options['compare']}: {exc}") from None
        if source.get("identity") == this["identity"]:
            self.stdout.write(f"This is the database the totals were written from ({this['name']}), not a copy "
                              "restored from a dump: a restore drill compares the restored copy (docs/operations.md), "
                              "so nothing is recorded.")
            raise SystemExit(1)
        differences = [f"{key}: {before.get(key)!r} before, {now.get(key)!r} now"
                       for key in sorted(set(before) | set(now)) if before.get(key) != now.get(key)]
        if differences:
            self.stdout.write("The books do not tie out:\n" + "\n".join(f"- {d}" for d in differences))
            raise SystemExit(1)
        self.stdout.write(f"The books tie out: {now['accounts']} accounts, {now['bills']} bills, "
                          f"{now['payments']} payments, ledger total {now['ledger_total']}.")
        if not settings.BACKUP_DIR:
            return
        if not options["dump"]:
            self.stdout.write("Not recorded as a restore drill: name the dump this copy was restored from "
                              "(--dump FILE).")
            return
        drill = Path(settings.BACKUP_DIR) / DRILL_RECORD  # beside the backups, where the readiness check looks
        try:
            drill.write_text(json.dumps({"tied_out_at": timezone.now().isoformat(), "database": this,
                                         "totals_from": source, "dump": options["dump"], **now}, indent=2))
        except OSError as exc:
            raise CommandError(f"the drill tied out but its record cannot be written in {drill.parent}: "
                               f"{exc.strerror}; BACKUP_DIR must be writable by the site's user (uid 10001 in the "
                               "image: docs/operations.md, Backups)") from None
        self.stdout.write(f"Recorded in {drill}: {this['name']}, restored from {options['dump']}.")
