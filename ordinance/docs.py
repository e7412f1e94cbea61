"""``docs/presets.md``, written from the registries: every table a preset may hold (from the readers apps register),
each key with its meaning, every scheme a table may name (from the strategy registries, in the words of each
strategy's own docstring), an example of each table from a shipped preset, and the walk-through of writing a preset
for a sixth village. ``manage.py preset_docs --write`` writes it; a test keeps the file current."""

import inspect
import re
from pathlib import Path

from django.conf import settings

from .files import PRESET_DIR, shipped_presets
from .install import BY_DISTRICT, DISTRICT
from .keys import Shape, doc_table
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
           "from. The shipped presets are in `fixtures/presets/` (five villages' and a town's); another is a "
           "file of its own, checked with `manage.py preset_check PATH` and installed with "
           "`manage.py setup_utility --file PATH` (under Docker, mount the file and give its path: no image "
           "rebuild). An amendment is the same file changed, installed with the day it takes effect "
           "(`--effective YYYY-MM-DD`, or `effective_on = YYYY-MM-DD` at the top of the file): bills, late charges, "
           "notices and case steps before that day keep the rules in force then.",
           "", "Every table is checked by meaning before anything is installed: a key no table below lists is refused, "
           "naming the table, the key, the keys it may hold and the nearest of them (`up_to_gallon`: did you mean "
           "`up_to_gallons`?); every value by its kind (no negative, NaN or impossibly large price, rate, fee or "
           "allowance; a percentage over 0 and at most 100; a month 1 to 12); a category's blocks rising, above its "
           "allowance, with one unbounded last block; versions in order of their dates. Every refusal is listed at "
           "once and nothing is installed. `manage.py preset_check FILE --bills` then prints what the file would "
           "bill, class by class, for a ladder of usages (0, the allowance, each block's edges, twice the last "
           "bound) and a late charge worked through a year, each line with its citation: hold it beside the chapter "
           "before installing. The Utility page shows the same for the installed rules.",
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
    out.append("| `[[district]]` | ordinance | a town's water districts (rate areas), each with its own version of the "
               "tables where its law differs |")
    out += ["", "## `[[district]]`", "",
            "A town bills by water district (Town Law art. 12 and 12-A): each district may have its own rates, "
            "billing calendar, penalty, final-bill rule, general ledger fund, lien and relevy rule, termination "
            "periods and sewer rents. A `[[district]]` names the district and holds its own version of any of "
            f"{', '.join(f'`{name}`' for name in BY_DISTRICT)} as a sub-table (`[district.penalty]`, "
            "`[[district.rate_schedule]]`, `[[district.sewer]]`), checked by the same rules as the installation's; "
            "a table the district does not name is the installation's. A village names no districts, and every "
            "table is the installation's. A premises is put in a district from a day (the premises' *District* "
            "rows in the admin, or the conversion file's `district` column); a premises moved from one district to "
            "another in a billing period is billed by the days in each, each part under its district's rules with "
            "its minimum and allowance pro rata by those days. Its own keys:", ""]
    out += doc_table(Shape({k: v for k, v in DISTRICT.keys.items() if k not in BY_DISTRICT}))
    example = _example("district")
    if example:
        text, code = example
        out += ["", f"Example (`fixtures/presets/{code}.toml`):", "", "```toml", text, "```"]
    for name in sorted(TABLES):
        table = TABLES[name]
        shape = f"[[{name}]]" if table.is_list else f"[{name}]"
        out += ["", f"## `{shape}`", "", table.meaning, ""]
        out += doc_table(Shape(table.keys))
        if table.schemes is not None:
            out += ["", f"Its schemes ({table.schemes.kind}s):", ""]
            for scheme in table.schemes.names():
                cls = table.schemes.class_of(scheme)
                out.append(f"- `{scheme}`: {_scheme_words(cls)}")
                own = doc_table(Shape(getattr(cls, "KEYS", {})))
                if own:
                    out += ["", "  Its own keys (beside the table's):", ""] + [f"  {row}" for row in own] + [""]
        examples = [_example(name)]
        if table.schemes is not None and not table.is_list:
            examples = [_example(name, scheme) for scheme in table.schemes.names()]
        for example in filter(None, dict.fromkeys(examples)):
            text, code = example
            out += ["", f"Example (`fixtures/presets/{code}.toml`):", "", "```toml", text, "```"]
    out += ["", WALK_THROUGH.read_text().strip(), ""]
    return "\n".join(out)
