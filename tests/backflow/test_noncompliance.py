"""Noncompliance opens a termination case on violation grounds with the preset's section (Lansing § 141-5,
Washingtonville § 169-37), or in Old Westbury logs the health hazard as an emergency interruption, never a
shut-off order."""

import pytest

from termination.models import Interruption, TerminationCase

from .steps import bf, refused, village

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("preset", "codes", "section"), [
    pytest.param("lansing", ["private_hydrant"], "§ 141-5", marks=pytest.mark.citation("§ 141-5")),
    pytest.param("washingtonville", ["hospital"], "§ 169-37", marks=pytest.mark.citation("§ 169-37")),
])
def test_a_required_device_missing_opens_a_case_on_violation_grounds(tmp_path, preset, codes, section):
    village(tmp_path, preset)
    assert "in compliance" in refused("noncompliance", "--act", "1-0001", date_="2026-03-01")
    bf("require", "1-0001", *[arg for code in codes for arg in ("--condition", code)], date_="2026-03-01")
    out = bf("noncompliance", date_="2026-03-02")
    assert "1-0001" in out and section in out and "no allowed device installed" in out
    bf("noncompliance", "--act", "1-0001", date_="2026-03-02")
    case = TerminationCase.objects.get()
    assert (case.grounds, case.section, case.opened_on.isoformat()) == ("violation", section, "2026-03-02")
    assert "no allowed device installed" in case.grounds_detail


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_logs_the_health_hazard_as_an_emergency(tmp_path):
    village(tmp_path, "old_westbury")
    bf("require", "1-0001", "--condition", "cross_connection", date_="2026-03-01")
    bf("noncompliance", "--act", "1-0001", date_="2026-03-02")
    assert not TerminationCase.objects.exists()
    logged = Interruption.objects.get()
    assert logged.kind == "health_hazard" and "notwithstanding the foregoing" in logged.citation
