"""A rate schedule's rules and a fee's terms as tables a clerk reads, not JSON.

``schedule_tables`` lays out ``RateSchedule.rules`` (the preset's ``[[rate_schedule]]``, the shape
``billing.rating.Schedule.from_rules`` reads): per-bill minimums with their allowances and the blocks above
them, by category; the monthly bills' annual minimums by meter size and the excess rate; the nonprofit rule;
the sprinkler charges by supply size; each with its citation. ``schedule_summary`` is the list's one line.
``fee_tables`` does the same for a fee's ``by_size`` and ``params``. Pure: plain data in, plain rows out.

An ``owrs`` schedule (``billing.owrs.structure``) is laid out per customer class: its parts in order, each as a
clerk reads it (a map by meter size as its values, tiers as "from 15 ccf: $4.29"), then which class bills
which category, and the nonprofit and sprinkler tables of its ``waterbilling`` section as above.
"""

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from core.money import fmt_dollars, fmt_gallons, fmt_rate

CATEGORIES = {"one_two_family": "One- and two-family use", "other": "All other uses",
              "nonprofit": "Nonprofit organization"}


@dataclass(frozen=True)
class RuleTable:
    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


def _dollars(value) -> str:
    try:
        return fmt_dollars(Decimal(str(value)))
    except (InvalidOperation, ValueError):
        return str(value)


def _per_1000(value) -> str:
    try:
        return f"${fmt_rate(Decimal(str(value)))} per 1,000 gal"
    except (InvalidOperation, ValueError):
        return str(value)


def _gal(value) -> str:
    try:
        return f"{fmt_gallons(int(value))} gal"
    except (TypeError, ValueError):
        return str(value)


def _inches(size) -> str:
    return f'{size}"'


def category_words(category: str) -> str:
    return CATEGORIES.get(category, category.replace("_", " ").capitalize())


def schedule_tables(rules: dict) -> list[RuleTable]:
    if rules.get("structure") == "owrs":
        return _owrs_tables(rules)
    tables = []
    per_bill = rules.get("per_bill") or {}
    if per_bill:
        minimums, blocks = [], []
        for category, spec in per_bill.items():
            minimum = spec.get("minimum", {})
            allowance = int(minimum.get("allowance_gallons", 0) or 0)
            minimums.append([category_words(category), _dollars(minimum.get("amount", "0")), _gal(allowance),
                             minimum.get("citation", "")])
            lower = allowance
            for block in spec.get("blocks", []):
                upper = block.get("up_to_gallons")
                gallons = (f"over {fmt_gallons(lower)} to {fmt_gallons(upper)} gal" if upper is not None
                           else f"over {fmt_gallons(lower)} gal")
                blocks.append([category_words(category), gallons, _per_1000(block.get("per_1000", "0")),
                               block.get("citation", "")])
                if upper is not None:
                    lower = upper
        tables.append(RuleTable("Minimum charge per bill, by category",
                                ["Category", "Minimum charge", "Includes", "Citation"], minimums,
                                ["Each bill of an account not billed monthly: the minimum charge covers the "
                                 "gallons it includes; the gallons above are charged by the blocks below."]))
        tables.append(RuleTable("Rates above the minimum, by category",
                                ["Category", "Gallons on the bill", "Rate", "Citation"], blocks))
    monthly = rules.get("monthly") or {}
    if monthly:
        rows = [[_inches(m.get("size", "")), _dollars(m.get("amount", "0")), _gal(m.get("allowance_gallons", 0))]
                for m in monthly.get("annual_minimum", [])]
        notes = [f"Gallons above the year's allowance: {_per_1000(monthly.get('excess_per_1000', '0'))}."]
        if monthly.get("citation"):
            notes.append(f"Citation: {monthly['citation']}.")
        tables.append(RuleTable("Monthly bills: annual minimum by meter size",
                                ["Meter size", "Annual minimum", "Allowance for the billable year"], rows,
                                ["Charged on the first bill of the billable year; the allowance is used up over "
                                 "the year.", *notes]))
    nonprofit = rules.get("nonprofit")
    if nonprofit:
        tables.append(RuleTable("Nonprofit organizations: large monthly use",
                                ["A month of at least", "Rate", "At least that month", "Citation"],
                                [[_gal(nonprofit.get("threshold_gallons", 0)),
                                  _per_1000(nonprofit.get("per_1000", "0")),
                                  _dollars(nonprofit.get("monthly_minimum", "0")), nonprofit.get("citation", "")]]))
    sprinkler = rules.get("sprinkler") or {}
    if sprinkler.get("annual_by_supply_inches"):
        tables.append(RuleTable("Sprinkler service: annual charge by supply pipe",
                                ["Supply pipe", "Annual charge"],
                                [[_inches(size), _dollars(amount)]
                                 for size, amount in sprinkler["annual_by_supply_inches"].items()],
                                ["Billed on the first bill of the billable year.",
                                 *([f"Citation: {sprinkler['citation']}."] if sprinkler.get("citation") else [])]))
    known = {"per_bill", "monthly", "nonprofit", "sprinkler", "structure", "note"}
    other = {k: v for k, v in rules.items() if k not in known}
    if other:
        tables.append(RuleTable("Other terms", ["Term", "Value"], terms_rows(other)))
    return tables


