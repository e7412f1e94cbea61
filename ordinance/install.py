"""Installing a preset file: checked whole first, then written as dated sections, then each app's own rows.

``preset_check`` holds a file to the contract every shipped preset keeps: each table is read by the reader its app
registered (``ordinance.sections``), and every refusal names its table and key; nothing is written from a file with
one. ``preset_install`` then writes the tables that changed as sections in force from the install's date (the
``--effective`` date, else the file's ``effective_on``, else from the beginning) and runs the install steps apps
register for the rows they keep themselves (billing: rate schedules and fees, each dated in the file).

Installing the same file twice changes nothing. A table whose version of that date is already in force may be
corrected only while nothing the past rests on would change (the guards apps register: billing's is "no bill yet");
otherwise the change is refused and must be given the date it takes effect — history is never rewritten.
"""

import datetime
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from core.errors import ApplicationError

from .files import CODE, PresetFile, preset_read
from .keys import Key, Shape, Text, problems
from .models import BEGINNING, District, InstalledPreset, Section, Utility, _token
from .sections import TABLES
from .selectors import sections_forget

UTILITY = Shape({
    "preset": Key("its code: lower-case letters, digits and _, starting with a letter (the file's name by default)",
                  Text()),
    "name": Key("the utility's name on every bill and page", Text(blank=False), required=True),
    "office_address": Key("the office's address, lines split by \\n", Text(blank=False), required=True),
    "phone": Key("the office's telephone", Text()), "chapter": Key("the chapter of the local law", Text())})
TOP_LEVEL = {"utility", "effective_on", "district"}
# The tables a district may have its own version of (``[district.penalty]``, ``[[district.rate_schedule]]``); every
# other table is the installation's alone (its office policy, its notes, its meters and backflow programme).
BY_DISTRICT = ("calendar", "penalty", "final_bill", "gl", "lien", "rate_schedule", "fee", "sewer")
DISTRICT = Shape({
    "code": Key("the district's code: lower-case letters, digits and _, starting with a letter (premises and "
                "conversion files name it)", Text(blank=False), required=True),
    "name": Key("its name as the bill prints it (\"Plainview Water District\")", Text(blank=False), required=True),
    "citation": Key("the law that forms it or sets its rules (the town's chapter and article)", Text(blank=False),
                    required=True),
    **{name: Key(f"the district's own [{name}] (else the installation's)") for name in BY_DISTRICT}})


def district_tables(data: dict) -> list[tuple[str, dict]]:
    """("", the file's tables) and, for each ``[[district]]``, (its code, its own tables): who each version is of."""
    found = [("", data)]
    for district in data.get("district", []) if isinstance(data.get("district"), list) else []:
        if isinstance(district, dict):
            found.append((str(district.get("code", "")),
                          {k: v for k, v in district.items() if k in BY_DISTRICT}))
    return found


@dataclass
class InstallReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    version: int | None = None
    effective_on: datetime.date | None = None


InstallStep = Callable[[PresetFile, InstallReport], None]
_steps: list[InstallStep] = []
_guards: list[Callable[[], str]] = []


def install_step_register(step: InstallStep) -> None:
    """``step(file, report)`` writes the rows an app keeps itself from a checked file (inside the install's
    transaction), adding what it did to the report."""
    if step not in _steps:
        _steps.append(step)


# An amendment that takes effect before what is already posted: what it would change, and what rebills it.
PastGuard = Callable[[PresetFile, datetime.date | None], list[str]]
RebillStep = Callable[[PresetFile, datetime.date | None, "InstalledPreset", object], str]
_past_guards: list[PastGuard] = []
_rebill_steps: list[RebillStep] = []


def past_guard_register(guard: PastGuard) -> None:
    """``guard(file, effective_on)`` lists what is already posted under the installed rules that the file, taking
    effect on ``effective_on``, would have made otherwise ("bill 202604-1-0007 dated 2026-04-01 was rated by the
    schedule of 2024-06-01"); an install with any is refused unless asked to rebill."""
    if guard not in _past_guards:
        _past_guards.append(guard)


def rebill_step_register(step: RebillStep) -> None:
    """``step(file, effective_on, install, actor)``, inside an install asked to rebill, makes what corrects the
    past (billing: a request to void and bill again, for a supervisor to approve); returns it in words."""
    if step not in _rebill_steps:
        _rebill_steps.append(step)


def history_guard_register(guard: Callable[[], str]) -> None:
    """``guard()`` says why the installed rules already bear on the past ("1,204 bills issued"), or ""."""
    if guard not in _guards:
        _guards.append(guard)


