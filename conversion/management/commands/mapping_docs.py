"""``mapping_docs [--write]``: print docs/mapping.md as the mapping's registry makes it, or write it."""

from django.core.management.base import BaseCommand

from conversion.mapping_doc import DOC, mapping_doc


class Command(BaseCommand):
    help = "Print (or --write) docs/mapping.md: every table and key of a conversion mapping, from its registry."

    def add_arguments(self, parser):
        parser.add_argument("--write", action="store_true", help="write docs/mapping.md")

    def handle(self, *args, write, **options):
        text = mapping_doc()
        if write:
            DOC.write_text(text)
            self.stdout.write(f"wrote {DOC}")
        else:
            self.stdout.write(text)
