"""``convert``: conversion from another system. ``accounts``: the old system's accounts imported through the
mapping; ``check``: the opening balances checked, nothing saved;
``post``: posted as a batch on a cutover, all or nothing, once; ``reconcile``: the files against the books;
``rollback``: a batch removed whole, until the first bill run after its cutover; ``parallel``: the old system's
bills of one period against ours."""

import io
import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import command_user, parse_as_of, today
from core.csvout import csv_writer
from core.errors import ApplicationError
from core.money import fmt_dollars
from reports.render import as_csv, as_json, as_pdf, printed

from ...account_file import accounts_convert
from ...control import control_refuse
from ...legacy import legacy_export
from ...opening import KINDS, mapping_load
from ...parallel import STATUS_WORDS, legacy_bills_csv, our_bills, parallel_run
from ...posting import conversion_post, conversion_read, conversion_rollback
from ...reconcile import reconciliation, reconciliation_view


def history_arguments(parser) -> None:
    parser.add_argument("--history", metavar="BILLS.csv", help="the old system's past bills (account_no,bill_no,"
                        "bill_date,due_date,period_start,period_end,gallons,kind,amount)")
    parser.add_argument("--payments", metavar="PAYMENTS.csv", help="the payments made to the old system "
                        "(account_no,paid_on,amount,reference)")
    parser.add_argument("--devices", metavar="DEVICES.csv", help="backflow devices with their last tests (account_no,"
                        "serial,type,size,make,model,location,installed_on,tested_on,result,tester_certification,"
                        "tester_name,tester_certification_expires)")
    parser.add_argument("--contacts", metavar="CONTACTS.csv", help="the owners' e-mail addresses and paperless "
                        "choices (account_no,email,paperless)")
    parser.add_argument("--notes", metavar="NOTES.csv", help="the notes the old system kept on its accounts "
                        "(account_no,written_on,author,note)")
    parser.add_argument("--plans", metavar="PLANS.csv", help="the payment plans in force at the cutover, one row per "
                        "installment still to pay (account_no,agreed_on,due_on,amount)")
    parser.add_argument("--relevied", metavar="RELEVIED.csv", help="what the old system relevied to the tax roll "
                        "(account_no,relevied_on,tax_roll,amount): history, not owed")
    parser.add_argument("--cases", metavar="CASES.csv", help="the termination cases in progress (account_no,opened_on,"
                        "served_on,method,article_number,hearing_on,request_received_on,determined_on,outcome)")


