"""Shared bits for management commands: the --date argument, the utility's 'today', dates given as options,
and ``SubcommandCommand``, the scaffold of a command of subcommands."""

from collections.abc import Callable
from datetime import date

from django.core.management.base import BaseCommand, CommandError, CommandParser

from .clock import refuse_future, today
from .dates import iso_date
from .errors import ApplicationError, refuse_nul

__all__ = ["SubcommandCommand", "as_of_argument", "day_option", "parse_as_of", "read_each", "today"]


def as_of_argument(parser) -> None:
    parser.add_argument("--date", default=None, metavar="YYYY-MM-DD",
                        help="the day the command acts as of (default: today, America/New_York)")


def parse_as_of(value: str | None, *, allow_future: bool = False) -> date:
    if value is None:
        return today()
    try:
        parsed = iso_date(value)
    except ValueError as exc:
        raise CommandError(f"--date: {exc}") from None
    if not allow_future:
        try:
            refuse_future(parsed)
        except ApplicationError as exc:
            raise CommandError(f"--date: {exc}") from None
    return parsed


def day_option(options: dict, name: str) -> date | None:
    """The date given as ``--name`` among a command's ``options``, or None; an impossible one is refused naming
    the option."""
    value = options.get(name)
    if value is None:
        return None
    try:
        return iso_date(value)
    except ValueError as exc:
        raise ApplicationError(str(exc), field=f"--{name.replace('_', '-')}") from None


def read_each(**reads: Callable[[], object]) -> dict:
    """Every argument read (a parse, a lookup), and every one that fails named together, not only the first:
    an unknown account and an impossible date are refused in one message."""
    values, errors = {}, []
    for name, read in reads.items():
        try:
            values[name] = read()
        except ApplicationError as exc:
            errors.extend(exc.errors)
    if errors:
        raise ApplicationError(errors=errors)
    return values


class SubcommandCommand(BaseCommand):
    """``manage.py NAME SUBCOMMAND``: each subcommand is declared in ``add_subcommands`` with ``self.subcommand``
    (which gives it ``--date``, the day it acts as of) and done by ``do_<subcommand>(as_of, options)``. Text
    arguments with a NUL character are refused before any reaches a query; a refusal prints every reason with
    its field and exits 1, and nothing is saved."""

    def add_arguments(self, parser: CommandParser):
        self._subparsers = parser.add_subparsers(dest="subcommand", required=True, parser_class=type(parser))
        self._from_command_line = getattr(parser, "called_from_command_line", False)
        self.add_subcommands()

    def add_subcommands(self) -> None:
        raise NotImplementedError

    def subcommand(self, name: str, help_text: str) -> CommandParser:
        parser = self._subparsers.add_parser(name, help=help_text, called_from_command_line=self._from_command_line)
        as_of_argument(parser)
        return parser

    def handle(self, *args, subcommand, **options):
        as_of = parse_as_of(options["date"])
        try:
            refuse_nul(**{f"--{name.replace('_', '-')}": value for name, value in options.items()
                          if isinstance(value, str)})
            getattr(self, "do_" + subcommand.replace("-", "_"))(as_of, options)
        except ApplicationError as exc:
            raise CommandError(refusal_text(exc)) from exc

    def say(self, text: str) -> None:
        self.stdout.write(text)


def refusal_text(exc: ApplicationError) -> str:
    """``refused: field: reason`` on one line, or one reason a line when there are several."""
    if len(exc.errors) <= 1:
        return "refused: " + "; ".join(str(e) for e in exc.errors)
    return "refused:\n" + "\n".join(f"  - {e}" for e in exc.errors)


def command_user(username: str | None):
    """The staff user a command's ``--user USERNAME`` names (None without one), refused when there is none."""
    if username is None:
        return None
    from django.contrib.auth import get_user_model

    user_model = get_user_model()
    try:
        return user_model._default_manager.get_by_natural_key(username)
    except user_model.DoesNotExist:
        raise CommandError(f"--user: no user '{username}'") from None
