"""Open Water Rate Specification (OWRS) files: read, check, write and rate, with no database.

Design overview
---------------
An OWRS file (the California Data Collaborative's YAML format for water rates) gives, per customer class,
an ordered list of named *parts*: numbers, formulas, tier lists, maps keyed by a field of the account
(``depends_on`` + ``values``), and for ``commodity_charge`` / ``sewer_charge`` a rate type (``Tiered``,
``Budget``, ``Uniform``). ``bill`` is the formula of the bill. This module reproduces the reference
calculator, RateParser, exactly:

* ``parse`` reads the file's text into an ``OwrsFile`` (frozen; ``to_json``/``from_json`` for storage in a
  rate schedule) and checks every class statically: a file that would fail on some bill is refused as a
  whole, with the line and the part, before any bill is rated with it.
* ``bill`` rates one bill of a class from its facts (usage, meter size, the account's fields). A class's
  parts are evaluated in file order, each reading only the parts before it and the facts.
* ``dump`` writes the canonical text: ``parse(dump(f)) == f`` and a second dump is byte-identical.

Interpretations:
* Numbers are read from the file's text, never through a float: ``4.07`` is exactly 407/100, and all
  arithmetic is on ``Fraction``. 1 ccf is exactly 748.052 gallons.
* Usage in tiers follows RateParser's ``get_usage_in_tiers``: a tier start is the first unit billed in the
  tier, so starts 0, 15, 21, 26 put 14, 6, 5 and the rest of 27.3 ccf in the four tiers. Budget tier
  starts (numbers, names, or percentages of ``budget``) are rounded up to a whole unit first.
* Each bill line's amount is its exact quantity times its price, rounded once, half away from zero, to
  the cent; the bill's total is the sum of its lines. A formula that reads a Tiered part sees the part's
  exact (unrounded) total.
* ``bill`` written as a sum or difference of part names gives one group of lines per term, in order, a
  subtracted term's amounts negated; any other bill formula gives one line for the whole bill. A tier
  with no usage gives no line; a tier with usage at $0 does, and so does every fixed or formula part the
  bill names, even at $0.00.
* Meter-size keys are written with an inch mark (``5/8"``); keys are compared with a trailing ``"``
  dropped, whitespace collapsed and numbers written plainly, so ``5/8"`` matches the meter size "5/8".
* ``tier_usage: <field>`` (ours) makes a class's tiers count that field instead of ``usage_ccf`` (the
  Mineola export counts gallons with ``tier_usage: usage_gal``); ``Uniform`` (``price``) is one line.
"""

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import yaml

from core.errors import ApplicationError, FieldError
from core.money import CENT, fmt_rate

from . import expressions
from .expressions import ExpressionError

__all__ = ["ACCOUNT_FIELDS", "CCF_GALLONS", "ENGINE_FIELDS", "Charge", "OwrsError", "OwrsFile", "Part", "bill",
           "dump", "parse"]

CCF_GALLONS = Decimal("748.052")
_CCF_GALLONS = Fraction(CCF_GALLONS)

# Fields our engine supplies for every bill (a formula may read them without the file defining them).
ENGINE_FIELDS: dict[str, str] = {
    "usage_ccf": "the bill's consumption in hundreds of cubic feet",
    "usage_gal": "the bill's consumption in gallons",
    "meter_size": "the meter's size",
    "cust_class": "the customer class",
    "bill_frequency": "monthly, semiannual, …",
    "year_usage_gal": "gallons earlier bills of the same frequency in the billable year counted",
    "annual_minimum_charged": "1 when an earlier bill of the billable year charged the year's minimum, else 0",
    "first_bill_of_year": "1 on the first bill of the billable year, else 0",
}
# Fields an account may carry (Account.rate_fields) for budget-based structures.
ACCOUNT_FIELDS: dict[str, str] = {
    "water_type": "POTABLE or RECYCLED",
    "hhsize": "persons in the household",
    "irrigable_area": "irrigable area, square feet",
    "irr_area": "irrigable area, square feet",
    "et_amount": "evapotranspiration in the billing period, inches",
    "cust_class": "the account's OWRS class",
}

RATE_TYPES = ("Tiered", "Budget", "Uniform")
RATE_PARTS = ("commodity_charge", "sewer_charge")
PRICE_PARTS = ("tier_prices", "sewer_tier_prices", "price", "sewer_price")
PRICE_DECIMALS = 6  # BillLine.rate is numeric(12, 6)
_DEFAULT_PROVIDED = tuple(dict.fromkeys([*ENGINE_FIELDS, *ACCOUNT_FIELDS]))

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")
_PERCENT = re.compile(r"\s*(\d+(\.\d*)?|\.\d+)\s*%\s*")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_STR_TAG = "tag:yaml.org,2002:str"
_HEADER = ("# Open Water Rate Specification (OWRS) file. Usage is in ccf (hundreds of cubic feet) "
           "unless a class sets tier_usage.")


class OwrsError(ApplicationError):
    """A rate file or a bill that cannot be read or rated; ``line`` is the file's 1-based line, when known."""

    def __init__(self, message: str, *, field: str, line: int | None = None):
        self.message = f"line {line}: {message}" if line is not None else message
        self.field = field
        self.line = line
        # The field error names its field itself: a message that starts with it is not to say it twice.
        detail = message.removeprefix(f"{field}: ")
        super().__init__(self.message, errors=[FieldError(field=field, message=detail, line=line)])