class Command(BaseCommand):
    help = "Conversion from another system: the opening balances checked; the parallel run of a period's bills."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="subcommand", required=True)
        p = sub.add_parser("accounts", help="import the old system's accounts (its account master export read "
                                            "through the mapping's [accounts] tables as import_accounts' file): "
                                            "all or nothing")
        p.add_argument("file", metavar="FILE")
        p.add_argument("--mapping", metavar="M", help="a TOML mapping of the export's columns, codes (category, "
                                                      "meter size, status) and dates")
        p.add_argument("--date", metavar="YYYY-MM-DD", help="the import date (default: today)")
        p.add_argument("--user", metavar="USERNAME", help="the staff user doing the import, in the history")
        p = sub.add_parser("check", help="check an opening-balances file (account_no,bill_no,bill_date,due_date,kind,"
                                         "amount,description): every problem with its line and column; saves nothing")
        p.add_argument("file", metavar="FILE")
        p.add_argument("--mapping", metavar="M", help="a TOML mapping of another system's columns, codes and dates")
        p.add_argument("--date", metavar="YYYY-MM-DD", help="the day of the check (default: today)")
        p.add_argument("--json", action="store_true", help="the control totals as JSON")
        p.add_argument("--control", metavar="TOTALS.csv", help="the old system's control report (total,value rows: "
                                                              "accounts, open_bills, each kind, charges, owed): "
                                                              "any difference, to the cent, is refused")
        history_arguments(p)
        p = sub.add_parser("post", help="post an opening-balances file as one batch on the cutover: all or nothing; "
                                        "the same file posts once")
        p.add_argument("file", metavar="FILE")
        p.add_argument("--cutover", required=True, metavar="YYYY-MM-DD",
                       help="the first day on our books: the file is what was owed at the close of the day before")
        p.add_argument("--mapping", metavar="M", help="a TOML mapping of another system's columns, codes and dates")
        p.add_argument("--control", metavar="TOTALS.csv", help="the old system's control report: a file that "
                                                              "differs from it by a cent is refused, nothing posted")
        history_arguments(p)
        p = sub.add_parser("reconcile", help="the posted files of a cutover against the books, to the cent")
        p.add_argument("--cutover", required=True, metavar="YYYY-MM-DD")
        p.add_argument("--format", choices=["text", "csv", "json", "pdf"], default="text")
        p.add_argument("--out", metavar="FILE", help="write the report here instead of to standard output "
                                                     "(required for pdf)")
        p = sub.add_parser("demo-export", help="write a generated legacy export of the accounts installed here (the "
                                               "demo village's): open items on the cutover, and a period's bills")
        p.add_argument("directory", metavar="DIR")
        p.add_argument("--cutover", required=True, metavar="YYYY-MM-DD")
        p.add_argument("--period", metavar="YYYY-MM-DD",
                       help="also the old system's bills of the period we bill on this date (legacy_bills.csv)")
        p.add_argument("--seed", type=int, default=45, help="random seed (repeatable files)")
        p = sub.add_parser("rollback", help="remove a posted batch whole (until the first bill run after its "
                                            "cutover)")
        p.add_argument("batch", metavar="BATCH", type=int)
        p = sub.add_parser("parallel", help="the old system's bills of one period (account_no,bill_date,kind,amount) "
                                            "against our preview of the same period; nothing is issued")
        p.add_argument("legacy_bills", metavar="LEGACY_BILLS.csv")
        p.add_argument("--date", required=True, metavar="YYYY-MM-DD",
                       help="our bill date for the period (a run on this date; previewed up to 45 days ahead)")
        p.add_argument("--format", choices=["text", "csv", "json"], default="text")
        p.add_argument("--out", metavar="FILE", help="write the report here instead of to standard output")

    def handle(self, *args, subcommand, **o):
        try:
            getattr(self, f"do_{subcommand.replace('-', '_')}")(o)
        except ApplicationError as exc:
            for error in exc.errors:
                self.stderr.write(str(error))
            if exc.unlisted:
                self.stderr.write(f"… and {exc.unlisted} more error(s) not listed")
            raise CommandError(f"refused: {exc.error_count} error(s); nothing was saved") from None

    def do_accounts(self, o):
        mapping = mapping_load(o["mapping"]).accounts if o["mapping"] else None
        converted = accounts_convert(o["file"], mapping=mapping, as_of=parse_as_of(o["date"]),
                                     actor=command_user(o["user"]))
        self.stdout.write(f"{o['file']}: accounts {converted.result}"
                          + (f"; {converted.closed} closed account{'s' if converted.closed != 1 else ''} left out "
                             "(the mapping's [accounts.columns] closed_on brings them over with their final bills)"
                             if converted.closed else ""))

    def do_check(self, o):
        as_of = parse_as_of(o["date"])
        mapping = mapping_load(o["mapping"]) if o["mapping"] else None
        checked, history = conversion_read(o["file"], as_of=as_of, mapping=mapping, bills=o["history"],
                                           payments=o["payments"], devices=o["devices"], contacts=o["contacts"],
                                           notes=o["notes"], plans=o["plans"], cases=o["cases"],
                                           relevied=o["relevied"])
        if o["control"]:
            control_refuse(checked, o["control"])
        totals = checked.control_totals()
        if self._history_given(o):
            totals["history"] = history.control_totals()
        if o["json"]:
            self.stdout.write(json.dumps(totals, indent=2))
            return
        self.stdout.write(f"{o['file']}: no problems in {totals['rows']} rows; nothing was saved")
        self.stdout.write(f"  {totals['accounts']} accounts, {totals['open_bills']} open bills")
        for kind in KINDS:
            self.stdout.write(f"  {kind:<9} {fmt_dollars(checked.by_kind.get(kind, 0)):>16}")
        self.stdout.write(f"  owed (charges less credits) {fmt_dollars(checked.owed)}; deposits held "
                          f"{fmt_dollars(checked.by_kind.get('deposit', 0))}")
        if self._history_given(o):
            told = history.control_totals()
            self.stdout.write(f"  history: {len(history.bills)} past bills ({history.gallons:,} gal, "
                              f"{fmt_dollars(history.billed)} billed), {len(history.payments)} payments "
                              f"({fmt_dollars(history.paid)}), {len(history.devices)} backflow devices, "
                              f"{told['emails']} e-mail addresses, {told['paperless']} paperless accounts, "
                              f"{told['notes']} notes, {told['plans']} payment plans in force "
                              f"({fmt_dollars(Decimal(told['plans_total']))} left to pay), {told['cases']} "
                              f"termination cases in progress, {told['relevied']} amounts relevied "
                              f"({fmt_dollars(Decimal(told['relevied_total']))})")

    @staticmethod
    def _history_given(o) -> bool:
        return any(o[name] for name in ("history", "payments", "devices", "contacts", "notes", "plans", "cases",
                                        "relevied"))

    def do_post(self, o):
        cutover = parse_as_of(o["cutover"], allow_future=True)
        mapping = mapping_load(o["mapping"]) if o["mapping"] else None
        posted = conversion_post(o["file"], cutover=cutover, today=today(), mapping=mapping, bills=o["history"],
                                 payments=o["payments"], devices=o["devices"], contacts=o["contacts"],
                                 notes=o["notes"], plans=o["plans"], cases=o["cases"],
                                 relevied=o["relevied"], control=o["control"])
        batch = posted.batch
        if posted.already:
            self.stdout.write(f"{o['file']} was posted already as conversion {batch.pk} on "
                              f"{batch.posted_at:%Y-%m-%d}; nothing was posted now")
            return
        totals = batch.control
        self.stdout.write(f"posted conversion {batch.pk}: {totals['accounts']} accounts owing, {batch.bills} bills "
                          f"({posted.checked.bills} open), {batch.entries} ledger rows; owed "
                          f"{fmt_dollars(posted.checked.owed)}, deposits held "
                          f"{fmt_dollars(posted.checked.by_kind.get('deposit', 0))}")
        self.stdout.write(f"  reconcile it: manage.py convert reconcile --cutover {cutover}")

    def do_reconcile(self, o):
        view = reconciliation_view(reconciliation(cutover=parse_as_of(o["cutover"], allow_future=True)))
        if o["format"] == "pdf":
            if not o["out"]:
                raise ApplicationError("--out FILE is needed for a PDF", field="out")
            Path(o["out"]).write_bytes(as_pdf(view))
            self.stdout.write(f"written to {o['out']}")
            return
        if o["format"] == "json":
            text = json.dumps(as_json(view), indent=2)
        elif o["format"] == "csv":
            text = as_csv(view).rstrip("\r\n")
        else:
            text = "\n".join([*view.notes, *self._tables(view)])
        self._out(o, text)

    def _out(self, o, text: str) -> None:
        """The report to ``--out`` when given, else to standard output."""
        if o["out"]:
            Path(o["out"]).write_text(text + "\n")
            self.stdout.write(f"written to {o['out']}")
        else:
            self.stdout.write(text)

    @staticmethod
    def _tables(view) -> list[str]:
        lines = []
        for table in view.tables:
            shown = printed(table)
            lines.append(f"{table.title}:")
            if not shown.rows:
                lines.append("  none")
                continue
            for row in [shown.headers, *shown.rows, *([shown.total] if shown.total else [])]:
                lines.append("  " + "  ".join(f"{c.text:>14}" if c.numeric else f"{c.text:<40}" for c in row))
        return lines

    def do_demo_export(self, o):
        cutover = parse_as_of(o["cutover"], allow_future=True)
        directory = Path(o["directory"])
        directory.mkdir(parents=True, exist_ok=True)
        export = legacy_export(cutover=cutover, seed=o["seed"])
        files = {name: directory / f"{name}.csv" for name in ("opening_balances", "history", "payments", "devices",
                                                              "contacts")}
        files["opening_balances"].write_text(export.opening)
        files["history"].write_text(export.history)
        files["payments"].write_text(export.payments)
        files["devices"].write_text(export.devices)
        files["contacts"].write_text(export.contacts)
        given = (f"{files['opening_balances']} --history {files['history']} --payments {files['payments']} "
                 f"--devices {files['devices']} --contacts {files['contacts']}")
        steps = [f"  convert check {given} --date {cutover - timedelta(days=1)}"]
        if o["period"]:
            # The parallel run of a period before the cutover comes before the post (``posted_after_refusal``).
            run_on = parse_as_of(o["period"], allow_future=True)
            legacy = directory / "legacy_bills.csv"
            legacy.write_text(legacy_bills_csv(our_bills(run_on=run_on, today=today())[0], bill_date=run_on))
            files["legacy_bills"] = legacy
            steps.append(f"  convert parallel {legacy} --date {run_on}")
        steps.append(f"  convert post {given} --cutover {cutover}")
        self.stdout.write(f"written {', '.join(str(f) for f in files.values())}; in this order:\n" + "\n".join(steps))

    def do_rollback(self, o):
        batch = conversion_rollback(o["batch"])
        self.stdout.write(f"rolled back conversion {batch.pk} ({batch.file_name}, cutover {batch.cutover}): what it "
                          "brought over is removed; the books are as they were before it")

    def do_parallel(self, o):
        run_on = parse_as_of(o["date"], allow_future=True)
        result = parallel_run(legacy=o["legacy_bills"], run_on=run_on, today=today())
        if o["format"] == "json":
            text = json.dumps(result.as_dict(), indent=2)
        elif o["format"] == "csv":
            out = io.StringIO()
            writer = csv_writer(out, lineterminator="\n")
            writer.writerow(["account_no", "status", "kind", "legacy", "ours", "difference", "note"])
            for account in result.accounts:
                for k in account.kinds or ():
                    writer.writerow([account.account_no, account.status, k.kind,
                                     "" if k.legacy is None else f"{k.legacy:.2f}",
                                     "" if k.ours is None else f"{k.ours:.2f}", f"{k.difference:.2f}", account.note])
            text = out.getvalue().rstrip("\n")
        else:
            text = self._text(result)
        self._out(o, text)

    @staticmethod
    def _text(result) -> str:
        lines = [f"Parallel run: the old system's bills dated {result.legacy_bill_date or '—'} against ours dated "
                 f"{result.bill_date}",
                 "  " + ", ".join(f"{result.count(status)} {words}" for status, words in STATUS_WORDS.items())
                 + f" ({len(result.accounts)} accounts)",
                 f"  totals: old system {fmt_dollars(result.legacy_total)}, ours {fmt_dollars(result.our_total)}, "
                 f"difference {fmt_dollars(result.our_total - result.legacy_total)}"]
        for district in result.by_district():
            lines.append(f"  district {district['district'] or '(none)'}: {district['accounts']} accounts, "
                         f"{district['identical']} identical; old system ${district['legacy_total']}, ours "
                         f"${district['our_total']}, difference ${district['difference']}")
        for account in result.not_identical:
            lines.append(f"{account.account_no}: {STATUS_WORDS[account.status]}, old system "
                         f"{fmt_dollars(account.legacy_total)}, ours {fmt_dollars(account.our_total)}"
                         + (f" ({account.note})" if account.note else ""))
            for k in account.kinds:
                if k.difference or account.status != "different":
                    lines.append(f"    {k.kind:<6} old system {'—' if k.legacy is None else fmt_dollars(k.legacy):>12}"
                                 f"  ours {'—' if k.ours is None else fmt_dollars(k.ours):>12}"
                                 f"  difference {fmt_dollars(k.difference):>12}")
        return "\n".join(lines)
