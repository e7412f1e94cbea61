"""The blocks of ``fixtures/presets/FEES_TO_MERGE.md`` are the ones the tests install."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize("code", ["old_westbury", "washingtonville"])
def test_the_blocks_to_merge_are_the_ones_tested(code):
    doc = (ROOT / "fixtures" / "presets" / "FEES_TO_MERGE.md").read_text()
    merged = re.search(rf"## `fixtures/presets/{code}\.toml`\n\n```toml\n(.*?)```", doc, re.S).group(1)
    tested = (ROOT / "tests" / "presets" / "fixtures" / f"{code}.toml").read_text()
    block = re.search(rf"#--- FEES_TO_MERGE: {code} ---\n(.*?)#--- end ---", tested, re.S).group(1)
    assert merged == block
