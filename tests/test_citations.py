"""Every rule test names what it checks (``@pytest.mark.citation("§ 45.29 E")``), so ``--citation`` finds it."""

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
RULE_TESTS = ["billing/test_rating.py", "billing/test_calendar_penalties_ledger.py", "billing/test_corrections.py",
              "billing/test_any_order.py", "billing/test_interest_scheme.py", "presets/test_washingtonville.py",
              "backflow/test_rules.py"]


def _cites(node) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "citation" for n in ast.walk(node))


@pytest.mark.parametrize("name", RULE_TESTS)
def test_every_rule_test_names_its_section(name):
    tree = ast.parse((TESTS / name).read_text())
    module_wide = any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
                      and _cites(n.value) for n in tree.body)
    unnamed = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
               and not module_wide and not any(_cites(d) for d in n.decorator_list)]
    assert not unnamed, f"{name}: tests without @pytest.mark.citation: {unnamed}"


@pytest.mark.citation("policy: tests name their sections")
def test_a_mark_names_every_section_it_cites_ranges_and_lists_too():
    from tests.conftest import cited_sections

    assert "§ 45.33" in cited_sections("§§ 45.33–45.34") and "§ 45.34" in cited_sections("§§ 45.33–45.34")
    assert {"§ 45.31", "§ 45.32", "§ 45.33", "§ 45.34", "§ 45.35"} <= set(cited_sections("§§ 45.31–45.35"))
    assert {"§ 169-25", "§ 169-26"} <= set(cited_sections("§§ 169-25, 169-26"))
    assert "§ 169-33" in cited_sections("§§ 169-31 – 169-37")
    assert cited_sections("§ 45.32") == ["§ 45.32"]


@pytest.mark.citation("policy: tests name their sections")
def test_citation_finds_a_section_cited_second_or_inside_a_range():
    """``--citation "§ 45.33"`` finds the guard's tests, marked ``citation("§ 45.31", …, "§§ 45.33–45.34", …)``."""
    import subprocess
    import sys

    found = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                            "--citation", "§ 45.33", str(TESTS / "termination" / "test_guard.py")],
                           capture_output=True, text=True, cwd=TESTS.parent, timeout=120)
    collected = [line for line in found.stdout.splitlines() if "::" in line]
    assert collected, found.stdout + found.stderr
