"""``staff_add EMAIL --role ROLE [--name NAME]``: a member of staff who can sign in and work, in one step."""

from django.core.management.base import BaseCommand, CommandError

from accounts.roles import ROLE_PERMISSIONS, staff_add
from core.errors import ApplicationError


class Command(BaseCommand):
    help = ("Add a member of staff (or put one back in a role): a login named by their e-mail, staff status, the "
            "role's group and a temporary password, printed once.")

    def add_arguments(self, parser):
        parser.add_argument("email")
        parser.add_argument("--role", required=True, help=f"one of: {', '.join(ROLE_PERMISSIONS)}")
        parser.add_argument("--name", default="", help="their name, as pages and records show it")

    def handle(self, *args, email, role, name, **options):
        try:
            user, password = staff_add(email=email, role=role, name=name)
        except ApplicationError as exc:
            raise CommandError("; ".join(str(e) for e in exc.errors)) from None
        self.stdout.write(f"{user.username} is staff in the {role} group.\n"
                          f"  temporary password: {password}\n"
                          "  (they sign in at /admin/ and change it under \"Change password\")")