@dataclass(frozen=True)
class Part:
    name: str
    value: object  # str, list of str, or {"depends_on": [...], "values": {key: str or list of str}}
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Charge:
    kind: str  # service, minimum, consumption, sewer, charge
    part: str
    description: str
    quantity: Decimal
    rate: Decimal
    amount: Decimal


@dataclass(frozen=True)
class OwrsFile:
    metadata: dict
    classes: dict[str, tuple[Part, ...]]
    extra: dict

    def needs(self, cls: str) -> list[str]:
        """The data fields class ``cls`` reads and does not define, sorted."""
        parts = _class_parts(self, cls)
        defined = {p.name for p in parts}
        found: set[str] = set()
        for part in parts:
            found.update(name for name, _ in _reads(part, parts))
        return sorted(found - defined)

    def to_json(self) -> dict:
        """The file as JSON for ``RateSchedule.rules["owrs"]``, every mapping kept in the file's order: a
        database may store a JSON object's keys in an order of its own (PostgreSQL's ``jsonb`` does), and the
        file written back (``dump``) is to be the file read."""
        return {
            "metadata": _in_order(self.metadata),
            "classes": [[cls, [{"name": p.name, "value": _in_order(p.value)} for p in parts]]
                        for cls, parts in self.classes.items()],
            "extra": _in_order(self.extra),
        }

    @classmethod
    def from_json(cls, data: dict) -> "OwrsFile":
        try:
            stored = data["classes"]
            pairs = stored.items() if isinstance(stored, dict) else stored
            classes = {str(name): tuple(Part(name=str(p["name"]), value=_as_read(p["value"])) for p in parts)
                       for name, parts in pairs}
            return cls(metadata=dict(_as_read(data.get("metadata") or {})), classes=classes,
                       extra=dict(_as_read(data.get("extra") or {})))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise OwrsError(f"the stored rate file is not in the expected form ({exc!r})", field="owrs") from None

    def citation_for(self, part: str) -> str:
        citations = self.metadata.get("citations") or {}
        return str(citations.get(part) or self.metadata.get("citation") or "")


# A mapping in stored JSON: its items in order, as pairs.
_ORDERED = "__in_order__"


def _in_order(value):
    if isinstance(value, dict):
        return {_ORDERED: [[key, _in_order(item)] for key, item in value.items()]}
    if isinstance(value, list):
        return [_in_order(item) for item in value]
    return value


