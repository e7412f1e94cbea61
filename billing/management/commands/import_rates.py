from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from billing.services.rate_import import activate_import, parse_class_map, prepare_import
from core.dates import iso_date
from core.errors import ApplicationError


class Command(BaseCommand):
    help = ("Add a rate schedule from an Open Water Rate Specification (OWRS) file, in force from --effective-on; "
            "all or nothing. The file's customer classes bill our categories as its waterbilling.class_map says, "
            "or as --class-map entries say (OWRS_CLASS=category, or OWRS_CLASS=category@frequency for one "
            "frequency). Prints what each class bills and what accounts need; a refusal names the line and field.")

    def add_arguments(self, parser):
        parser.add_argument("file", help="the .owrs (YAML) file")
        parser.add_argument("--effective-on", required=True, metavar="YYYY-MM-DD",
                            help="the first bill date the schedule rates")
        parser.add_argument("--class-map", nargs="+", action="extend", metavar="OWRS_CLASS=CATEGORY",
                            help="which class bills which category, e.g. RESIDENTIAL_SINGLE=one_two_family "
                                 "COMMERCIAL=other COMMERCIAL=nonprofit (replaces the file's class map)")
        parser.add_argument("--citation", default="", metavar="TEXT",
                            help="the ordinance or resolution adopting the rates (default: the file's "
                                 "metadata.citation), printed on every bill line")
        parser.add_argument("--dry-run", action="store_true", help="check the file and say what it would add")

    def handle(self, *args, file, **options):
        try:
            effective_on = iso_date(options["effective_on"])
        except ValueError as exc:
            raise CommandError(f"--effective-on: {exc}") from None
        try:
            text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"nothing added: {file} cannot be read ({exc})") from None
        try:
            class_map = parse_class_map(options["class_map"]) if options["class_map"] else None
            prepared = prepare_import(text, effective_on=effective_on, class_map=class_map,
                                      citation=options["citation"])
            if not options["dry_run"]:
                activate_import(prepared)
        except ApplicationError as exc:
            problems = "; ".join(str(error) for error in exc.errors) or str(exc)
            raise CommandError(f"nothing added: {file}: {problems}") from exc
        done = "would add" if options["dry_run"] else "added"
        self.stdout.write(f"{file}: {done} the rate schedule in force from {prepared.effective_on} "
                          f"({prepared.citation}), {len(prepared.classes)} customer classes:")
        for cls in prepared.classes:
            needs = prepared.needs.get(cls) or []
            self.stdout.write(f"  {cls} → {prepared.class_map.get(cls, 'accounts naming it (cust_class)')}"
                              + (f"; reads {', '.join(needs)}" if needs else ""))
        for note in prepared.notes:
            self.stdout.write(f"  {note}")
        if options["dry_run"]:
            self.stdout.write("Dry run: nothing saved.")
