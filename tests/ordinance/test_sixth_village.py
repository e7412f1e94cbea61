"""A sixth village without touching the code: the preset written in docs/presets.md's walk-through, kept outside the
checkout, checked, installed with --file and billed through a year; and the docs kept current with the registries."""

import io
import json
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from billing.models import Bill, LedgerEntry
from ordinance.docs import DOC, presets_doc
from ordinance.files import shipped_presets
from ordinance.models import InstalledPreset, Utility
from ordinance.selectors import section
from tests.billing.steps import account_with_meter, read, run

D = Decimal


def walk_through_preset(tmp_path):
    text = DOC.read_text()
    block = text.split("```toml\n")[-1].split("```")[0]
    path = tmp_path / "springfield.toml"
    path.write_text(block)
    return path


def test_the_docs_are_written_from_the_registries():
    assert DOC.read_text() == presets_doc(), "run `manage.py preset_docs --write`"


def test_every_key_of_every_shipped_preset_is_in_the_docs():
    import tomllib

    from ordinance.files import PRESET_DIR

    doc = DOC.read_text()
    for code in shipped_presets():
        data = tomllib.loads((PRESET_DIR / f"{code}.toml").read_text())
        for table, params in data.items():
            assert f"[{table}]" in doc, (code, table)
            if table in ("rate_schedule", "fee", "note", "utility"):
                continue
            if table == "district":  # its own keys, then the tables it has its own version of (checked above)
                for district in params:
                    for key in district:
                        assert f"`{key}`" in doc, (code, table, key)
                continue
            # A table's own keys are listed as keys; a scheme's are in its scheme's words or its example.
            for key in params:
                assert f"`{key}`" in doc or f"{key} =" in doc or f"``{key}``" in doc, (code, table, key)


@pytest.mark.parametrize("code", shipped_presets())
def test_every_shipped_preset_passes_the_check(code):
    out = io.StringIO()
    call_command("preset_check", code, stdout=out)
    assert "fit to install" in out.getvalue()


@pytest.mark.django_db
def test_a_sixth_village_from_the_walk_through_is_checked_installed_and_billed_through_a_year(tmp_path):
    path = walk_through_preset(tmp_path)
    out = io.StringIO()
    call_command("preset_check", str(path), stdout=out)
    assert "fit to install" in out.getvalue()
    call_command("setup_utility", "--file", str(path), "--date", "2025-01-02", stdout=io.StringIO())
    utility = Utility.objects.get()
    assert (utility.preset, utility.name) == ("springfield", "Village of Springfield Water Department")
    install = InstalledPreset.objects.get()
    assert install.source == str(path) and len(install.sha256) == 64
    assert section("termination").notice_min_days == 15

    account, meter = account_with_meter(book=1, start=date(2024, 12, 15), value=100_000)
    reading = 100_000
    for month in (1, 4, 7, 10):
        reading += 15_000
        read(meter, date(2025, month, 1) - (date(2025, 1, 1) - date(2024, 12, 20)), reading)
        run("run_billing", "--date", f"2025-{month:02d}-01")
    bills = list(Bill.objects.filter(account=account).order_by("bill_date"))
    assert [b.bill_date.month for b in bills] == [1, 4, 7, 10]
    # The first bill: 100,000 to 115,000 gallons; every quarter 15,000: $40.00 with 10,000, 5 × $4.00 over it.
    assert all(b.total.amount == D("60.00") for b in bills)
    assert bills[0].due_date == date(2025, 1, 31)
    # Unpaid past its due date: the 10% penalty of § 99-12, once, the day after.
    run("assess_penalties", "--date", "2025-02-05")
    penalty = LedgerEntry.objects.get(account=account, kind="penalty")
    assert (penalty.posted_on, penalty.amount.amount) == (date(2025, 2, 1), D("6.00"))


def test_a_file_that_breaks_the_contract_is_refused_naming_each_table_and_key(tmp_path, db):
    path = walk_through_preset(tmp_path)
    text = path.read_text().replace('percent = "10"\n', "").replace("notice_min_days_before_hearing = 15\n", "")
    path.write_text(text.replace("[policy]", "[polcy]"))
    out = io.StringIO()
    with pytest.raises(CommandError, match="3 refusals; nothing installed"):
        call_command("preset_check", str(path), "--json", stdout=out)
    refusals = json.loads(out.getvalue())["refusals"]
    assert any(r.startswith("[polcy] is not a table") for r in refusals)
    assert any("[termination] needs notice_min_days_before_hearing" in r for r in refusals)
    assert any("penalty" in r and "percent" in r for r in refusals), refusals
    with pytest.raises(CommandError, match="cannot be installed"):
        call_command("setup_utility", "--file", str(path), stdout=io.StringIO())
    assert not Utility.objects.exists()
