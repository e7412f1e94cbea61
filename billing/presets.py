"""Billing's part of installing a preset: its rate schedules and fees, the rows bills point at.

The install (``ordinance.install``) checks the whole file with every table's reader, writes the dated sections,
then calls this step. Rate schedules and fees are versions keyed by their own effective date: a new date adds a
version; an existing date may be edited only while no bill has used it (a clerk corrects a sample before billing),
otherwise the change is refused and must be given a new effective date — history is never rewritten.
"""

from decimal import Decimal

from djmoney.money import Money

from core.errors import ApplicationError
from ordinance.files import PresetFile
from ordinance.install import InstallReport, district_tables, jsonable
from ordinance.preview import PreviewTable
from ordinance.selectors import districts, section_params

from .fees import rule_for
from .models import Bill, Fee, RateSchedule
from .ordinance import district_schedules
from .preview import bills_preview


def rates_and_fees_install(file: PresetFile, report: InstallReport) -> None:
    """The file's ``[[rate_schedule]]`` and ``[[fee]]`` versions, the installation's and each district's (already
    checked by their readers)."""
    for district, tables in district_tables(file.data):
        for schedule in tables.get("rate_schedule", []):
            effective_on = schedule["effective_on"]
            rules = jsonable({k: v for k, v in schedule.items() if k not in ("effective_on", "citation", "sample")})
            values = {"citation": schedule["citation"], "is_sample": schedule.get("sample", False), "rules": rules}
            whose = f"district {district} " if district else ""
            _upsert_version(RateSchedule, {"district": district, "effective_on": effective_on}, values, report,
                            label=f"{whose}rate schedule {effective_on}", in_use=lambda obj: obj.bills.exists())

    for district, tables in district_tables(file.data):
        for fee in tables.get("fee", []):
            by_size = {str(size): str(amount) for size, amount in fee.get("by_size", {}).items()}
            values = {
                "description": fee["description"], "citation": fee["citation"], "note": fee.get("note", ""),
                "amount": Money(Decimal(fee["amount"]), "USD") if "amount" in fee else None,
                "rate": Decimal(fee["rate"]) if "rate" in fee else None,
                "by_size": by_size, "params": jsonable(fee.get("params", {})),
                "rule": rule_for(amount=fee.get("amount"), rate=fee.get("rate"), by_size=by_size,
                                 rule=fee.get("rule")),
            }
            whose = f"district {district} " if district else ""
            _upsert_version(Fee, {"code": fee["code"], "district": district, "effective_on": fee["effective_on"]},
                            values, report, label=f"{whose}fee {fee['code']} {fee['effective_on']}",
                            in_use=lambda obj: False)


def preset_bills_preview(data: dict | None) -> list[PreviewTable]:
    """What the preset's tables (``data``, a checked file's) or the installed preset's would bill."""
    if data is None:
        town = districts()
        data = {**_installed_tables(""), "district": [
            {"code": code, "name": district.name, "citation": district.citation, **_installed_tables(code)}
            for code, district in town.items()]}
    return bills_preview(data)


def _installed_tables(district: str) -> dict:
    """The installed tables a bill reads in ``district`` (its own, else the installation's)."""
    schedules = district_schedules(district)
    return {"calendar": section_params("calendar", district=district),
            "penalty": section_params("penalty", district=district),
            "sewer": section_params("sewer", district=district),
            "rate_schedule": [{**row.rules, "effective_on": row.effective_on.isoformat(), "citation": row.citation}
                              for row in schedules.order_by("effective_on")]}


def bills_issued_guard() -> str:
    """Why the installed rules already bear on the past: bills have been issued under them (or "")."""
    count = Bill.objects.count()
    return f"{count:,} bill{'s' if count != 1 else ''} issued" if count else ""


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
