"""``convert check``: an opening-balances file checked all or nothing, its control totals worked by hand, and
another system's export read through the shipped mapping."""

import io
import json
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.billing.steps import account_with_meter

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: bad input changes nothing")]
MAPPING = Path(settings.BASE_DIR) / "fixtures" / "conversion" / "example_mapping.toml"
HEADER = "account_no,bill_no,bill_date,due_date,kind,amount,description\n"
CLEAN = HEADER + (
    "1-0001,L-1,2026-02-01,2026-03-01,water,186.13,Water first half\n"
    "1-0001,L-1,2026-02-01,2026-03-01,penalty,9.31,Late penalty 5%\n"
    "1-0002,L-2,2026-05-01,2026-06-01,water,45.00,Minimum\n"
    "1-0002,L-2,2026-05-01,2026-06-01,fee,25.00,Meter test\n"
    "1-0003,,,,credit,12.00,Overpayment\n"
    "1-0003,,,,deposit,250.00,Hydrant meter deposit\n")


@pytest.fixture
def accounts(mineola):
    for number in ("1-0001", "1-0002", "1-0003"):
        account_with_meter(book=1, account_no=number)


def check(tmp_path, text: str, *args) -> str:
    path = tmp_path / "open.csv"
    path.write_text(text)
    out = io.StringIO()
    call_command("convert", "check", str(path), "--date", "2026-06-15", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def counts() -> dict:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def test_a_clean_file_gives_its_control_totals_and_saves_nothing(accounts, tmp_path):
    before = counts()
    totals = json.loads(check(tmp_path, CLEAN, "--json"))
    # Charges: 186.13 + 9.31 + 45.00 + 25.00 = 265.44; owed: less the 12.00 credit = 253.44; the deposit is held.
    assert totals == {"rows": 6, "accounts": 3, "open_bills": 2,
                      "by_kind": {"water": "231.13", "sewer": "0.00", "fee": "25.00", "fine": "0.00",
                                  "penalty": "9.31", "interest": "0.00", "credit": "12.00", "deposit": "250.00"},
                      "charges": "265.44", "owed": "253.44", "deposits_held": "250.00"}
    assert "no problems in 6 rows; nothing was saved" in check(tmp_path, CLEAN)
    assert counts() == before


def test_every_problem_is_named_with_its_line_and_column_and_nothing_is_saved(accounts, tmp_path):
    before = counts()
    bad = HEADER + (
        "9-9999,L-9,2026-02-01,2026-03-01,water,10.00,\n"            # 2: unknown account
        "1-0001,L-1,2026-02-01,2026-03-01,water,186.13,\n"           # 3: fine
        "1-0002,L-1,2026-02-01,2026-03-01,fee,5.00,\n"               # 4: L-1 is 1-0001's
        "1-0001,L-1,2026-02-02,2026-03-01,penalty,9.31,\n"           # 5: L-1 dated otherwise
        "1-0001,L-3,2026-04-01,2026-03-01,water,10.00,\n"            # 6: due before the bill date
        "1-0001,L-4,2026-04-01,2026-05-01,rent,10.00,\n"             # 7: not a kind
        "1-0001,,2026-04-01,2026-05-01,water,10.00,\n"               # 8: a charge needs its bill
        "1-0003,,,,credit,-12.00,\n"                                 # 9: amounts are positive
        "1-0001,L-5,2026-07-01,2026-08-01,water,10.00,\n")           # 10: after the day of the check
    err = io.StringIO()
    path = tmp_path / "bad.csv"
    path.write_text(bad)
    with pytest.raises(CommandError, match="nothing was saved"):
        call_command("convert", "check", str(path), "--date", "2026-06-15", stdout=io.StringIO(), stderr=err)
    said = err.getvalue()
    for expected in ("line 2: account_no: unknown account '9-9999'",
                     "line 4: bill_no: bill L-1 is account 1-0001's (line 3); a bill belongs to one account",
                     "line 5: bill_date: bill L-1 is dated 2026-02-01, due 2026-03-01 on line 3",
                     "line 6: due_date: 2026-03-01 is before the bill date 2026-04-01",
                     "line 7: kind: 'rent' is not a kind; use water, sewer, fee, fine, penalty, interest, credit",
                     "line 8: bill_no: is required: a water charge belongs to an open bill",
                     "line 9: amount: '-12.00': amounts are positive; the kind says a credit or a deposit",
                     "line 10: bill_date: 2026-07-01 is after 2026-06-15"):
        assert expected in said, (expected, said)
    assert counts() == before


def test_another_systems_export_converts_through_the_shipped_mapping(accounts, tmp_path):
    export = ("ACCT_NO,BILL_NUMBER,BILL_DT,DUE_DT,CHG_CODE,AMT,MEMO\n"
              "1-0001,L-1,02/01/2026,03/01/2026,WA,186.13,Water first half\n"
              "1-0001,L-1,02/01/2026,03/01/2026,PN,9.31,Late penalty 5%\n"
              "1-0002,L-2,05/01/2026,06/01/2026,WA,45.00,Minimum\n"
              "1-0002,L-2,05/01/2026,06/01/2026,FE,25.00,Meter test\n"
              "1-0003,,,,CR,12.00,Overpayment\n"
              "1-0003,,,,DP,250.00,Hydrant meter deposit\n")
    assert json.loads(check(tmp_path, export, "--json", "--mapping", str(MAPPING))) == json.loads(
        check(tmp_path, CLEAN, "--json"))
    # A code the mapping does not know, and a date it cannot read, are named on their lines.
    path = tmp_path / "open.csv"
    path.write_text(export.replace("PN,9.31", "XX,9.31").replace("05/01/2026,06/01/2026,FE", "13/45/2026,06/01/2026,FE"))
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(path), "--mapping", str(MAPPING), "--date", "2026-06-15",
                     stdout=io.StringIO(), stderr=err)
    assert "line 3: kind: 'XX' is not a kind" in err.getvalue()
    assert "line 5: bill_date: '13/45/2026' is not a date" in err.getvalue()


