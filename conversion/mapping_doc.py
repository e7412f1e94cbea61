"""``docs/mapping.md``, written from the mapping's registry (``conversion.opening.MAPPING``): every table and key a
conversion mapping may hold, with its kind and meaning, and the worked mapping. ``manage.py mapping_docs --write``
writes it; a test keeps the file current."""

from pathlib import Path

from django.conf import settings

from ordinance.keys import MapOf, doc_table

from .opening import MAPPING

DOC = Path(settings.BASE_DIR) / "docs" / "mapping.md"
EXAMPLE = Path(settings.BASE_DIR) / "fixtures" / "conversion" / "example_mapping.toml"


def mapping_doc() -> str:
    out = ["# The conversion mapping: another system's exports read without hand editing", "",
           "<!-- Written by `manage.py mapping_docs --write` from conversion/opening.py's MAPPING; edit the keys' "
           "meanings there, not this file. -->", "",
           "A mapping is one TOML file given to `convert check|post|accounts … --mapping FILE` (or uploaded on the "
           "Conversion page). It is checked whole before any export is read: a table or key not listed below is "
           "refused, naming it, the ones that are known and the nearest of them; every value by its kind (a column "
           "of ours, a kind, a category, a status, a meter size, a strftime date format). Every refusal is listed at "
           "once. See [conversion.md](conversion.md) for the conversion itself.", ""]
    for name, key in MAPPING.keys.items():
        out += [f"## `[{name}]`", "", key.meaning, ""]
        kind = key.kind
        out += [f"Each key is {kind.key_words}; each value {kind.value.words}."] if isinstance(kind, MapOf) \
            else doc_table(kind)
        out.append("")
    out += ["## The worked mapping (`fixtures/conversion/example_mapping.toml`)", "", "```toml",
            EXAMPLE.read_text().strip(), "```", ""]
    return "\n".join(out)
