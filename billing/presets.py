"""Installing an ordinance preset from its declarative file in ``fixtures/presets/``.

Idempotent: installing the same file twice changes nothing. Rate schedules and fees are versions keyed
by effective date: a new date adds a version; an existing date may be edited only while no bill has used
it (a clerk corrects a sample before billing), otherwise the change is refused and must be given a new
effective date — history is never rewritten.
"""

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from djmoney.money import Money

from core.errors import ApplicationError
from meters.models import MeterRules
from meters.rules import MeterPolicy

from .fees import FEE_RULES, rule_for
from .gl import gl_accounts_from
from .models import Fee, PaymentOrder, RateSchedule, Utility
from .ordinance import CALENDARS, PENALTY_SCHEMES, rate_structure_for, waiver_approval_above

PRESET_DIR = Path(settings.BASE_DIR) / "fixtures" / "presets"


@dataclass
class InstallReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0


def preset_path(code: str) -> Path:
    # A preset is a file of the presets folder, named by its code: never a path that leads out of it.
    path = PRESET_DIR / f"{code}.toml"
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", code or "") or not path.exists():
        known = ", ".join(sorted(p.stem for p in PRESET_DIR.glob("*.toml")))
        raise ApplicationError(f"unknown preset '{code}'; known presets: {known}", field="preset")
    return path


def preset_load(code: str) -> dict:
    with preset_path(code).open("rb") as fh:
        try:
            return tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ApplicationError(f"{preset_path(code).name} is not valid TOML: {exc}", field="preset") from exc


def _jsonable(value):
    """Dates to ISO strings so the schedule can live in a JSONField and compare equal after a round trip."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, date):
        return value.isoformat()
    return value


def list_floor_from(policy: dict) -> Decimal:
    """``[policy] list_floor``: the office's floor under shut-off and relevy lists, $25.00 unless the preset says."""
    value = policy.get("list_floor", "25.00")
    try:
        floor = Decimal(str(value))
        exact = floor.is_finite() and floor >= 0 and floor == floor.quantize(Decimal("0.01")) and floor < 10**9
    except ArithmeticError:
        exact = False
    if not exact:
        raise ApplicationError(f"[policy] list_floor '{value}' is not an amount of dollars and cents of at least 0.00",
                               field="list_floor")
    return floor


# The checks of the tables other apps read from a preset file (``[backflow]``: ``backflow.apps`` registers its own),
# run at install so a bad value is refused naming its key there, not at the first notice. An app above billing
# registers; billing never imports it.
SECTION_CHECKS: dict[str, Callable[[str, dict], object]] = {}


def section_check_register(table: str, check: Callable[[str, dict], object]) -> None:
    SECTION_CHECKS[table] = check


def high_usage_factor_from(policy: dict) -> Decimal:
    """``[policy] high_usage_factor``: a bill whose use per day is over this many times the account's usual is held
    for review; 4 unless the preset says. Refused unless a number over 1 (with at most two decimals)."""
    value = policy.get("high_usage_factor", 4)
    try:
        factor = Decimal(str(value))
        exact = factor.is_finite() and 1 < factor < 1000 and factor == factor.quantize(Decimal("0.01"))
    except ArithmeticError:
        exact = False
    if not exact:
        raise ApplicationError(f"[policy] high_usage_factor '{value}' is not a number over 1 (times the account's "
                               "usual use per day)", field="high_usage_factor")
    return factor


@transaction.atomic(durable=True)
def preset_install(*, code: str, mark_demo_site: bool = False) -> InstallReport:
    """Install or update preset ``code``. ``mark_demo_site`` marks the site a demo/training site (billing
    on the preset's sample rates allowed); without it the mark stays as it was: installing never clears it.
    A file that lacks a table or key the install reads is refused naming it, and nothing is installed."""
    data = preset_load(code)
    try:
        return _install(code, data, mark_demo_site=mark_demo_site)
    except KeyError as exc:
        raise ApplicationError(f"{code}.toml is incomplete: it lacks {exc.args[0]!r} (every preset has [utility] "
                               "name and office_address, [calendar] and [penalty] schemes, and each rate schedule "
                               "and fee its keys)", field="preset") from None
    except (TypeError, AttributeError) as exc:
        raise ApplicationError(f"{code}.toml is malformed: a table or value is not of the kind expected ({exc})",
                               field="preset") from None


