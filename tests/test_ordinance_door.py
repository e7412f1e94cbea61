"""The installed ordinance has one door (ARCHITECTURE.md, "The ordinance interface").

Only the ordinance floor reads a preset file or the utility row and its sections: every other app asks
``ordinance.selectors`` for the section in force on its date, read by the reader its app registered. A module of an
app outside ``ordinance/`` (migrations, tests and scripts left out) that reads the file, the row or the sections by
hand fails here, naming the file and line.
"""

import ast
import re
from pathlib import Path

from tests.test_layers import APPS, ROOT

# What reading by hand looks like: the preset folder or a preset file, the file reader, the rows themselves.
FORBIDDEN = re.compile(r"\b(?:Utility|Section|InstalledPreset)\.objects\b|\bpreset_(?:read|path|load)\b|"
                       r"\bPRESET_DIR\b|fixtures/presets|\b(?:calendar|penalty|termination|backflow|gl)_params\b")


def _app_modules():
    for app in APPS:
        if app == "ordinance":
            continue
        for path in sorted((ROOT / app).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if "migrations" in parts or "tests" in parts or path.name.startswith("test_"):
                continue
            yield path


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """The file's lines that are code (docstrings and comments dropped), with their numbers."""
    text = path.read_text()
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            docstrings.update(range(node.lineno, node.end_lineno + 1))
    return [(number, line.split("#")[0]) for number, line in enumerate(text.splitlines(), 1)
            if number not in docstrings]


def test_only_the_ordinance_floor_reads_the_preset_file_and_the_installed_rules():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in _app_modules() for number, line in _code_lines(path) if FORBIDDEN.search(line)]
    assert not found, "read through ordinance.selectors instead:\n" + "\n".join(found)


def test_the_check_would_catch_a_reader_by_hand(tmp_path):
    assert FORBIDDEN.search("utility = Utility.objects.first()")
    assert FORBIDDEN.search("data = preset_read(code=utility.preset).data")
    assert FORBIDDEN.search('path = settings.BASE_DIR / "fixtures/presets" / "mineola.toml"')
    assert not FORBIDDEN.search("policy = section('termination', on)")
