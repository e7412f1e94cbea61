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
