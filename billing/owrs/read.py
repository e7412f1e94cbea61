"""Reading an OWRS file's text (``parse``) and checking every class statically, so that a file that would fail on
some bill is refused as a whole, with its line and part."""

from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

import yaml

from .. import expressions
from ..expressions import ExpressionError
from .files import (
    _DEFAULT_PROVIDED,
    _NAME,
    _NUMBER,
    _PERCENT,
    _STR_TAG,
    PRICE_DECIMALS,
    PRICE_PARTS,
    RATE_PARTS,
    RATE_TYPES,
    OwrsError,
    OwrsFile,
    Part,
    _dec_text,
    _is_rate_part,
    _norm_key,
    _prefix,
    _reads,
)


class _Loader(yaml.SafeLoader):
    """Composes the node tree only; values are built from the nodes' text here (numbers never via float)."""


def _line(node) -> int:
    return node.start_mark.line + 1


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
