"""Write the roles table of docs/roles.md from ``accounts.roles.DUTIES`` (``--write``), or print it."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.roles import roles_table

DOC = Path(settings.BASE_DIR) / "docs" / "roles.md"
START = "<!-- the roles table: written by `manage.py roles_docs --write` from accounts/roles.py -->\n"
END = "<!-- end of the roles table -->\n"


def roles_doc(text: str) -> str:
    """``text`` (docs/roles.md) with the table between its markers written afresh."""
    if START not in text or END not in text:
        raise CommandError(f"{DOC} has lost the markers around its roles table")
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    return before + START + roles_table() + END + after


class Command(BaseCommand):
    help = "Write the roles table of docs/roles.md from accounts/roles.py (--write), or print the table."

    def add_arguments(self, parser):
        parser.add_argument("--write", action="store_true", help="write docs/roles.md")

    def handle(self, *args, write, **options):
        if not write:
            self.stdout.write(roles_table())
            return
        DOC.write_text(roles_doc(DOC.read_text()))
        self.stdout.write(f"wrote {DOC}")
