"""``docs/presets.md``, written from the registries: every table a preset may hold (from the readers apps register),
each key with its meaning, every scheme a table may name (from the strategy registries, in the words of each
strategy's own docstring), an example of each table from a shipped preset, and the walk-through of writing a preset
for a sixth village. ``manage.py preset_docs --write`` writes it; a test keeps the file current."""

import inspect
import re
from pathlib import Path

from django.conf import settings

from .files import PRESET_DIR, shipped_presets
from .sections import TABLES

DOC = Path(settings.BASE_DIR) / "docs" / "presets.md"
WALK_THROUGH = Path(__file__).resolve().parent / "walk_through.md"


def _example(name: str, scheme: str | None = None) -> tuple[str, str] | None:
    """The first shipped preset's text of table ``name`` (its header to the next top-level table), and the preset;
    with ``scheme``, the first preset whose table names that scheme."""
    header = re.compile(rf"^\[\[?{re.escape(name)}\]\]?\s*$", re.M)
    for code in shipped_presets():
        text = (PRESET_DIR / f"{code}.toml").read_text()
        names_scheme = rf'^\[{re.escape(name)}\][^\[]*?^scheme = "{scheme}"'
        if scheme is not None and not re.search(names_scheme, text, re.M | re.S):
            continue
        found = header.search(text)
        if found:
            rest = re.search(r"^\[\[?(?!" + re.escape(name) + r"[.\]])[a-z_]+[\].]", text[found.end():], re.M)
            end = found.end() + rest.start() if rest else len(text)
            return text[found.start():end].strip(), code
    return None


def _scheme_words(cls) -> str:
    doc = inspect.getdoc(cls) or "(no description)"
    return " ".join(doc.split())


def presets_doc() -> str:
    out = ["# Presets: the ordinance as a file", "",
           "<!-- Written by `manage.py preset_docs --write` from the registries; edit the readers' meanings and the "
           "walk-through (ordinance/walk_through.md), not this file. -->", "",
           "A preset is one TOML file holding a village's water ordinance: every number with the section it comes "
           "from. The five shipped presets are in `fixtures/presets/`; a sixth is a file of its own, checked with "
           "`manage.py preset_check PATH` and installed with `manage.py setup_utility --file PATH` (under Docker, "
           "mount the file and give its path: no image rebuild). An amendment is the same file changed, installed "
           "with the day it takes effect (`--effective YYYY-MM-DD`, or `effective_on = YYYY-MM-DD` at the top of "
           "the file): bills, late charges, notices and case steps before that day keep the rules in force then.",
           "", "## Tables", "",
           "| table | read by | what it says |", "|---|---|---|",
           "| `[utility]` | ordinance | who the installation bills for: `preset` (its code), `name`, `office_address`, "
           "`phone`, `chapter` (name and office_address are required) |"]
    for name in sorted(TABLES):
        table = TABLES[name]
        shape = f"[[{name}]]" if table.is_list else f"[{name}]"
        required = " (required)" if table.required else ""
        out.append(f"| `{shape}` | {table.owner} | {table.meaning}{required} |")
    out.append("| `effective_on` | ordinance | (top-level key) the day an amendment's changed tables take effect |")
    for name in sorted(TABLES):
        table = TABLES[name]
        shape = f"[[{name}]]" if table.is_list else f"[{name}]"
        out += ["", f"## `{shape}`", "", table.meaning, ""]
        if table.keys:
            out += ["| key | meaning |", "|---|---|"]
            out += [f"| `{key}` | {meaning} |" for key, meaning in table.keys.items()]
        if table.schemes is not None:
            out += ["", f"Its schemes ({table.schemes.kind}s):", ""]
            for scheme in table.schemes.names():
                cls = table.schemes._classes[scheme]
                out.append(f"- `{scheme}`: {_scheme_words(cls)}")
        examples = [_example(name)]
        if table.schemes is not None and not table.is_list:
            examples = [_example(name, scheme) for scheme in table.schemes.names()]
        for example in filter(None, dict.fromkeys(examples)):
            text, code = example
            out += ["", f"Example (`fixtures/presets/{code}.toml`):", "", "```toml", text, "```"]
    out += ["", WALK_THROUGH.read_text().strip(), ""]
    return "\n".join(out)
