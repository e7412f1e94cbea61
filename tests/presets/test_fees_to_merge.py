"""The fee and meter tables the fee-rule tests install (``tests/presets/fixtures/``, stand-ins with a simpler
late rule so their dollars stay about the fees) are the ones the village presets ship."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize("code", ["old_westbury", "washingtonville"])
def test_the_tested_fee_tables_are_the_shipped_ones(code):
    shipped = (ROOT / "fixtures" / "presets" / f"{code}.toml").read_text()
    tested = (ROOT / "tests" / "presets" / "fixtures" / f"{code}.toml").read_text()
    block = re.search(rf"#--- FEES_TO_MERGE: {code} ---\n(.*?)#--- end ---", tested, re.S).group(1)
    assert block in shipped
