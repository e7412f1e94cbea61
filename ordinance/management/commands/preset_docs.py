"""``preset_docs [--write]``: print docs/presets.md as the registries make it, or write it."""

from django.core.management.base import BaseCommand

from ordinance.docs import DOC, presets_doc


class Command(BaseCommand):
    help = "Print (or --write) docs/presets.md: every preset table, key and scheme, from the registries."

    def add_arguments(self, parser):
        parser.add_argument("--write", action="store_true", help="write docs/presets.md")

    def handle(self, *args, write, **options):
        text = presets_doc()
        if write:
            DOC.write_text(text)
            self.stdout.write(f"wrote {DOC}")
        else:
            self.stdout.write(text)