def test_a_mapping_that_names_what_is_not_there_is_refused(accounts, tmp_path):
    mapping = tmp_path / "m.toml"
    mapping.write_text('[columns]\nacct = "ACCT_NO"\n[kinds]\nWA = "rent"\n')
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(tmp_path / "none.csv"), "--mapping", str(mapping), stdout=io.StringIO(),
                     stderr=err)
    assert "[columns] acct: not a column of the opening balances" in err.getvalue()
    assert "[kinds] WA = 'rent' is not one of water, sewer" in err.getvalue()


CONTROL = ("total,value\naccounts,3\nopen_bills,2\nwater,231.13\npenalty,9.31\nfee,25.00\ncredit,12.00\n"
           "deposit,250.00\nowed,253.44\n")


def refused(tmp_path, *args) -> str:
    from django.core.management.base import CommandError

    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was saved"):
        call_command("convert", *args, stdout=io.StringIO(), stderr=err)
    return err.getvalue()


@pytest.mark.citation("policy: conversion control totals")
def test_the_old_systems_control_report_is_held_to_the_cent(accounts, tmp_path):
    """The file as its control report says: checked. One cent off in one kind: refused, naming the total, both
    figures and the difference; posting it posts nothing."""
    (tmp_path / "control.csv").write_text(CONTROL)
    assert "no problems in 6 rows" in check(tmp_path, CLEAN, "--control", str(tmp_path / "control.csv"))
    (tmp_path / "off.csv").write_text(CONTROL.replace("water,231.13", "water,231.12"))
    (tmp_path / "open.csv").write_text(CLEAN)
    said = refused(tmp_path, "check", str(tmp_path / "open.csv"), "--date", "2026-06-15", "--control",
                   str(tmp_path / "off.csv"))
    assert "does not match its control report off.csv" in said
    assert "water: the control report says $231.12; the file holds $231.13 (a difference of $0.01)" in said
    assert "owed" not in said.split("water:")[1]  # only what differs is named (owed was given as 253.44)
    before = counts()
    said = refused(tmp_path, "post", str(tmp_path / "open.csv"), "--cutover", "2026-06-15", "--control",
                   str(tmp_path / "off.csv"))
    assert "a difference of $0.01" in said and counts() == before


def test_a_control_report_with_a_bad_row_is_refused_by_line(accounts, tmp_path):
    (tmp_path / "open.csv").write_text(CLEAN)
    (tmp_path / "bad.csv").write_text("total,value\nacounts,3\nwater,12.345\nopen_bills,2.5\n")
    said = refused(tmp_path, "check", str(tmp_path / "open.csv"), "--date", "2026-06-15", "--control",
                   str(tmp_path / "bad.csv"))
    assert "line 2" in said and "'acounts' is not a control total" in said
    assert "line 3" in said and "'12.345' has more than cents" in said
    assert "line 4" in said and "open_bills is a count" in said