def jsonable(value):
    """Dates to ISO strings and numbers kept as written, so a table compares equal after a round trip."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def _effective_from(file: PresetFile, effective_on: datetime.date | None) -> tuple[datetime.date | None, str]:
    if effective_on is not None:
        return effective_on, ""
    value = file.data.get("effective_on")
    if value is None:
        return None, ""
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value, ""
    return None, f"effective_on '{value}' is not a date (YYYY-MM-DD)"


def check_data(file: PresetFile) -> list[str]:
    """Every refusal of a preset file's contents, each naming its table and key; [] when it may be installed."""
    data, refusals = file.data, []
    utility = data.get("utility")
    if not isinstance(utility, dict):
        refusals.append("[utility] is missing: every preset names its utility (name, office_address)")
    else:
        refusals.extend(problems(UTILITY, utility, "[utility]"))
    refusals.extend([why] if (why := _effective_from(file, None)[1]) else [])
    for name in sorted(set(data) - TOP_LEVEL - set(TABLES)):
        refusals.append(f"[{name}] is not a table any part of the product reads; known tables: "
                        f"{', '.join(sorted(TABLES))}")
    refusals.extend(_districts_check(data.get("district")))
    for district, tables in district_tables(data):
        prefix = f"district.{district} " if district else ""
        for name, table in TABLES.items():
            params = tables.get(name)
            if params is None:
                if table.required and not district:
                    refusals.append(f"[{name}] is missing: every preset has one ({table.meaning})")
                continue
            if table.is_list != isinstance(params, list):
                shape = f"[[{name}]] (an array of tables)" if table.is_list else f"[{name}] (a table)"
                refusals.append(f"{prefix}[{name}] must be written {shape}")
                continue
            found = problems(table.shape, params, f"[district.{district}.{name}]" if district else f"[{name}]")
            if found:
                refusals.extend(found)
                continue
            try:
                table.read(jsonable(params))
            except ApplicationError as exc:
                for error in exc.errors:
                    message = error.message if error.message.startswith("[") else f"[{name}] {error.message}"
                    refusals.append(f"{prefix}{message}")
    return refusals