def schedule_summary(rules: dict) -> str:
    """One line: each category's minimum and what it includes, and the monthly bills' sizes; for an OWRS
    schedule, its classes and what each bills."""
    if rules.get("structure") == "owrs":
        mapped = rules.get("class_map") or {}
        classes = list(_owrs_file(rules).classes) if rules.get("owrs") else []
        if not classes:
            return "—"
        return "OWRS: " + "; ".join(f"{cls} bills {mapped[cls]}" if cls in mapped else f"{cls} (accounts naming it)"
                                    for cls in classes)
    parts = []
    for category, spec in (rules.get("per_bill") or {}).items():
        minimum = spec.get("minimum", {})
        rates = ", ".join(_per_1000(b.get("per_1000", "0")).replace(" per 1,000 gal", "")
                          for b in spec.get("blocks", []))
        parts.append(f"{category_words(category)}: {_dollars(minimum.get('amount', '0'))} for "
                     f"{_gal(minimum.get('allowance_gallons', 0))}, then {rates} per 1,000 gal")
    sizes = (rules.get("monthly") or {}).get("annual_minimum", [])
    if sizes:
        parts.append(f"monthly bills: annual minimums for {len(sizes)} meter sizes")
    return "; ".join(parts) or "—"


def terms_rows(params: dict, prefix: str = "") -> list[list[str]]:
    """A fee's (or any rule's) terms as (term, value) rows: nested tables flattened, lists joined."""
    rows = []
    for key, value in params.items():
        name = f"{prefix}{key.replace('_', ' ')}"
        if isinstance(value, dict):
            rows.extend(terms_rows(value, prefix=f"{name}: "))
        elif isinstance(value, list):
            rows.append([name, ", ".join(str(v) for v in value)])
        elif isinstance(value, bool):
            rows.append([name, "yes" if value else "no"])
        else:
            rows.append([name, str(value)])
    return rows


def fee_tables(*, by_size: dict, params: dict) -> list[RuleTable]:
    tables = []
    if by_size:
        tables.append(RuleTable("By size", ["Size", "Amount"],
                                [[_inches(size), _dollars(amount)] for size, amount in by_size.items()]))
    if params:
        tables.append(RuleTable("Terms", ["Term", "Value"], terms_rows(params)))
    return tables


# --- OWRS schedules -----------------------------------------------------------------------------------------

TIER_PARTS = (("tier_starts", "tier_prices", "Tiers"), ("sewer_tier_starts", "sewer_tier_prices", "Sewer tiers"))


def _owrs_file(rules: dict):
    from .owrs import OwrsFile

    return OwrsFile.from_json(rules["owrs"])


