"""Writing an OWRS file's canonical text (``dump``): ``parse(dump(f)) == f`` and a second dump is byte-identical."""

import json
from decimal import Decimal

import yaml

from .files import (
    _DATE,
    _HEADER,
    _NUMBER,
    _PLAIN,
    _STR_TAG,
    OwrsFile,
    Part,
    _dec_text,
)
from .read import (
    _Loader,
)


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
