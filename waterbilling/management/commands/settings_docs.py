"""Write the environment variables' table of docs/operations.md and the environment of docker-compose.yml from
``waterbilling.environment`` (``--write``), or print the table."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from waterbilling.environment import compose_environment, operations_table

DOC = Path(settings.BASE_DIR) / "docs" / "operations.md"
COMPOSE = Path(settings.BASE_DIR) / "docker-compose.yml"
START = "<!-- the variables: written by `manage.py settings_docs --write` from waterbilling/environment.py -->\n"
END = "<!-- end of the variables -->\n"
COMPOSE_START, COMPOSE_END = "x-app-environment: &app-environment\n", "\nx-app: &app\n"


def operations_doc(text: str) -> str:
    """``text`` (docs/operations.md) with the variables' table between its markers written afresh."""
    if START not in text or END not in text:
        raise CommandError(f"{DOC} has lost the markers around its table of variables")
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    return before + START + "\n" + operations_table() + END + after


def compose_file(text: str) -> str:
    """``text`` (docker-compose.yml) with its ``x-app-environment`` block written afresh."""
    if COMPOSE_START not in text or COMPOSE_END not in text:
        raise CommandError(f"{COMPOSE} has lost its x-app-environment or x-app block")
    before, rest = text.split(COMPOSE_START, 1)
    _, after = rest.split(COMPOSE_END, 1)
    return before + compose_environment() + COMPOSE_END + after


class Command(BaseCommand):
    help = ("Write docs/operations.md's table of environment variables and docker-compose.yml's environment from "
            "waterbilling/environment.py (--write), or print the table.")

    def add_arguments(self, parser):
        parser.add_argument("--write", action="store_true", help="write docs/operations.md and docker-compose.yml")

    def handle(self, *args, write, **options):
        if not write:
            self.stdout.write(operations_table())
            return
        DOC.write_text(operations_doc(DOC.read_text()))
        COMPOSE.write_text(compose_file(COMPOSE.read_text()))
        self.stdout.write(f"wrote {DOC} and {COMPOSE}")