def _owrs_tables(rules: dict) -> list[RuleTable]:
    file = _owrs_file(rules)
    cited = (file.extra.get("class_citations") or {})
    tables = []
    for cls, parts in file.classes.items():
        values = {part.name: part.value for part in parts}
        in_gallons = str(values.get("tier_usage", "")) == "usage_gal"
        combined = {prices: (starts, title) for starts, prices, title in TIER_PARTS
                    if starts in values and prices in values}
        shown_with_prices = {starts for starts, _ in combined.values()}
        rows = []
        for part in parts:
            if part.name in shown_with_prices:
                continue
            citation = (cited.get(cls) or {}).get(part.name) or file.citation_for(part.name)
            if part.name in combined:
                starts, title = combined[part.name]
                rows.append([f"{title} ({starts}, {part.name})", _tiers(values[starts], part.value, in_gallons),
                             citation])
            else:
                rows.append([part.name, _owrs_value(part.value), citation])
        tables.append(RuleTable(f"Customer class {cls}", ["Part", "Value", "Citation"], rows,
                                ["Parts are worked out in this order; the bill is the sum its last part names.",
                                 "Tiers count gallons." if in_gallons else "Tiers count hundreds of cubic feet "
                                 "(ccf; 1 ccf = 748.052 gal)."]))
    mapped = rules.get("class_map") or {}
    rows = [[cls, mapped.get(cls, "accounts whose rate fields name it (cust_class)")] for cls in file.classes]
    tables.append(RuleTable("Which class bills which accounts", ["Customer class", "Bills"], rows,
                            ["category@frequency bills the category's bills of that frequency only; an account "
                             "whose rate fields name a class (cust_class) is billed by it."]))
    extra_rules = {name: file.extra[name] for name in ("nonprofit", "sprinkler") if file.extra.get(name)}
    if extra_rules:
        tables.extend(schedule_tables({"structure": "minimum_and_blocks", **extra_rules}))
    return tables


def _owrs_value(value) -> str:
    if isinstance(value, dict) and "values" in value:
        on = value.get("depends_on")
        on = " and ".join(on) if isinstance(on, list) else str(on)
        return f"by {on}: " + "; ".join(f"{key}: {_owrs_value(item)}" for key, item in value["values"].items())
    if isinstance(value, list):
        return ", ".join(_owrs_value(item) for item in value)
    return str(value)


def _tiers(starts, prices, in_gallons: bool) -> str:
    """'from 0 ccf: $2.87; from 15 ccf: $4.29', per key of a map; starts and prices that depend on different
    fields, per pair of their keys ('3" · POTABLE: …')."""
    def keyed(value) -> dict:
        return value.get("values") if isinstance(value, dict) else {"": value}

    def depends(value):
        return value.get("depends_on") if isinstance(value, dict) else None

    by_starts, by_prices = keyed(starts), keyed(prices)
    if depends(starts) is None and depends(prices) is None:
        return _tier_list(starts, prices, in_gallons)
    if depends(starts) == depends(prices):
        pairs = [(key, by_starts.get(key), by_prices.get(key))
                 for key in dict.fromkeys([*by_starts, *by_prices])]
    else:
        pairs = [(" · ".join(filter(None, (s_key, p_key))), row_starts, row_prices)
                 for s_key, row_starts in by_starts.items() for p_key, row_prices in by_prices.items()]
    return " | ".join(f"{key}: {_tier_list(row_starts, row_prices, in_gallons)}" for key, row_starts, row_prices
                      in pairs)


def _tier_list(starts, prices, in_gallons: bool) -> str:
    if not isinstance(starts, list) or not isinstance(prices, list) or len(starts) != len(prices):
        return f"starts {_owrs_value(starts)}; prices {_owrs_value(prices)}"
    out = []
    for start, price in zip(starts, prices, strict=True):
        try:
            if in_gallons:
                out.append(f"from {fmt_gallons(int(Decimal(str(start))))} gal: "
                           f"{_per_1000(Decimal(str(price)).scaleb(3))}")
            else:
                out.append(f"from {start} ccf: ${fmt_rate(Decimal(str(price)))}")
        except (InvalidOperation, ValueError):
            out.append(f"from {start}: {price}")
    return "; ".join(out)
