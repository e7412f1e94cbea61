"""Backflow input that used to reach a traceback: refused naming the field."""

import pytest

from backflow.models import Device, DeviceTest

from .steps import bf, refused, village

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: bad input changes nothing")]


def test_a_nul_in_a_serial_is_refused_naming_the_argument(tmp_path):
    village(tmp_path, "mineola")
    message = refused("device", "1-0001", "--type", "RPZ", "--serial", "RP\x00-1", "--size", "2",
                      "--installed-on", "2025-06-01", date_="2026-01-05")
    assert "--serial: contains a NUL character (\\x00), which is not allowed" in message
    assert "contains a NUL character" in refused("test", "RP\x00-1", "--tested-on", "2026-01-06", "--tester", "NY-1",
                                                 "--result", "pass", date_="2026-01-06")
    assert not Device.objects.exists()


@pytest.mark.parametrize("reading", ["١٢٫٥", "１２", "12\u0660"])
def test_a_gauge_reading_in_other_scripts_digits_is_refused(tmp_path, reading):
    village(tmp_path, "mineola")
    bf("device", "1-0001", "--type", "RPZ", "--serial", "RP-1", "--size", "2", "--installed-on", "2025-06-01",
       date_="2026-01-05")
    bf("tester", "NY-1", "--name", "Pat Tester", "--expires", "2027-12-31", date_="2026-01-05")
    message = refused("test", "RP-1", "--tested-on", "2026-01-06", "--tester", "NY-1", "--result", "pass",
                      "--cv1", reading, date_="2026-01-06")
    assert "check_valve_1_psid" in message and "is not a number of psid (digits 0–9 and a point)" in message
    assert not DeviceTest.objects.exists()
    bf("test", "RP-1", "--tested-on", "2026-01-06", "--tester", "NY-1", "--result", "pass", "--cv1", "12.5",
       date_="2026-01-06")
    assert DeviceTest.objects.get().check_valve_1_psid == 12.5
