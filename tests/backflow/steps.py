"""Steps the backflow tests take through the ``backflow`` command, as a clerk would."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.presets.quarterly import accounts, bill, install, readings

ACCOUNT = ["1-0001,1,other,Acme Plating,\"1 Main St, Anytown, NY\",,1 Main St,1-1-1,BF001,2,gal,1000000,2025-10-15"]
READINGS = ["BF001,2026-01-14,1030000,actual", "BF001,2026-04-14,1060000,actual", "BF001,2026-07-14,1090000,actual",
            "BF001,2026-10-14,1120000,actual"]


def bf(*args, date_: str) -> str:
    out = io.StringIO()
    call_command("backflow", *args, "--date", date_, stdout=out)
    return out.getvalue().strip()


def bf_json(*args, date_: str):
    return json.loads(bf(*args, "--json", date_=date_))


def refused(*args, date_: str) -> str:
    with pytest.raises(CommandError) as info:
        bf(*args, date_=date_)
    return str(info.value)


def village(tmp_path, preset: str) -> None:
    """One account of ``preset`` read every quarter of 2026 (30,000 gal each), not yet billed."""
    install(preset)
    accounts(tmp_path, ACCOUNT, on="2025-10-31")
    readings(tmp_path, READINGS, on="2026-10-31")


__all__ = ["bf", "bf_json", "bill", "refused", "village"]
