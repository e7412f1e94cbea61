"""``reading_docs [--write]``: print docs/readings.md as the read-file mapping's registry makes it, or write it."""

from django.core.management.base import BaseCommand

from meters.readfiles.doc import DOC, reading_doc


class Command(BaseCommand):
    help = "Print (or --write) docs/readings.md: every key of a read-file mapping, from its registry."

    def add_arguments(self, parser):
        parser.add_argument("--write", action="store_true", help="write docs/readings.md")

    def handle(self, *args, write, **options):
        text = reading_doc()
        if write:
            DOC.write_text(text)
            self.stdout.write(f"wrote {DOC}")
        else:
            self.stdout.write(text)
