"""``manage.py report NAME``: a clerk report as of the date, as CSV, JSON or PDF (docs/clerks-guide.md, Reports).

Without ``--out`` CSV and JSON go to standard output; a PDF needs ``--out``. A refusal (an unknown report,
a bad date, a bill date without bills) names the option and exits 1."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import as_of_argument, parse_as_of
from core.dates import iso_date
from core.errors import ApplicationError

from ...catalog import REPORTS, report_build
from ...render import as_csv, as_json, as_pdf, report_view

FORMATS = ("csv", "json", "pdf")
# The command's option for each parameter a refusal may name.
OPTIONS = {"report": "NAME", "date": "--date", "bill_date": "--bill-date", "start": "--from", "end": "--to",
           "levy_date": "--levy-date", "preset": "preset", "district": "--district"}


class Command(BaseCommand):
    help = "Clerk reports as of the date: " + "; ".join(f"{k.name} ({k.words})" for k in REPORTS.values()) + "."

    def add_arguments(self, parser):
        parser.add_argument("name", metavar="NAME", help=f"the report: {', '.join(REPORTS)}")
        parser.add_argument("--format", default="csv", metavar="csv|pdf|json", help="default csv")
        parser.add_argument("--out", metavar="FILE", help="write here (a PDF must); CSV and JSON print otherwise")
        as_of_argument(parser)
        parser.add_argument("--bill-date", metavar="D",
                            help="register: the bill date (default: the latest on or before --date)")
        parser.add_argument("--from", dest="start", metavar="D", help="receipts: the first day (default: --date)")
        parser.add_argument("--to", dest="end", metavar="D", help="receipts: the last day (default: --date)")
        parser.add_argument("--levy-date", metavar="D", help="relevy: the levy date (default: --date)")
        parser.add_argument("--district", metavar="CODE",
                            help="a town's report narrowed to one water district (its code; default: every one); "
                                 "the relevy list is then that district's levy, under its lien rule")

    def handle(self, *args, name, **o):
        fmt = (o["format"] or "").lower()
        if fmt not in FORMATS:
            raise CommandError(f"--format: '{o['format']}' is not a format; use {', '.join(FORMATS)}")
        if fmt == "pdf" and not o["out"]:
            raise CommandError("--out: a PDF report needs --out FILE")
        as_of = parse_as_of(o["date"])
        try:
            report = report_build(name=name, as_of=as_of, bill_date=_day(o["bill_date"], "bill_date"),
                                  start=_day(o["start"], "start"), end=_day(o["end"], "end"),
                                  levy_date=_day(o["levy_date"], "levy_date"), district=o["district"])
        except ApplicationError as exc:
            raise CommandError("; ".join(f"{OPTIONS.get(e.field, e.field)}: {e.message}" if e.field else e.message
                                         for e in exc.errors)) from exc
        view = report_view(report)
        if fmt == "pdf":
            data = as_pdf(view)
        elif fmt == "json":
            data = json.dumps(as_json(view), indent=2) + "\n"
        else:
            data = as_csv(view)
        if not o["out"]:
            self.stdout.write(data, ending="")
            return
        path = Path(o["out"])
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8", newline="")
        self.stdout.write(f"Wrote {view.title} ({len(view.main.rows):,} rows) to {path}")


def _day(value: str | None, param: str):
    if value is None:
        return None
    try:
        return iso_date(value)
    except ValueError as exc:
        raise CommandError(f"{OPTIONS[param]}: {exc}") from None