@pytest.mark.parametrize("through_mapping", [False, True])
def test_one_whitespace_rule_spaces_around_a_value_are_trimmed_a_tab_is_refused(accounts, tmp_path,
                                                                                through_mapping):
    """Every CSV the system reads follows one rule (``core.csvimport.TRIMMED``): plain spaces around a value or a
    header name are trimmed, any other whitespace is refused naming it — the opening balances as written or
    through a mapping, and the old system's control report."""
    from tests.conversion.test_check import CONTROL

    def export(text: str) -> str:
        if not through_mapping:
            return text
        return text.replace(HEADER, "ACCT_NO ,BILL_NUMBER,BILL_DT,DUE_DT,CHG_CODE,AMT,MEMO\n").replace(
            ",water,", ",WA,").replace(",penalty,", ",PN,").replace(",fee,", ",FE,").replace(
            ",credit,", ",CR,").replace(",deposit,", ",DP,").replace("2026-02-01,2026-03-01", "02/01/2026,03/01/2026"
                                                                    ).replace("2026-05-01,2026-06-01",
                                                                              "05/01/2026,06/01/2026")

    mapping = ("--mapping", str(MAPPING)) if through_mapping else ()
    spaced = (CLEAN if through_mapping else CLEAN.replace(HEADER, "account_no ,bill_no,bill_date,due_date,kind,"
                                                                  "amount,description\n")
              ).replace("1-0002,L-2", "1-0002  ,L-2 ").replace("45.00,Minimum", " 45.00 ,Minimum ")
    (tmp_path / "control.csv").write_text(CONTROL.replace("water,231.13", " water , 231.13 "))
    said = check(tmp_path, export(spaced), *mapping, "--control", str(tmp_path / "control.csv"))
    assert "no problems in 6 rows" in said
    def refused(text: str, *args: str) -> str:
        (tmp_path / "open.csv").write_text(text)
        err = io.StringIO()
        with pytest.raises(CommandError):
            call_command("convert", "check", str(tmp_path / "open.csv"), "--date", "2026-06-15", *args,
                         stdout=io.StringIO(), stderr=err)
        return err.getvalue()

    tabbed = CLEAN.replace("1-0002,L-2,2026-05-01,2026-06-01,fee", "1-0002\t,L-2,2026-05-01,2026-06-01,fee")
    assert "line 5: account_no: contains a control character (U+0009, a tab)" in refused(export(tabbed), *mapping)
    (tmp_path / "control.csv").write_text(CONTROL.replace("water,231.13", "water,231.13\t"))
    assert "value: contains a control character (U+0009, a tab)" in refused(CLEAN, "--control",
                                                                           str(tmp_path / "control.csv"))


FIXTURES = Path(settings.BASE_DIR) / "fixtures" / "conversion"
CLEAN_TOTALS = {"rows": 6, "accounts": 3, "open_bills": 2,
                "by_kind": {"water": "231.13", "sewer": "0.00", "fee": "25.00", "fine": "0.00", "penalty": "9.31",
                            "interest": "0.00", "credit": "12.00", "deposit": "250.00"},
                "charges": "265.44", "owed": "253.44", "deposits_held": "250.00"}


@pytest.mark.parametrize("layout", ["open_invoices", "aged_receivables"])
def test_the_worked_mappings_of_two_more_export_layouts_read_as_the_opening_balances(accounts, tmp_path, layout):
    """An accounting package's open invoices (YYYYMMDD dates, a bill total on each row) and a utility package's
    aged receivables (day-month name-year dates, no total) read through their shipped mappings hold what the
    worked opening balances hold, to the cent."""
    export = (FIXTURES / f"{layout}_export.csv").read_text()
    said = check(tmp_path, export, "--mapping", str(FIXTURES / f"{layout}_mapping.toml"), "--json")
    assert json.loads(said) == CLEAN_TOTALS


def test_a_bill_total_column_must_equal_the_bills_rows(accounts, tmp_path):
    """Where an export gives each bill's total, its rows must add up to it to the cent; the total is the same on
    every row of a bill and none is given for a credit or a deposit."""
    mapping = ("--mapping", str(FIXTURES / "open_invoices_mapping.toml"))
    export = (FIXTURES / "open_invoices_export.csv").read_text()
    cent_off = export.replace("Late penalty 5%,195.44", "Late penalty 5%,195.45").replace(
        "Water first half,195.44", "Water first half,195.45")
    (tmp_path / "open.csv").write_text(cent_off)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(tmp_path / "open.csv"), "--date", "2026-06-15", *mapping,
                     stdout=io.StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        "line 2: bill_total: bill INV-000101's rows add up to $195.44 but its total says $195.45 (a difference of "
        "$0.01); the export's lines and its total must agree"]
    mixed = export.replace("Meter test,70.00", "Meter test,70.01").replace("Overpayment,", "Overpayment,12.00")
    (tmp_path / "open.csv").write_text(mixed)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(tmp_path / "open.csv"), "--date", "2026-06-15", *mapping,
                     stdout=io.StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        "line 5: bill_total: bill INV-000214 totals $70.00 on line 4; every row of a bill gives its same total",
        "line 6: bill_total: a credit is on no bill: leave its bill total blank"]


def test_a_past_bills_total_must_equal_its_charges(accounts, tmp_path):
    history = ("account_no,bill_no,bill_date,due_date,period_start,period_end,gallons,kind,amount,bill_total\n"
               "1-0001,H-1,2025-08-01,2025-09-01,2025-01-10,2025-07-10,62500,water,186.13,211.13\n"
               "1-0001,H-1,2025-08-01,2025-09-01,2025-01-10,2025-07-10,62500,fee,25.00,211.13\n"
               "1-0002,H-2,2025-08-01,2025-09-01,2025-01-10,2025-07-10,10000,water,45.00,45.10\n")
    (tmp_path / "history.csv").write_text(history)
    (tmp_path / "open.csv").write_text(CLEAN)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(tmp_path / "open.csv"), "--history", str(tmp_path / "history.csv"),
                     "--date", "2026-06-15", stdout=io.StringIO(), stderr=err)
    assert ("line 4: history.bill_total: bill H-2's rows add up to $45.00 but its total says $45.10 (a difference "
            "of $0.10)") in err.getvalue()
    assert "H-1" not in err.getvalue()