def _install(code: str, data: dict, *, mark_demo_site: bool) -> InstallReport:
    report = InstallReport()
    util = data["utility"]
    calendar, penalty = data["calendar"], data["penalty"]
    utility_values = {
        "name": util["name"], "office_address": util["office_address"], "phone": util.get("phone", ""),
        "chapter": util.get("chapter", ""),
        "calendar_scheme": calendar["scheme"], "calendar_params": _jsonable(calendar),
        "penalty_scheme": penalty["scheme"], "penalty_params": _jsonable(penalty),
        "termination_params": _jsonable(data.get("termination", {})),
        "backflow_params": _jsonable(data.get("backflow", {})),
        "notes": _jsonable(data.get("note", [])),
        "payment_order": data.get("policy", {}).get("payment_order", PaymentOrder.PRINCIPAL_FIRST),
        "gl_params": _jsonable(data.get("gl", {})),
    }
    if utility_values["payment_order"] not in PaymentOrder.values:
        raise ApplicationError(f"[policy] payment_order '{utility_values['payment_order']}' is not one of "
                               f"{', '.join(PaymentOrder.values)}", field="payment_order")
    final_bill_rule_from(data.get("final_bill", {}))
    for table, check in SECTION_CHECKS.items():
        if data.get(table):
            check(code, _jsonable(data[table]))
    gl_accounts_from(utility_values["gl_params"])  # refused here, naming the key, not at the first export
    floor = list_floor_from(data.get("policy", {}))
    high_usage_factor = high_usage_factor_from(data.get("policy", {}))
    # A scheme the code does not know is refused here, naming the known ones, not at the first billing run.
    CALENDARS.build(calendar["scheme"], utility_values["calendar_params"])
    PENALTY_SCHEMES.build(penalty["scheme"], utility_values["penalty_params"])
    waiver_approval_above(utility_values["penalty_params"])  # office policy: refused here when not an amount
    Utility.objects.exclude(preset=code).delete()
    current = Utility.objects.filter(preset=code).first()
    if current is None:
        # The floor and the hold are the clerk's to change on the Utility page after that: installing again keeps
        # them.
        Utility.objects.create(preset=code, list_floor=floor, high_usage_factor=high_usage_factor, **utility_values)
        report.created.append(f"utility {code}")
    elif any(getattr(current, k) != v for k, v in utility_values.items()):
        # ``update`` skips ``auto_now``: the day the rules changed is what the penalties preview checks.
        Utility.objects.filter(pk=current.pk).update(**utility_values, updated_at=timezone.now())
        report.updated.append(f"utility {code}")
    else:
        report.unchanged += 1
    if mark_demo_site and Utility.objects.filter(preset=code, is_demo_site=False).update(is_demo_site=True):
        report.updated.append(f"utility {code}: marked a demo/training site (sample rates may be billed)")

    meter_params = _jsonable(data.get("meters", {}))
    try:
        MeterPolicy.from_params(meter_params)
    except (TypeError, ValueError) as exc:
        raise ApplicationError(f"[meters]: {exc}", field="meters") from exc
    unknown_units = set(meter_params.get("units", [])) - {"gal", "cf"}
    if unknown_units:
        raise ApplicationError(f"[meters] units: {', '.join(sorted(unknown_units))} is not gal or cf", field="meters")
    meter_rules = MeterRules.objects.first()
    if meter_rules is None:
        MeterRules.objects.create(params=meter_params)
        report.created.append("meter rules")
    elif meter_rules.params != meter_params:
        MeterRules.objects.filter(pk=meter_rules.pk).update(params=meter_params)
        report.updated.append("meter rules")

    for schedule in data.get("rate_schedule", []):
        effective_on = schedule["effective_on"]
        rules = _jsonable({k: v for k, v in schedule.items() if k not in ("effective_on", "citation", "sample")})
        rate_structure_for(rules)
        values = {"citation": schedule["citation"], "is_sample": schedule.get("sample", False), "rules": rules}
        _upsert_version(RateSchedule, {"effective_on": effective_on}, values, report,
                        label=f"rate schedule {effective_on}", in_use=lambda obj: obj.bills.exists())

    for fee in data.get("fee", []):
        by_size = {str(size): str(amount) for size, amount in fee.get("by_size", {}).items()}
        values = {
            "description": fee["description"], "citation": fee["citation"], "note": fee.get("note", ""),
            "amount": Money(Decimal(fee["amount"]), "USD") if "amount" in fee else None,
            "rate": Decimal(fee["rate"]) if "rate" in fee else None,
            "by_size": by_size, "params": _jsonable(fee.get("params", {})),
            "rule": rule_for(amount=fee.get("amount"), rate=fee.get("rate"), by_size=by_size, rule=fee.get("rule")),
        }
        # The rule is built once here, so a preset whose fee lacks what its rule needs is refused on install.
        FEE_RULES.build(values["rule"], {"code": fee["code"], "citation": fee["citation"],
                                         "description": fee["description"], "amount": fee.get("amount"),
                                         "rate": fee.get("rate"), "by_size": by_size,
                                         "params": values["params"]})
        _upsert_version(Fee, {"code": fee["code"], "effective_on": fee["effective_on"]}, values, report,
                        label=f"fee {fee['code']} {fee['effective_on']}", in_use=lambda obj: False)
    return report


