"""A rate schedule written out as an Open Water Rate Specification file (``export_rates --format owrs``).

An ``owrs`` schedule gives back its own file, with the schedule's date, citation and class map. A
``minimum_and_blocks`` schedule is written as classes that bill the same cents:

* one per-bill class per category of ``per_bill`` (``ONE_TWO_FAMILY``, ``OTHER``): its blocks count gallons
  (``tier_usage: usage_gal``); ``minimum_charge`` is the category's minimum; the tiers start at 0 (the
  allowance, at $0), then at the allowance + 1 and each block's bound + 1, priced per gallon (the per-1,000
  rate / 1,000, exact); a category with no rates of its own falls in ``other``, as billing.rating has it;
* ``MONTHLY`` for every category billed monthly: the annual minimum and its allowance by meter size, the
  minimum only while the year's is not charged, and the gallons by which the year's use newly passes the
  allowance at the excess rate (§ 45.29 C);
* the nonprofit rule and the sprinkler charges, and the class map, in the ``waterbilling`` section.

The file is written as YAML text and read back with ``owrs.parse``, so what it holds is what an import of
it would hold.
"""

import json
from dataclasses import replace
from datetime import date
from decimal import Decimal

from accounts.models import Account
from ordinance.selectors import installed_utility

from .. import owrs
from ..models import RateSchedule

NOTE = ("Written from a rate schedule of the billing system. The waterbilling section is the billing system's "
        "own: which class bills which category (class_map, category@frequency for one frequency), the citations "
        "that differ from class to class, the nonprofit large-month rule, the sprinkler service charges, and "
        "sample: true when the values are a sample a clerk replaces with the adopted ones; other OWRS readers "
        "ignore it.")


def to_owrs(rules: dict, *, effective_on: date, utility_name: str) -> owrs.OwrsFile:
    """The schedule as an OWRS file (above)."""
    if rules.get("structure") == "owrs":
        found = owrs.OwrsFile.from_json(rules["owrs"])
        metadata = {**found.metadata, "effective_date": effective_on.isoformat()}
        if rules.get("citation"):
            metadata["citation"] = rules["citation"]
        extra = dict(found.extra)
        if rules.get("class_map"):
            # In the file's order of classes (the stored map's keys may come back in another).
            stored = rules["class_map"]
            extra["class_map"] = {**{cls: stored[cls] for cls in found.classes if cls in stored}, **stored}
        return replace(found, metadata=metadata, extra=extra)
    return owrs.parse(_schedule_text(rules, effective_on=effective_on, utility_name=utility_name))


def export_text(schedule: RateSchedule, *, utility_name: str = "") -> str:
    """The schedule's OWRS text, as ``owrs.dump`` writes it."""
    if not utility_name:
        utility = installed_utility()
        utility_name = utility.name if utility else ""
    rules = {**schedule.rules, "citation": schedule.rules.get("citation") or schedule.citation}
    found = to_owrs(rules, effective_on=schedule.effective_on, utility_name=utility_name)
    # Sample values stay sample values: imported back, they still wait for a clerk to accept them.
    extra = {key: value for key, value in found.extra.items() if key != "sample"}
    if schedule.is_sample:
        extra["sample"] = True
    return owrs.dump(replace(found, extra=extra))


def _per_gallon(per_1000) -> Decimal:
    return Decimal(str(per_1000)).scaleb(-3)