def _as_read(value):
    if isinstance(value, dict):
        if set(value) == {_ORDERED}:
            return {key: _as_read(item) for key, item in value[_ORDERED]}
        return {key: _as_read(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_read(item) for item in value]
    return value


# --- reading ----------------------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """Composes the node tree only; values are built from the nodes' text here (numbers never via float)."""


def _line(node) -> int:
    return node.start_mark.line + 1


def _dec_text(value: Decimal) -> str:
    if value == 0:
        return "0"
    return format(value.normalize(), "f")


def _scalar(node, where: str):
    """A scalar node's value: str, int, Decimal, bool, None, or an ISO date string."""
    tag = node.tag
    text = node.value
    if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        try:
            number = Decimal(text.replace("_", ""))
        except InvalidOperation:
            number = None
        if tag == "tag:yaml.org,2002:int":
            return int(number) if number is not None else _Loader("").construct_yaml_int(node)
        if number is None or not number.is_finite():
            raise OwrsError(f"{where} is {text}, which is not a number a rate file may use", field=where,
                            line=_line(node))
        return number
    if tag == "tag:yaml.org,2002:bool":
        return _Loader("").construct_yaml_bool(node)
    if tag == "tag:yaml.org,2002:null":
        return None
    if tag == "tag:yaml.org,2002:timestamp":
        return _Loader("").construct_yaml_timestamp(node).isoformat()
    if tag == _STR_TAG:
        return text
    raise OwrsError(f"{where} has the tag {tag}, which a rate file may not use", field=where, line=_line(node))


def _plain(node, where: str):
    """A JSON-able value (metadata, the waterbilling section): numbers with a fraction become strings."""
    if isinstance(node, yaml.ScalarNode):
        value = _scalar(node, where)
        return _dec_text(value) if isinstance(value, Decimal) else value
    if isinstance(node, yaml.SequenceNode):
        return [_plain(item, f"{where}[{i}]") for i, item in enumerate(node.value)]
    result = {}
    for key_node, value_node in node.value:
        key = _key_text(key_node, where)
        if key in result:
            raise OwrsError(f"{where}.{key} is given twice", field=f"{where}.{key}", line=_line(key_node))
        result[key] = _plain(value_node, f"{where}.{key}")
    return result


def _key_text(node, where: str) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise OwrsError(f"{where} has a key that is not a plain name or value", field=where, line=_line(node))
    return node.value


def _part_scalar(node, where: str) -> str:
    value = _scalar(node, where)
    if value is None or isinstance(value, bool):
        raise OwrsError(f"{where} is {node.value or 'empty'}; a part is a number, a formula, a list or a "
                        f"depends_on map", field=where, line=_line(node))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return _dec_text(value)
    return value


def _part_list(node, where: str) -> list[str]:
    items = []
    for item in node.value:
        if not isinstance(item, yaml.ScalarNode):
            raise OwrsError(f"{where} is a list whose items must be numbers or names", field=where,
                            line=_line(item))
        items.append(_part_scalar(item, where))
    return items


def _part_value(node, where: str, name: str, line: int):
    if isinstance(node, yaml.ScalarNode):
        return _part_scalar(node, where)
    if isinstance(node, yaml.SequenceNode):
        return _part_list(node, where)
    keys = {}
    for key_node, value_node in node.value:
        keys[_key_text(key_node, where)] = (key_node, value_node)
    if ("depends_on" in keys) != ("values" in keys):
        raise OwrsError(f"{where}: Each 'depends_on' clause must have a corresponding 'values' clause, and vice "
                        f"versa.", field=where, line=line)
    if set(keys) != {"depends_on", "values"}:
        raise OwrsError(f"{where} is a map, which must have exactly depends_on and values (it has "
                        f"{', '.join(keys) or 'nothing'})", field=where, line=line)
    depends_node = keys["depends_on"][1]
    if isinstance(depends_node, yaml.ScalarNode):
        depends = [_part_scalar(depends_node, f"{where}.depends_on")]
    elif isinstance(depends_node, yaml.SequenceNode):
        depends = _part_list(depends_node, f"{where}.depends_on")
    else:
        depends = []
    if not depends or not all(_NAME.fullmatch(d) for d in depends):
        raise OwrsError(f"{where}.depends_on must name a field, or list fields (it is {depends_node.value!r})",
                        field=where, line=_line(depends_node))
    values_node = keys["values"][1]
    if not isinstance(values_node, yaml.MappingNode):
        raise OwrsError(f"{where}.values must map each value of {'|'.join(depends)} to an amount or a list",
                        field=where, line=_line(values_node))
    values: dict[str, object] = {}
    normal: dict[str, str] = {}
    for key_node, value_node in values_node.value:
        key = _key_text(key_node, f"{where}.values")
        if key.count("|") != len(depends) - 1:
            raise OwrsError(f"{where}.values has the key {key}, but depends_on lists {len(depends)} field(s) "
                            f"({', '.join(depends)}); several fields' values are joined with \"|\"",
                            field=where, line=_line(key_node))
        norm = _norm_key(key)
        if norm in normal:
            raise OwrsError(f"{where}.values gives {key} twice (as {normal[norm]} and {key})", field=where,
                            line=_line(key_node))
        normal[norm] = key
        if isinstance(value_node, yaml.ScalarNode):
            values[key] = _part_scalar(value_node, f"{where}.values.{key}")
        elif isinstance(value_node, yaml.SequenceNode):
            values[key] = _part_list(value_node, f"{where}.values.{key}")
        else:
            raise OwrsError(f"{where}.values.{key} must be a number, a formula or a list", field=where,
                            line=_line(value_node))
    return {"depends_on": depends, "values": values}


def _class_nodes(cls: str, node) -> list[tuple[object, object]]:
    where = f"rate_structure.{cls}"
    if isinstance(node, yaml.MappingNode):
        return list(node.value)
    if isinstance(node, yaml.SequenceNode):
        pairs = []
        for item in node.value:
            if not isinstance(item, yaml.MappingNode) or len(item.value) != 1:
                raise OwrsError(f"{where} is a list whose every item must be one part (name: value)", field=where,
                                line=_line(item))
            pairs.append(item.value[0])
        return pairs
    raise OwrsError(f"{where} must be a mapping of parts or a list of one-key mappings", field=where,
                    line=_line(node))


def parse(text: str, *, provided: Iterable[str] = _DEFAULT_PROVIDED) -> OwrsFile:
    """Read an OWRS file and check every class; refuse (``OwrsError``) the whole file on any problem."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "unreadable"
        raise OwrsError(f"the file is not valid YAML: {problem}", field="file",
                        line=mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise OwrsError(f"the file is not valid YAML: {exc}", field="file") from None
    except RecursionError:
        raise OwrsError("the file nests lists or mappings more deeply than a rate file can", field="file") from None
    if not isinstance(root, yaml.MappingNode):
        raise OwrsError("the file must be a mapping with metadata and rate_structure", field="file",
                        line=_line(root) if root is not None else None)
    sections = {}
    for key_node, value_node in root.value:
        key = _key_text(key_node, "file")
        if key not in ("metadata", "rate_structure", "waterbilling"):
            raise OwrsError(f"{key} is not a section of an OWRS file (metadata, rate_structure, waterbilling)",
                            field=key, line=_line(key_node))
        if key in sections:
            raise OwrsError(f"{key} is given twice", field=key, line=_line(key_node))
        sections[key] = (key_node, value_node)

    metadata: dict = {}
    if "metadata" in sections:
        key_node, node = sections["metadata"]
        if not isinstance(node, yaml.MappingNode):
            raise OwrsError("metadata must be a mapping (effective_date, utility_name, …)", field="metadata",
                            line=_line(key_node))
        metadata = _plain(node, "metadata")
        _check_citations(metadata, line=_line(key_node))

    extra: dict = {}
    if "waterbilling" in sections:
        key_node, node = sections["waterbilling"]
        if not isinstance(node, yaml.MappingNode):
            raise OwrsError("waterbilling must be a mapping", field="waterbilling", line=_line(key_node))
        extra = _plain(node, "waterbilling")

    if "rate_structure" not in sections or not isinstance(sections["rate_structure"][1], yaml.MappingNode):
        line = _line(sections["rate_structure"][0]) if "rate_structure" in sections else None
        raise OwrsError("the file has no rate_structure mapping of customer classes", field="rate_structure",
                        line=line)
    provided = set(provided)
    classes: dict[str, tuple[Part, ...]] = {}
    for class_key, class_node in sections["rate_structure"][1].value:
        cls = _key_text(class_key, "rate_structure")
        if cls in classes:
            raise OwrsError(f"customer class {cls} is given twice", field=f"rate_structure.{cls}",
                            line=_line(class_key))
        parts: list[Part] = []
        seen: dict[str, int] = {}
        for key_node, value_node in _class_nodes(cls, class_node):
            name = _key_text(key_node, f"rate_structure.{cls}")
            where = f"rate_structure.{cls}.{name}"
            line = _line(key_node)
            if not _NAME.fullmatch(name):
                raise OwrsError(f"{where}: a part's name is a formula name (letters, digits and _, not starting "
                                f"with a digit)", field=where, line=line)
            if name in seen:
                raise OwrsError(f"{where} is defined twice in the class, on lines {seen[name]} and {line}",
                                field=where, line=line)
            seen[name] = line
            parts.append(Part(name=name, value=_part_value(value_node, where, name, line), line=line))
        classes[cls] = tuple(parts)
        _check_class(cls, classes[cls], provided, line=_line(class_key))
    return OwrsFile(metadata=metadata, classes=classes, extra=extra)


def _check_citations(metadata: dict, *, line: int) -> None:
    if "citation" in metadata and not isinstance(metadata["citation"], str):
        raise OwrsError("metadata.citation must be text", field="metadata", line=line)
    citations = metadata.get("citations")
    if citations is not None and not (isinstance(citations, dict)
                                      and all(isinstance(v, str) for v in citations.values())):
        raise OwrsError("metadata.citations must map part names to their citations", field="metadata", line=line)


# --- static checks ----------------------------------------------------------------------------------------


def _is_rate_part(part: Part) -> bool:
    return part.name in RATE_PARTS and part.value in RATE_TYPES


def _prefix(name: str) -> str:
    return "sewer_" if name == "sewer_charge" else ""


def _formula_names(text: str) -> list[str]:
    return [] if _PERCENT.fullmatch(text) else expressions.names(text)


def _reads(part: Part, parts: tuple[Part, ...]) -> list[tuple[str, str]]:
    """(name, why) for every name ``part`` reads, in order."""
    value = part.value
    if part.name == "tier_usage" and isinstance(value, str):
        return [(value, "tier_usage counts it")]
    if _is_rate_part(part):
        prefix = _prefix(part.name)
        why = f"{part.name} is {value}"
        needed = ([f"{prefix}price"] if value == "Uniform" else [f"{prefix}tier_starts", f"{prefix}tier_prices"])
        if value == "Budget":
            needed.append(f"{prefix}budget")
        if not any(p.name == "tier_usage" for p in parts):
            needed.append("usage_ccf")
        else:
            needed.append("tier_usage")
        return [(name, why) for name in needed]
    if isinstance(value, dict):
        found = [(d, f"{part.name} depends on it") for d in value["depends_on"]]
        for entry in value["values"].values():
            for text in entry if isinstance(entry, list) else [entry]:
                found += [(n, f"{part.name} reads it") for n in _formula_names(text)]
        return found
    if isinstance(value, list):
        return [(n, f"{part.name} reads it") for text in value for n in _formula_names(text)]
    return [(n, f"{part.name} reads it") for n in _formula_names(value)]


def _check_class(cls: str, parts: tuple[Part, ...], provided: set[str], *, line: int) -> None:
    index = {p.name: p for p in parts}
    position = {p.name: i for i, p in enumerate(parts)}
    fields = ", ".join(sorted(provided))
    for i, part in enumerate(parts):
        where = f"rate_structure.{cls}.{part.name}"
        _check_shape(cls, part, where)
        if _is_rate_part(part) and part.value != "Uniform":
            prefix = _prefix(part.name)
            starts, prices = f"{prefix}tier_starts", f"{prefix}tier_prices"
            if not (starts in index or starts in provided) or not (prices in index or prices in provided):
                raise OwrsError(f"Either {starts} or {prices} is not present in the OWRS file for customer class "
                                f"{cls} ({part.name} is {part.value})", field=where, line=part.line)
        if part.name in RATE_PARTS and isinstance(part.value, str) and _NAME.fullmatch(part.value) \
                and part.value not in RATE_TYPES and part.value not in index and part.value not in provided:
            raise OwrsError(f"{where} is {part.value}; a rate type is Tiered, Budget or Uniform (or write a formula, "
                            f"e.g. 2.1*usage_ccf)", field=where, line=part.line)
        for name, why in _reads(part, parts):
            earlier = name in position and position[name] < i
            if earlier or name in provided:
                continue
            if name in position:
                later = index[name]
                what = f"is {part.value}" if _is_rate_part(part) else f"reads {name}"
                if later is part:
                    raise OwrsError(f"{where} reads itself", field=where, line=part.line)
                raise OwrsError(f"{where} {what}, but {name} is defined later, on line {later.line}; a class's "
                                f"parts are evaluated in order, so it must come before {part.name}", field=where,
                                line=part.line)
            raise OwrsError(f"{name} is not present in the OWRS file for customer class {cls} ({why}), and it is "
                            f"not a field of an account (fields: {fields})", field=where, line=part.line)
        if _is_rate_part(part) and part.value != "Uniform":
            _check_tiers(cls, part, index)
    if "bill" not in index:
        raise OwrsError(f"customer class {cls} has no bill: the class must give bill, the formula of its charges "
                        f"(e.g. bill: commodity_charge + service_charge)", field=f"rate_structure.{cls}", line=line)


def _check_shape(cls: str, part: Part, where: str) -> None:
    value = part.value
    texts: list[str] = []
    if isinstance(value, dict):
        for entry in value["values"].values():
            texts += entry if isinstance(entry, list) else [entry]
    elif isinstance(value, list):
        texts = value
    else:
        texts = [value]
    for text in texts:
        if _PERCENT.fullmatch(text) or (_is_rate_part(part)):
            continue
        try:
            expressions.names(text)
        except ExpressionError as exc:
            raise OwrsError(f"{where}: the formula {text!r} cannot be read: {exc}", field=where,
                            line=part.line) from None
    if part.name in PRICE_PARTS:
        for text in texts:
            if _NUMBER.fullmatch(text) and -Decimal(text).normalize().as_tuple().exponent > PRICE_DECIMALS:
                raise OwrsError(f"{where} has the price {text}, with more than {PRICE_DECIMALS} decimal places",
                                field=where, line=part.line)
    if part.name == "tier_usage" and not (isinstance(value, str) and _NAME.fullmatch(value)):
        raise OwrsError(f"{where} must name the field the tiers count (e.g. usage_gal)", field=where,
                        line=part.line)
    if part.name == "bill" and not isinstance(value, str):
        raise OwrsError(f"{where} must be a formula of the class's charges", field=where, line=part.line)


def _tier_variants(cls: str, part: Part, name: str, owner: Part) -> list[tuple[str, list[str]]]:
    """(which key, list) for each list a tier part can give: one for a list, one per key for a map."""
    where = f"rate_structure.{cls}.{name}"
    value = part.value
    if isinstance(value, list):
        variants = [("", value)]
    elif isinstance(value, dict) and all(isinstance(v, list) for v in value["values"].values()):
        fields = "|".join(value["depends_on"])
        variants = [(f" for {fields} {key}", entry) for key, entry in value["values"].items()]
    else:
        raise OwrsError(f"{where} must be a list (or a depends_on map giving a list per key), since "
                        f"{owner.name} is {owner.value}", field=where, line=part.line)
    for key, entry in variants:
        if not entry:
            raise OwrsError(f"{where}{key} lists no tiers", field=where, line=part.line)
    return variants


def _check_tiers(cls: str, part: Part, index: dict[str, Part]) -> None:
    prefix = _prefix(part.name)
    starts_name, prices_name = f"{prefix}tier_starts", f"{prefix}tier_prices"
    if starts_name not in index or prices_name not in index:
        return  # supplied as data fields; checked when the bill is rated
    starts = _tier_variants(cls, index[starts_name], starts_name, part)
    prices = _tier_variants(cls, index[prices_name], prices_name, part)
    for key, entry in starts:
        if part.value == "Tiered" and any(_PERCENT.fullmatch(text) for text in entry):
            raise OwrsError(f"rate_structure.{cls}.{starts_name}{key} has a percentage, which is a share of the "
                            f"budget: {part.name} must then be Budget, not Tiered",
                            field=f"rate_structure.{cls}.{starts_name}", line=index[starts_name].line)
    for s_key, s_list in starts:
        for p_key, p_list in prices:
            if len(s_list) != len(p_list):
                raise OwrsError(f"{starts_name}{s_key} has {len(s_list)} tiers but {prices_name}{p_key} has "
                                f"{len(p_list)}; every tier needs a start and a price",
                                field=f"rate_structure.{cls}.{prices_name}", line=part.line)


# --- writing ----------------------------------------------------------------------------------------------


def _yaml_str(text: str) -> str:
    resolved = _Loader("").resolve(yaml.ScalarNode, text, (True, False))
    if _PLAIN.fullmatch(text) and resolved == _STR_TAG:
        return text
    if _DATE.fullmatch(text) and resolved == "tag:yaml.org,2002:timestamp":
        return text
    return json.dumps(text, ensure_ascii=False)


def _part_text(text: str) -> str:
    # A number is written plainly only in the form parse gives it, so text like ".5" keeps its quotes.
    if _NUMBER.fullmatch(text) and _dec_text(Decimal(text)) == text:
        return text
    return _yaml_str(text)


def _flow(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_yaml_str(str(k))}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (Decimal, float)):
        return _yaml_str(_dec_text(Decimal(str(value))))
    return _yaml_str(str(value))


def _block(mapping: dict, indent: int) -> list[str]:
    pad = " " * indent
    lines = []
    for key, value in mapping.items():
        key_text = _yaml_str(str(key))
        if isinstance(value, dict) and value:
            lines.append(f"{pad}{key_text}:")
            lines += _block(value, indent + 2)
        elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            lines.append(f"{pad}{key_text}:")
            lines += [f"{pad}  - {_flow(v)}" for v in value]
        else:
            lines.append(f"{pad}{key_text}: {_flow(value)}")
    return lines


def _part_lines(part: Part) -> list[str]:
    value = part.value
    head = f"    - {part.name}:"
    if isinstance(value, dict):
        depends = value["depends_on"]
        lines = [head, "        depends_on: " + (_yaml_str(depends[0]) if len(depends) == 1
                                                  else "[" + ", ".join(_yaml_str(d) for d in depends) + "]")]
        if not value["values"]:
            return [*lines, "        values: {}"]
        lines.append("        values:")
        for key, entry in value["values"].items():
            shown = ("[" + ", ".join(_part_text(t) for t in entry) + "]") if isinstance(entry, list) \
                else _part_text(entry)
            lines.append(f"          {_yaml_str(key)}: {shown}")
        return lines
    if isinstance(value, list):
        return [f"{head} [" + ", ".join(_part_text(t) for t in value) + "]"]
    return [f"{head} {_part_text(value)}"]


def dump(owrs: OwrsFile) -> str:
    """The canonical OWRS text of ``owrs``: metadata, rate_structure (each class a list of parts), waterbilling."""
    lines = [_HEADER]
    lines += ["metadata:", *_block(owrs.metadata, 2)] if owrs.metadata else ["metadata: {}"]
    lines.append("rate_structure:" if owrs.classes else "rate_structure: {}")
    for cls, parts in owrs.classes.items():
        lines.append(f"  {_yaml_str(cls)}:" if parts else f"  {_yaml_str(cls)}: []")
        for part in parts:
            lines += _part_lines(part)
    if owrs.extra:
        lines += ["waterbilling:", *_block(owrs.extra, 2)]
    return "\n".join(lines) + "\n"


# --- rating -----------------------------------------------------------------------------------------------


def _cents(value: Fraction) -> Decimal:
    """Half away from zero to the cent, exactly."""
    return _round(value, 100).quantize(CENT)


def _round(value: Fraction, scale: int) -> Decimal:
    whole = math.floor(abs(value) * scale + Fraction(1, 2))
    return Decimal(-whole if value < 0 else whole) / scale


def _exact_decimal(value: Fraction) -> Decimal | None:
    """``value`` as a Decimal with at most PRICE_DECIMALS places, or None when it has more."""
    scaled = value * 10 ** PRICE_DECIMALS
    if scaled.denominator != 1:
        return None
    if not scaled:
        return Decimal(0)
    value = (Decimal(scaled.numerator) / 10 ** PRICE_DECIMALS).normalize()
    return value.quantize(Decimal(1)) if value.as_tuple().exponent > 0 else value  # 100, not 1E+2


def _norm_key(text: str) -> str:
    return "|".join(_norm_one(piece) for piece in str(text).split("|"))


def _norm_one(text: str) -> str:
    text = " ".join(text.split())
    if text.endswith('"'):
        text = text[:-1].rstrip()
    if _NUMBER.fullmatch(text):
        return _dec_text(Decimal(text))
    return text


def _fact_key(value) -> str:
    if isinstance(value, Fraction):
        exact = _exact_decimal(value)
        return _dec_text(exact) if exact is not None else str(value)
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return _dec_text(Decimal(value))
    return _norm_one(str(value))


def _class_parts(owrs: OwrsFile, cls: str) -> tuple[Part, ...]:
    try:
        return owrs.classes[cls]
    except KeyError:
        known = ", ".join(owrs.classes) or "none"
        raise OwrsError(f"No rate information for customer class {cls} is present in the rate file "
                        f"(classes: {known})", field="cust_class") from None


def _label(name: str) -> str:
    return name.replace("_", " ").strip().capitalize() or name


def _kind(name: str) -> str:
    if name == "service_charge":
        return "service"
    if "minimum" in name:
        return "minimum"
    if name.startswith("sewer"):
        return "sewer"
    return "charge"


def _fmt_amount_of(value: Fraction) -> str:
    if value.denominator == 1:
        return f"{value.numerator:,}"
    return f"{_round(value, 100):,.2f}"


@dataclass(frozen=True)
class _Exact:
    kind: str
    part: str
    description: str
    quantity: Fraction
    price: Fraction


class _Rating:
    """One bill of one class: the parts evaluated in order, over the facts."""

    def __init__(self, owrs: OwrsFile, cls: str, facts: Mapping[str, object]):
        self.cls = cls
        self.parts = _class_parts(owrs, cls)
        self.facts = self._derive(dict(facts))
        self.env: dict[str, object] = {}  # part name -> Fraction (number) or list (tier list)
        self.described: dict[str, str] = {}
        self.tier_lines: dict[str, list[_Exact]] = {}
        self.usage_field = "usage_ccf"

    def _derive(self, facts: dict) -> dict:
        facts = {k: v for k, v in facts.items() if v is not None}
        for name in ("usage_gal", "usage_ccf"):
            if name in facts:
                facts[name] = self._number(facts[name], name, "the bill")
                if facts[name] < 0:
                    raise OwrsError(f"{name} is {_fmt_amount_of(facts[name])}; usage cannot be negative", field=name)
        if "usage_gal" in facts and "usage_ccf" not in facts:
            facts["usage_ccf"] = facts["usage_gal"] / _CCF_GALLONS
        elif "usage_ccf" in facts and "usage_gal" not in facts:
            facts["usage_gal"] = facts["usage_ccf"] * _CCF_GALLONS
        return facts

    def _number(self, value, name: str, reader: str) -> Fraction:
        if isinstance(value, bool):
            return Fraction(int(value))
        if isinstance(value, (int, Fraction)):
            return Fraction(value)
        if isinstance(value, Decimal) and value.is_finite():
            return Fraction(value)
        if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
            return Fraction(Decimal(value.strip()))
        raise OwrsError(f"{name} is {value!r}, which is not a number ({reader} reads it as one)", field=name)

    def _fail(self, part: Part, message: str) -> OwrsError:
        where = f"rate_structure.{self.cls}.{part.name}"
        return OwrsError(f"{where}: {message}", field=where, line=part.line)

    def lookup(self, name: str, part: Part):
        if name in self.env:
            return self.env[name]
        if name in self.facts:
            return self.facts[name]
        if name in ACCOUNT_FIELDS:
            raise OwrsError(f"the account carries no {name}, which customer class {self.cls} reads in {part.name}",
                            field=name)
        raise OwrsError(f"the bill gives no {name}, which customer class {self.cls} reads in {part.name}",
                        field=name)

    def value_of(self, text: str, part: Part) -> Fraction:
        values = {}
        for name in expressions.names(text):
            value = self.lookup(name, part)
            if isinstance(value, list):
                raise self._fail(part, f"{name} is a list of tiers, not a number")
            values[name] = value if isinstance(value, Fraction) else self._number(value, name, part.name)
        try:
            return expressions.evaluate(text, values)
        except ExpressionError as exc:
            raise self._fail(part, f"{text}: {exc}") from None

    def choose(self, part: Part) -> tuple[object, str]:
        """The entry of a depends_on map this bill's facts pick, and words saying which."""
        depends, values = part.value["depends_on"], part.value["values"]
        facts = [self.lookup(name, part) for name in depends]
        wanted = "|".join(_fact_key(v) for v in facts)
        entry = next((entry for key, entry in values.items() if _norm_key(key) == wanted), None)
        if entry is None:
            shown = "|".join(f'{_fact_key(v)}"' if name == "meter_size" else _fact_key(v)
                             for name, v in zip(depends, facts, strict=True))
            raise OwrsError(f"{part.name} has no value for {'|'.join(depends)} {shown} "
                            f"(values: {', '.join(values)})", field="|".join(depends))
        words = ", ".join(f'{_fact_key(v)}" meter' if name == "meter_size" else f"{name} {_fact_key(v)}"
                          for name, v in zip(depends, facts, strict=True))
        return entry, words

    def run(self) -> tuple[Charge, ...]:
        for part in self.parts:
            if part.name == "bill":
                return self.bill_lines(part)
            self.evaluate(part)
        raise OwrsError(f"customer class {self.cls} has no bill", field=f"rate_structure.{self.cls}")

    def evaluate(self, part: Part) -> None:
        value = part.value
        if part.name == "tier_usage":
            self.usage_field = value
            return
        if _is_rate_part(part):
            self.rate(part)
            return
        words = ""
        if isinstance(value, dict):
            value, words = self.choose(part)
        if isinstance(value, list):
            self.env[part.name] = value
            return
        self.env[part.name] = self.value_of(value, part)
        description = _label(part.name)
        if words:
            description += f", {words}"
        if not _NUMBER.fullmatch(value):
            description += f" ({self.worked(value)})"
        self.described[part.name] = description

    def worked(self, formula: str) -> str:
        """A formula with the numbers it read: ``excess_gal * 0.00385; excess_gal = 25,000``."""
        read = []
        for name in expressions.names(formula):
            value = self.env.get(name, self.facts.get(name))
            if isinstance(value, (Fraction, int, Decimal)) and not isinstance(value, bool):
                read.append(f"{name} = {_fmt_amount_of(Fraction(value))}")
        return "; ".join([formula, *read[:4]])

    def tier_list(self, name: str, part: Part) -> list[str]:
        value = self.lookup(name, part)
        if not isinstance(value, list):
            raise self._fail(part, f"{name} must be a list of tiers")
        return value

    def rate(self, part: Part) -> None:
        prefix = _prefix(part.name)
        sewer = part.name == "sewer_charge"
        usage = self.lookup(self.usage_field, part)
        usage = usage if isinstance(usage, Fraction) else self._number(usage, self.usage_field, part.name)
        if usage < 0:
            raise OwrsError(f"{self.usage_field} is {_fmt_amount_of(usage)}; usage cannot be negative",
                            field=self.usage_field)
        kind = "sewer" if sewer else "consumption"
        if part.value == "Uniform":
            price = self.value_of_name(f"{prefix}price", part)
            label = "Sewer" if sewer else "Consumption"
            lines = [_Exact(kind, part.name, f"{label}: {self.usage_words(usage, price)}", usage, price)]
        else:
            start_texts = self.tier_list(f"{prefix}tier_starts", part)
            price_texts = self.tier_list(f"{prefix}tier_prices", part)
            if len(start_texts) != len(price_texts):
                raise self._fail(part, f"{prefix}tier_starts has {len(start_texts)} tiers but {prefix}tier_prices "
                                       f"has {len(price_texts)}")
            budget = self.value_of_name(f"{prefix}budget", part) if part.value == "Budget" else None
            starts = []
            for text in start_texts:
                percent = _PERCENT.fullmatch(text)
                if percent and budget is None:
                    raise self._fail(part, f"the tier start {text} is a share of the budget; use Budget")
                start = Fraction(Decimal(percent.group(1))) / 100 * budget if percent else self.value_of(text, part)
                starts.append(math.ceil(start) if budget is not None else start)
            prices = [self.value_of(text, part) for text in price_texts]
            label = "Sewer tier" if sewer else "Tier"
            lines = []
            for i, used in enumerate(_usage_in_tiers(usage, starts)):
                words = f"{label} {i + 1} (from {self.start_words(starts[i])}): {self.usage_words(used, prices[i])}"
                lines.append(_Exact(kind, part.name, words, used, prices[i]))
        for line in lines:
            if _exact_decimal(line.price) is None:
                raise self._fail(part, f"a price of {line.price} has more than {PRICE_DECIMALS} decimal "
                                       f"places")
        self.tier_lines[part.name] = lines
        self.env[part.name] = sum((line.quantity * line.price for line in lines), Fraction(0))

    def value_of_name(self, name: str, part: Part) -> Fraction:
        value = self.lookup(name, part)
        if isinstance(value, list):
            raise self._fail(part, f"{name} is a list, not a number")
        return value if isinstance(value, Fraction) else self._number(value, name, part.name)

    def start_words(self, start: Fraction) -> str:
        unit = {"usage_ccf": "ccf", "usage_gal": "gal"}.get(self.usage_field, self.usage_field)
        return f"{_fmt_amount_of(start)} {unit}"

    def usage_words(self, used: Fraction, price: Fraction) -> str:
        rate = _exact_decimal(price)
        if self.usage_field == "usage_gal":
            per_1000 = fmt_rate(rate * 1000) if rate is not None else "?"
            return f"{_fmt_amount_of(used)} gal at ${per_1000} per 1,000 gal"
        rate_text = fmt_rate(rate) if rate is not None else "?"
        if self.usage_field == "usage_ccf":
            gallons = _round(used * _CCF_GALLONS, 1)
            return f"{_round(used, 100):,.2f} ccf ({gallons:,.0f} gal) at ${rate_text} per ccf"
        return f"{_round(used, 100):,.2f} {self.usage_field} at ${rate_text} per {self.usage_field}"

    def bill_lines(self, part: Part) -> tuple[Charge, ...]:
        formula = part.value
        try:
            terms = _terms(expressions.tree(formula), 1)
        except ExpressionError as exc:
            raise self._fail(part, f"{formula}: {exc}") from None
        if terms is None:
            amount = _cents(self.value_of(formula, part))
            return (Charge(kind="charge", part="bill", description=f"Bill: {formula}", quantity=Decimal("1.00"),
                           rate=amount, amount=amount),)
        charges = []
        for sign, name in terms:
            if name in self.tier_lines:
                for line in self.tier_lines[name]:
                    if line.quantity == 0:
                        continue
                    rate = _exact_decimal(line.price)
                    charges.append(Charge(kind=line.kind, part=name, description=line.description,
                                          quantity=_round(line.quantity, 100).quantize(CENT),
                                          rate=rate if sign > 0 else -rate,
                                          amount=_cents(sign * line.quantity * line.price)))
                continue
            amount = _cents(sign * self.value_of(name, part))
            charges.append(Charge(kind=_kind(name), part=name, description=self.described.get(name, _label(name)),
                                  quantity=Decimal("1.00"), rate=amount, amount=amount))
        # A fixed or formula part that comes to nothing (a yearly minimum already charged, no gallons over the
        # allowance) says nothing the other lines do not; a bill of nothing but such parts keeps them all, so
        # the customer sees why it is $0.00.
        fixed = [c for c in charges if c.part not in self.tier_lines]
        if any(c.amount for c in charges) or len(charges) > len(fixed):
            charges = [c for c in charges if c.amount or c.part in self.tier_lines]
        return tuple(charges)


def _terms(node, sign: int) -> list[tuple[int, str]] | None:
    """The bill as (sign, part name) terms when it is a sum or difference of names, else None."""
    if node[0] == "name":
        return [(sign, node[1])]
    if node[0] == "neg":
        return _terms(node[1], -sign)
    if node[0] == "bin" and node[1] in "+-":
        left = _terms(node[2], sign)
        right = _terms(node[3], sign if node[1] == "+" else -sign)
        return None if left is None or right is None else left + right
    return None


def _usage_in_tiers(usage: Fraction, starts: list[Fraction]) -> list[Fraction]:
    """RateParser's get_usage_in_tiers: a tier start is the first unit billed in the tier."""
    used: list[Fraction] = []
    for i in range(len(starts) - 1):
        top = Fraction(starts[i + 1])
        lower = sum(used, Fraction(0))
        if i == 0:
            used.append(max(min(usage, top - 1), Fraction(0)))
        else:
            used.append(max(min(usage - lower, top - lower - 1), Fraction(0)))
    used.append(max(usage - sum(used, Fraction(0)), Fraction(0)))
    return used


def bill(owrs: OwrsFile, cls: str, facts: Mapping[str, object]) -> tuple[Charge, ...]:
    """Rate one bill of class ``cls`` from ``facts``; the lines, each rounded once to the cent."""
    return _Rating(owrs, cls, facts).run()
