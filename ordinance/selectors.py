"""The one door to the installed ordinance: the utility row, its districts, and each table's section in force on a
date — a district's own version where it has one, else the installation's.

A process reads the sections once per install (``Utility.rules_token`` changes with every install that changes one),
so asking for a section costs the one query for the utility row that asking for the utility did before.
"""

from datetime import date

from core.clock import today
from core.errors import ApplicationError

from .models import District, Section, Utility
from .sections import table

NOT_INSTALLED = "no ordinance preset is installed; run `manage.py setup_utility mineola`"

# token → (district, table) → [(effective_on, params)], latest first; the typed sections built from them; and the
# districts of each install.
_versions: dict[str, dict[tuple[str, str], list[tuple[date, object]]]] = {}
_typed: dict[tuple[str, str, str, date | None], object] = {}
_districts: dict[str, dict[str, District]] = {}


def installed_utility() -> Utility | None:
    """The installed utility, or None before a preset is installed."""
    return Utility.objects.first()


def utility_required() -> Utility:
    found = installed_utility()
    if found is None:
        raise ApplicationError(NOT_INSTALLED, field="preset")
    return found


def _table_versions(token: str) -> dict[tuple[str, str], list[tuple[date, object]]]:
    if token not in _versions:
        if len(_versions) > 8:
            sections_forget()
        found: dict[tuple[str, str], list[tuple[date, object]]] = {}
        for name, district, effective_on, params in (
                Section.objects.order_by("table", "district", "-effective_on")
                .values_list("table", "district", "effective_on", "params")):
            found.setdefault((district, name), []).append((effective_on, params))
        _versions[token] = found
        _districts[token] = {d.code: d for d in District.objects.order_by("code")}
    return _versions[token]


def _own_versions(name: str, district: str, installed: Utility) -> tuple[str, list[tuple[date, object]]]:
    """The versions of ``name`` that apply in ``district``: the district's own where it names the table, else the
    installation's; with whose they are ("" for the installation's)."""
    versions = _table_versions(installed.rules_token)
    if district and (district, name) in versions:
        return district, versions[(district, name)]
    return "", versions.get(("", name), [])


def section_params(name: str, on: date | None = None, *, installed: Utility | None = None, district: str = ""):
    """Table ``name`` as installed and in force on ``on`` (today by default) in ``district`` (its own version where
    it has one, else the installation's); the empty table where the preset has none."""
    installed = installed or utility_required()
    on = on or today()
    for effective_on, params in _own_versions(name, district, installed)[1]:
        if effective_on <= on:
            return params
    return table(name).empty


def section_effective_on(name: str, on: date | None = None, *, installed: Utility | None = None,
                         district: str = "") -> date | None:
    """The day the version of ``name`` in force on ``on`` took effect (None: the preset has no such table then)."""
    installed = installed or utility_required()
    on = on or today()
    return next((d for d, _ in _own_versions(name, district, installed)[1] if d <= on), None)


def section(name: str, on: date | None = None, *, installed: Utility | None = None, district: str = ""):
    """The typed rule of table ``name`` in force on ``on`` (today by default) in ``district`` (blank: the
    installation's), made by the reader its app registered; refused before a preset is installed."""
    if not table(name).stored:
        raise ApplicationError(f"[{name}] is kept by {table(name).owner} as its own dated rows (bills point at them); "
                               "ask it for the version in force", field=name)
    installed = installed or utility_required()
    on = on or today()
    whose, versions = _own_versions(name, district, installed)
    effective_on = next((d for d, _ in versions if d <= on), None)
    key = (installed.rules_token, whose, name, effective_on)
    if key not in _typed:
        _typed[key] = table(name).read(section_params(name, on, installed=installed, district=whose))
    return _typed[key]


def section_versions(name: str, *, installed: Utility | None = None, district: str = "") -> list[tuple[date, object]]:
    """Every version of table ``name`` that applies in ``district``, latest first, as installed (the raw tables)."""
    installed = installed or utility_required()
    return list(_own_versions(name, district, installed)[1])


def districts(*, installed: Utility | None = None) -> dict[str, District]:
    """The installation's districts by code, in code order ({} for a village, which names none)."""
    installed = installed or installed_utility()
    if installed is None:
        return {}
    _table_versions(installed.rules_token)  # read with the sections, once per install
    return _districts[installed.rules_token]


def district_named(code: str | None) -> str | None:
    """``code`` checked against the installation's districts (None: every district); refused naming the field."""
    if code is None:
        return None
    town = districts()
    if code not in town:
        known = ", ".join(town) or "none: this installation names no districts"
        raise ApplicationError(f"'{code}' is not a district of this installation (known: {known})", field="district")
    return code


def sections_forget() -> None:
    """Drop what this process has read (an install in this process calls it; others see the new token)."""
    _versions.clear()
    _typed.clear()
    _districts.clear()