def _schedule_text(rules: dict, *, effective_on: date, utility_name: str) -> str:
    citation = rules.get("citation", "")
    classes: dict[str, list[tuple[str, object]]] = {}
    class_map: dict[str, list[str]] = {}
    cited: dict[str, dict[str, str]] = {}

    per_bill = rules.get("per_bill") or {}
    for category, spec in per_bill.items():
        minimum, blocks = spec["minimum"], spec["blocks"]
        allowance = int(minimum["allowance_gallons"])
        starts, prices = [0, allowance + 1], [Decimal(0)]
        for block in blocks:
            prices.append(_per_gallon(block["per_1000"]))
            if block.get("up_to_gallons") is not None:
                starts.append(int(block["up_to_gallons"]) + 1)
        if len(starts) > len(prices):  # the last block has a bound: nothing is charged above it
            prices.append(Decimal(0))
        cls = category.upper()
        classes[cls] = [("tier_usage", _Raw("usage_gal")), ("minimum_charge", Decimal(minimum["amount"])),
                        ("tier_starts", starts), ("tier_prices", prices), ("commodity_charge", _Raw("Tiered")),
                        ("bill", "minimum_charge + commodity_charge")]
        block_citations = list(dict.fromkeys(block["citation"] for block in blocks if block.get("citation")))
        cited[cls] = {"minimum_charge": minimum.get("citation", ""), "commodity_charge": "; ".join(block_citations)}
        class_map[cls] = [category]
    if "other" in per_bill:
        for category in Account.Category.values:
            if category not in per_bill:
                class_map["OTHER"].append(category)

    monthly = rules.get("monthly") or {}
    if monthly.get("annual_minimum"):
        sizes = monthly["annual_minimum"]
        excess = _per_gallon(monthly.get("excess_per_1000", "0"))
        classes["MONTHLY"] = [
            ("annual_minimum", {"depends_on": "meter_size",
                                "values": {f'{m["size"]}"': Decimal(m["amount"]) for m in sizes}}),
            ("allowance_gal", {"depends_on": "meter_size",
                               "values": {f'{m["size"]}"': int(m["allowance_gallons"]) for m in sizes}}),
            ("minimum_charge", "annual_minimum * (1 - annual_minimum_charged)"),
            ("excess_gal", "max(0, year_usage_gal + usage_gal - allowance_gal) - max(0, year_usage_gal - "
                           "allowance_gal)"),
            ("commodity_charge", f"excess_gal * {excess:f}"),
            ("bill", "minimum_charge + commodity_charge")]
        cited["MONTHLY"] = {"minimum_charge": monthly.get("citation", ""),
                            "commodity_charge": monthly.get("citation", "")}
        class_map["MONTHLY"] = [f"{category}@monthly" for category in Account.Category.values]

    # A part's citation goes in metadata.citations when every class gives it the same one; the rest by class.
    common: dict[str, str] = {}
    for part in dict.fromkeys(part for parts in cited.values() for part in parts):
        found = {parts[part] for parts in cited.values() if part in parts}
        if len(found) == 1 and len([1 for parts in cited.values() if part in parts]) == len(cited):
            common[part] = found.pop()
    by_class = {cls: {part: text for part, text in parts.items() if part not in common and text}
                for cls, parts in cited.items()}
    by_class = {cls: parts for cls, parts in by_class.items() if parts}

    metadata = {"effective_date": effective_on.isoformat(), "utility_name": utility_name, "citation": citation,
                "note": NOTE}
    if common:
        metadata["citations"] = {part: text for part, text in common.items() if text}
    extra: dict[str, object] = {"class_map": {cls: ", ".join(targets) for cls, targets in class_map.items()}}
    if by_class:
        extra["class_citations"] = by_class
    for name in ("nonprofit", "sprinkler"):
        if rules.get(name):
            extra[name] = rules[name]
    if rules.get("note"):
        extra["note"] = rules["note"]

    out = ["metadata:\n", *_mapping(metadata, 1), "rate_structure:\n"]
    for cls, parts in classes.items():
        out.append(f"  {cls}:\n")
        for name, value in parts:
            out.extend(_list_item(name, value, 2))
    out.append("waterbilling:\n")
    out.extend(_mapping(extra, 1))
    return "".join(out)


class _Raw(str):
    """A word written bare (a rate type, a field name), not as a quoted string."""


def _scalar(value) -> str:
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return f"{value:f}"
    # JSON's double-quoted strings are YAML's too.
    return json.dumps(str(value), ensure_ascii=False)


def _mapping(data: dict, depth: int) -> list[str]:
    pad, out = "  " * depth, []
    for key, value in data.items():
        out.extend(_entry(f"{pad}{_scalar(str(key)) if _needs_quotes(key) else key}:", value, depth))
    return out


def _entry(head: str, value, depth: int) -> list[str]:
    if isinstance(value, dict):
        return [f"{head}\n", *_mapping(value, depth + 1)] if value else [f"{head} {{}}\n"]
    if isinstance(value, list):
        return [f"{head} [{', '.join(_scalar(v) for v in value)}]\n"]
    return [f"{head} {_scalar(value)}\n"]


def _list_item(name: str, value, depth: int) -> list[str]:
    return _entry(f"{'  ' * depth}- {name}:", value, depth + 1)


def _needs_quotes(key) -> bool:
    text = str(key)
    return not text.replace("_", "").replace("@", "").isalnum()
