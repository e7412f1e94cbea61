"""The test-only stand-ins for the Old Westbury and Washingtonville presets (``tests/presets/fixtures/``),
installed as a demo/training site, for the fee rules and meter services tested from installed rows."""

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "presets" / "fixtures"


def install(monkeypatch, code: str):
    from ordinance import files as presets
    from ordinance.install import preset_install
    from ordinance.models import Utility

    monkeypatch.setattr(presets, "PRESET_DIR", FIXTURES)
    preset_install(code=code, mark_demo_site=True)
    return Utility.objects.get()


@pytest.fixture
def old_westbury_fees(db, monkeypatch):
    return install(monkeypatch, "old_westbury")


@pytest.fixture
def washingtonville_fees(db, monkeypatch):
    return install(monkeypatch, "washingtonville")