def _districts_check(value) -> list[str]:
    """The ``[[district]]`` tables: each of its shape, with a code of its own."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        return ["[district] must be written [[district]] (an array of tables, one per district)"]
    found, seen = [], set()
    for n, district in enumerate(value, 1):
        found += problems(DISTRICT, district, f"[district #{n}]")
        code = district.get("code")
        if isinstance(code, str) and code:
            if not CODE.fullmatch(code):
                found.append(f"[district #{n}] code = {code!r} is not a code (lower-case letters, digits and _, "
                             "starting with a letter)")
            if code in seen:
                found.append(f"[district #{n}] code = {code!r} names two districts; each has its own code")
            seen.add(code)
    return found


def preset_check(*, code: str | None = None, path: str | Path | None = None) -> list[str]:
    """The refusals of a preset file (a shipped ``code`` or a ``path``); the file unreadable is one refusal."""
    try:
        file = preset_read(code=code, path=path)
    except ApplicationError as exc:
        return [str(exc)]
    return check_data(file)


@transaction.atomic(durable=True)
def preset_install(*, code: str | None = None, path: str | Path | None = None,
                   effective_on: datetime.date | None = None, mark_demo_site: bool = False, rebill: bool = False,
                   actor=None) -> InstallReport:
    """Install or update a preset: a shipped ``code`` or the file at ``path``. ``mark_demo_site`` marks the site a
    demo/training site (billing on the preset's sample rates allowed); without it the mark stays as it was.

    An amendment taking effect before bills or late charges already posted under the rules it replaces is refused,
    listing them, unless ``rebill``: then it is installed and what corrects the past is asked for (the rebill steps
    apps register; billing's waits for a supervisor), by ``actor``."""
    file = preset_read(code=code, path=path)
    refusals = check_data(file)
    if refusals:
        raise ApplicationError(f"{Path(file.source).name} cannot be installed: " + "; ".join(refusals),
                               field="preset")
    effective, _ = _effective_from(file, effective_on)
    past = [line for guard in _past_guards for line in guard(file, effective)]
    if past and not rebill:
        raise ApplicationError(
            f"{Path(file.source).name} takes effect {'from ' + str(effective) if effective else 'from the beginning'}, "
            f"before what is already posted under the rules it replaces: {'; '.join(past)}. Nothing was installed. "
            "Give the day the amendment actually takes effect, or install it with --rebill: the bills are then "
            "voided and billed again once a supervisor approves, and the late charges are corrected on their own "
            "days, each line stating the rate that makes it", field="effective_on")
    report = InstallReport(effective_on=effective)
    version = (InstalledPreset.objects.select_for_update().aggregate(last=Max("version"))["last"] or 0) + 1
    install = InstalledPreset.objects.create(version=version, code=file.code, source=file.source,
                                             sha256=file.sha256, effective_on=effective or BEGINNING)
    if past:
        # Asked before the new rows are written: the steps read what the install is about to change.
        report.updated.extend(step(file, effective, install, actor) for step in _rebill_steps)
    sections_changed = _utility_install(file, report, mark_demo_site=mark_demo_site)
    sections_changed |= _districts_install(file, install, report)
    sections_changed |= _sections_install(file, install, effective or BEGINNING, report)
    for step in _steps:
        step(file, report)
    if not report.created and not report.updated:
        install.delete()
        return report
    install.changes = report.created + report.updated
    install.save(update_fields=["changes"])
    report.version = version
    if sections_changed:
        # ``update`` skips ``auto_now``: the day the rules changed is what the penalties preview checks.
        Utility.objects.update(rules_token=_token(), updated_at=timezone.now())
    transaction.on_commit(sections_forget)
    return report


def _utility_install(file: PresetFile, report: InstallReport, *, mark_demo_site: bool) -> bool:
    values = {key: file.data["utility"].get(key, "") for key in ("name", "office_address", "phone", "chapter")}
    other = Utility.objects.exclude(preset=file.code).first()
    if other is not None and District.objects.filter(Q(premises_in__isnull=False) | Q(bills__isnull=False)).exists():
        raise ApplicationError(
            f"{other.name}'s districts have premises in them (and bills rest on them); another preset cannot replace "
            f"it here: install {file.code} on a database of its own", field="preset")
    replaced = Utility.objects.exclude(preset=file.code).delete()[0]
    if replaced:
        # Another village's rules are no rules of this one: its sections go with it.
        Section.objects.all().delete()
        District.objects.all().delete()
    current = Utility.objects.filter(preset=file.code).first()
    changed = False
    if current is None:
        policy = file.data.get("policy", {})
        # The floor and the hold are the clerk's to change on the Utility page after that: installing again keeps
        # them (the [policy] reader has checked both).
        Utility.objects.create(preset=file.code, list_floor=Decimal(str(policy.get("list_floor", "25.00"))),
                               high_usage_factor=Decimal(str(policy.get("high_usage_factor", 4))), **values)
        report.created.append(f"utility {file.code}")
        changed = True
    elif any(getattr(current, k) != v for k, v in values.items()):
        Utility.objects.filter(pk=current.pk).update(**values)
        report.updated.append(f"utility {file.code}")
    else:
        report.unchanged += 1
    if mark_demo_site and Utility.objects.filter(preset=file.code, is_demo_site=False).update(is_demo_site=True):
        report.updated.append(f"utility {file.code}: marked a demo/training site (sample rates may be billed)")
    return changed


def _districts_install(file: PresetFile, install: InstalledPreset, report: InstallReport) -> bool:
    """The file's ``[[district]]`` rows: added, renamed; a district the file no longer names is kept (premises and
    bills name it) and its own tables stop applying only by a dated amendment."""
    changed = False
    for district in file.data.get("district", []):
        values = {"name": district["name"], "citation": district["citation"]}
        row = District.objects.filter(code=district["code"]).first()
        if row is None:
            District.objects.create(code=district["code"], installed=install, **values)
            report.created.append(f"district {district['code']}")
            changed = True
        elif any(getattr(row, k) != v for k, v in values.items()):
            District.objects.filter(pk=row.pk).update(installed=install, **values)
            report.updated.append(f"district {district['code']}")
            changed = True
    return changed


def _sections_install(file: PresetFile, install: InstalledPreset, effective_on: datetime.date,
                      report: InstallReport) -> bool:
    existing: dict[tuple[str, str], list[Section]] = {}
    for row in Section.objects.select_for_update().order_by("table", "district", "-effective_on"):
        existing.setdefault((row.district, row.table), []).append(row)
    rewrites, writes = [], []
    for district, tables in district_tables(file.data):
        for name, table in TABLES.items():
            if not table.stored or (district and name not in BY_DISTRICT):
                continue
            versions = existing.get((district, name), [])
            if district and name not in tables:
                # The installation's table applies in the district (a district's own version, once installed, stays
                # in force until the file gives it another).
                continue
            params = jsonable(tables.get(name, table.empty))
            same_day = next((row for row in versions if row.effective_on == effective_on), None)
            in_force = next((row for row in versions if row.effective_on < effective_on), None)
            whose = f"[district.{district}.{name}]" if district else f"[{name}]"
            label = f"{whose} in force from {effective_on}" if effective_on != BEGINNING else whose
            if same_day is not None:
                if same_day.params == params:
                    report.unchanged += 1
                else:
                    rewrites.append((same_day, params, label))
            elif (in_force.params if in_force else table.empty) == params:
                if versions or params != table.empty:
                    report.unchanged += 1
            else:
                writes.append(Section(table=name, district=district, effective_on=effective_on, params=params,
                                      installed=install))
                report.created.append(label)
    if rewrites:
        why = "; ".join(filter(None, (guard() for guard in _guards)))
        if why:
            tables = ", ".join(f"[{row.table}]" for row, _, _ in rewrites)
            raise ApplicationError(
                f"{tables} in force from {effective_on} already bear on the past ({why}) and cannot be rewritten; "
                "install the change with the date it takes effect (setup_utility PRESET --effective YYYY-MM-DD, or "
                "effective_on in the file)", field="effective_on")
        for row, params, label in rewrites:
            row.params, row.installed = params, install
            row.save(update_fields=["params", "installed"])
            report.updated.append(label)
    for row in writes:
        row.save()  # one by one, so each version has its history row
    return bool(rewrites or writes)

