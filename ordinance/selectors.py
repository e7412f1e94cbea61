"""The one door to the installed ordinance: the utility row, and each table's section in force on a date.

A process reads the sections once per install (``Utility.rules_token`` changes with every install that changes one),
so asking for a section costs the one query for the utility row that asking for the utility did before.
"""

from datetime import date

from core.clock import today
from core.errors import ApplicationError

from .models import Section, Utility
from .sections import table

NOT_INSTALLED = "no ordinance preset is installed; run `manage.py setup_utility mineola`"

# token → table → [(effective_on, params)], latest first; and the typed sections built from them.
_versions: dict[str, dict[str, list[tuple[date, object]]]] = {}
_typed: dict[tuple[str, str, date | None], object] = {}


def installed_utility() -> Utility | None:
    """The installed utility, or None before a preset is installed."""
    return Utility.objects.first()


def utility_required() -> Utility:
    found = installed_utility()
    if found is None:
        raise ApplicationError(NOT_INSTALLED, field="preset")
    return found


def _table_versions(token: str) -> dict[str, list[tuple[date, object]]]:
    if token not in _versions:
        if len(_versions) > 8:
            _versions.clear()
            _typed.clear()
        found: dict[str, list[tuple[date, object]]] = {}
        for name, effective_on, params in (Section.objects.order_by("table", "-effective_on")
                                           .values_list("table", "effective_on", "params")):
            found.setdefault(name, []).append((effective_on, params))
        _versions[token] = found
    return _versions[token]


def section_params(name: str, on: date | None = None, *, installed: Utility | None = None):
    """Table ``name`` as installed and in force on ``on`` (today by default); the empty table where the preset has
    none."""
    installed = installed or utility_required()
    on = on or today()
    for effective_on, params in _table_versions(installed.rules_token).get(name, ()):
        if effective_on <= on:
            return params
    return table(name).empty


def section_effective_on(name: str, on: date | None = None, *, installed: Utility | None = None) -> date | None:
    """The day the version of ``name`` in force on ``on`` took effect (None: the preset has no such table then)."""
    installed = installed or utility_required()
    on = on or today()
    return next((d for d, _ in _table_versions(installed.rules_token).get(name, ()) if d <= on), None)


def section(name: str, on: date | None = None, *, installed: Utility | None = None):
    """The typed rule of table ``name`` in force on ``on`` (today by default), made by the reader its app
    registered; refused before a preset is installed."""
    if not table(name).stored:
        raise ApplicationError(f"[{name}] is kept by {table(name).owner} as its own dated rows (bills point at them); "
                               "ask it for the version in force", field=name)
    installed = installed or utility_required()
    on = on or today()
    effective_on = section_effective_on(name, on, installed=installed)
    key = (installed.rules_token, name, effective_on)
    if key not in _typed:
        _typed[key] = table(name).read(section_params(name, on, installed=installed))
    return _typed[key]


def section_versions(name: str, *, installed: Utility | None = None) -> list[tuple[date, object]]:
    """Every version of table ``name``, latest first, as installed (the raw tables)."""
    installed = installed or utility_required()
    return list(_table_versions(installed.rules_token).get(name, ()))


def sections_forget() -> None:
    """Drop what this process has read (an install in this process calls it; others see the new token)."""
    _versions.clear()
    _typed.clear()
