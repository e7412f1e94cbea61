"""``manage.py readiness``: what is still sample, default or missing before the office goes live (exit 1 if
anything), each with what to do and where; ``--json`` for another program."""

import json

from django.core.management.base import BaseCommand

from waterbilling.readiness import readiness_findings


class Command(BaseCommand):
    help = "List what is still sample, default or missing before going live, with what to do (exit 1 if any)."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print the findings as JSON")

    def handle(self, *args, **options):
        findings = readiness_findings()
        if options["json"]:
            self.stdout.write(json.dumps([f.__dict__ for f in findings], indent=2))
        elif not findings:
            self.stdout.write("Ready to go live: nothing sample, default or missing.")
        else:
            self.stdout.write(f"{len(findings)} thing(s) to settle before going live:")
            for f in findings:
                self.stdout.write(f"- {f.area}: {f.what}\n    → {f.fix}")
        if findings:
            raise SystemExit(1)