FINAL_BILL_MINIMUMS = ("pro_rata", "full")


@dataclass(frozen=True)
class FinalBillRule:
    """The preset's ``[final_bill]`` table: how an off-cycle final bill (a move-out, a sale) charges the per-bill
    minimum (``pro_rata`` by the days of the billing period elapsed, or ``full``), its due days (None: the
    calendar's rule from the issue date), and whether arrears follow the property to a new owner's account."""

    minimum: str
    citation: str
    words: str
    due_days: int | None
    arrears_follow_property: bool
    arrears_citation: str

    @property
    def is_policy(self) -> bool:
        return self.citation.startswith("policy")


def final_bill_rule_from(table: dict) -> FinalBillRule:
    """``[final_bill]`` as a rule; refused naming the key when it is malformed. A preset without the table bills
    the full minimum, as office policy, and keeps arrears on the old account."""
    minimum = table.get("minimum", "full")
    if minimum not in FINAL_BILL_MINIMUMS:
        raise ApplicationError(f"[final_bill] minimum '{minimum}' is not one of {', '.join(FINAL_BILL_MINIMUMS)}",
                               field="final_bill")
    due_days = table.get("due_days")
    if due_days is not None and (not isinstance(due_days, int) or isinstance(due_days, bool) or due_days < 0):
        raise ApplicationError(f"[final_bill] due_days must be a whole number of days, 0 or more, not {due_days!r}",
                               field="final_bill")
    follow = table.get("arrears_follow_property", False)
    if not isinstance(follow, bool):
        raise ApplicationError("[final_bill] arrears_follow_property must be true or false", field="final_bill")
    if follow and not table.get("arrears_citation"):
        raise ApplicationError("[final_bill] arrears_follow_property needs the arrears_citation that says so",
                               field="final_bill")
    return FinalBillRule(minimum=minimum, citation=table.get("citation", "policy"), words=table.get("words", ""),
                         due_days=due_days, arrears_follow_property=follow,
                         arrears_citation=table.get("arrears_citation", ""))


def final_bill_rule(utility: Utility) -> FinalBillRule:
    """The installed preset's final-bill rule (read from its file, as the lien rule is)."""
    return final_bill_rule_from(preset_load(utility.preset).get("final_bill", {}))


def _upsert_version(model, key: dict, values: dict, report: InstallReport, *, label: str, in_use) -> None:
    obj = model.objects.filter(**key).first()
    if obj is None:
        model.objects.create(**key, **values)
        report.created.append(label)
        return
    changed = {k: v for k, v in values.items() if getattr(obj, k) != v}
    if not changed:
        report.unchanged += 1
        return
    if in_use(obj):
        raise ApplicationError(
            f"{label} has already been used on bills and cannot be rewritten; "
            "add a new version with a later effective_on instead", field="effective_on")
    for k, v in changed.items():
        setattr(obj, k, v)
    obj.save()
    report.updated.append(label)
