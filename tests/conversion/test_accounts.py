"""The accounts from another system: its account master read through the worked mapping's [accounts] tables
(columns, class, meter-size and status codes, month/day/year dates) and imported by the accounts import, all or
nothing; a closed account is left out and every line keeps its number."""

import io
from datetime import date
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import Account
from conversion.account_file import accounts_convert
from conversion.opening import mapping_load, mapping_parse
from core.errors import ApplicationError
from meters.models import Installation
from tests.conversion.test_check import counts

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: conversion")]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "conversion"
MAPPING = FIXTURES / "example_mapping.toml"
EXPORT = FIXTURES / "example_accounts.csv"


def convert(text: str | None = None, *, mapping=None):
    source = EXPORT.read_bytes() if text is None else text.encode()
    return accounts_convert(source, mapping=(mapping or mapping_load(MAPPING)).accounts, as_of=date(2026, 6, 30))


def test_the_worked_export_converts_with_the_worked_mapping(mineola):
    converted = convert()
    assert (converted.result.created, converted.closed) == (4, 1)
    accounts = {a.account_no: a for a in Account.objects.select_related("owner", "occupant")}
    assert sorted(accounts) == ["00-0123", "00-0124", "00-0125", "00-0126"]  # 00-0127 was closed: left out
    assert [(n, a.book, a.category, a.status) for n, a in sorted(accounts.items())] == [
        ("00-0123", 1, "one_two_family", "active"), ("00-0124", 1, "other", "active"),
        ("00-0125", 2, "one_two_family", "vacant"), ("00-0126", 2, "nonprofit", "active")]
    deli = accounts["00-0124"]
    assert (deli.owner.name, deli.owner.mailing_address, deli.occupant.name) == (
        "Main Street Holdings, LLC", "PO Box 7\nGarden City, NY 11530", "Corner Deli")
    meters = {i.account.account_no: (i.meter.size, i.meter.unit, i.installed_on)
              for i in Installation.objects.select_related("meter", "account")}
    assert meters["00-0124"] == ("1 1/2", "gal", date(2026, 1, 2))
    assert meters["00-0126"] == ("1", "gal", date(2026, 2, 1))
    # The same export again changes nothing.
    again = convert()
    assert (again.result.created, again.result.skipped) == (0, 4)


def test_an_unknown_code_or_bad_value_names_its_line_and_nothing_is_saved(mineola):
    text = EXPORT.read_text()
    text = text.replace("02/01/2026,V", "02/01/2026,X")  # 00-0125, line 4 (a quoted address spans two rows)
    text = text.replace("M-0126,10,", "M-0126,99,")  # 00-0126: size code 99 is no size
    before = counts()
    with pytest.raises(ApplicationError) as refused:
        convert(text)
    assert [str(e) for e in refused.value.errors] == [
        "line 4: accounts.status: 'X' is not a status the mapping names ([accounts.statuses]: A, V, I) nor one of "
        "active, vacant, closed"]
    text = text.replace("02/01/2026,X", "02/01/2026,V")
    with pytest.raises(ApplicationError) as refused:
        convert(text)
    said = [str(e) for e in refused.value.errors]
    assert len(said) == 1 and said[0].startswith("line 5: meter_size: '99' is not a meter size")
    assert counts() == before


def test_a_mapping_that_names_what_is_not_there_is_refused():
    with pytest.raises(ApplicationError,
                       match=r"\[accounts.categories\] R = 'house' is not one of one_two_family"):
        mapping_parse(b'[accounts.categories]\nR = "house"\n', name="m.toml")
    with pytest.raises(ApplicationError, match=r"\[accounts.meter_sizes\] 06 = '7/8' is not a meter size"):
        mapping_parse(b'[accounts.meter_sizes]\n"06" = "7/8"\n', name="m.toml")
    with pytest.raises(ApplicationError, match=r"\[accounts.columns\] tenant: not a column of the accounts"):
        mapping_parse(b'[accounts.columns]\ntenant = "TENANT"\n', name="m.toml")


def test_the_command_imports_the_export(mineola, tmp_path):
    out = io.StringIO()
    call_command("convert", "accounts", str(EXPORT), "--mapping", str(MAPPING), "--date", "2026-06-30", stdout=out)
    assert "4 created" in out.getvalue() and "1 closed account left out" in out.getvalue()
    bad = tmp_path / "bad.csv"
    bad.write_text(EXPORT.read_text().replace("ACCT,", "ACCOUNT,"))
    with pytest.raises(CommandError, match="refused"):
        call_command("convert", "accounts", str(bad), "--mapping", str(MAPPING), stdout=io.StringIO(),
                     stderr=io.StringIO())


def test_the_conversion_page_imports_the_accounts_as_a_job(mineola, admin_client, media,
                                                            django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from core.models import ImportJob

    page = reverse("admin:conversion")
    assert 'id="conversion-accounts"' in admin_client.get(page).content.decode()
    bad_mapping = SimpleUploadedFile("m.toml", b'[accounts.statuses]\nA = "open"\n')
    refused = admin_client.post(page, {"form": "accounts", "accounts-as_of": "2026-06-30",
                                       "accounts-file": SimpleUploadedFile("accounts.csv", EXPORT.read_bytes()),
                                       "accounts-mapping": bad_mapping})
    assert refused.status_code == 200 and "[accounts.statuses] A = &#x27;open&#x27; is not one of active" in \
        refused.content.decode()
    assert not Account.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(page, {
            "form": "accounts", "accounts-as_of": "2026-06-30",
            "accounts-file": SimpleUploadedFile("accounts.csv", EXPORT.read_bytes()),
            "accounts-mapping": SimpleUploadedFile("example_mapping.toml", MAPPING.read_bytes())})
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response.url == reverse("admin:accounts_account_import_job",
                                                                   args=[job.pk])
    assert (job.status, job.created) == ("done", 4) and Account.objects.count() == 4
    shown = admin_client.get(response.url).content.decode()
    assert "1 closed account of the export left out." in shown


def test_a_closed_account_that_still_owes_comes_over_closed_with_its_final_bill(mineola, tmp_path):
    """With the day each closed (the mapping's ``[accounts.columns] closed_on``) a closed account comes over
    closed, its meter out that day, and its final bill in the opening balances is owed on it: listed by the
    statement and the aging like any bill, never billed again."""
    from billing.models import Bill
    from tests.billing.steps import statement

    export = EXPORT.read_text().replace(",START_DT,STAT\n", ",START_DT,STAT,CLOSED_DT\n")
    lines = export.splitlines()
    export = "\n".join(f"{line},05/15/2026" if line.endswith(",I") else f"{line}," if line.endswith((",A", ",V"))
                       else line for line in lines) + "\n"
    mapping = mapping_parse(MAPPING.read_bytes().replace(b'status = "STAT"', b'status = "STAT"\nclosed_on = '
                                                                             b'"CLOSED_DT"'), name="closed.toml")
    converted = convert(export, mapping=mapping)
    assert (converted.result.created, converted.closed) == (5, 0)
    closed = Account.objects.get(account_no="00-0127")
    assert (closed.status, closed.closed_on) == ("closed", date(2026, 5, 15))
    assert Installation.objects.get(account=closed).removed_on == date(2026, 5, 15)
    assert convert(export, mapping=mapping).result.skipped == 5  # the same export again changes nothing
    opening = tmp_path / "open.csv"
    opening.write_text("account_no,bill_no,bill_date,due_date,kind,amount,description\n"
                       "00-0127,F-127,2026-05-20,2026-06-19,water,58.40,Final bill\n")
    out = io.StringIO()
    call_command("convert", "post", str(opening), "--cutover", "2026-06-15", stdout=out)
    assert "posted conversion" in out.getvalue()
    final = Bill.objects.get(number="F-127")
    assert (final.account, final.converted_on) == (closed, date(2026, 6, 15))
    said = statement("00-0127", "2026-07-01")
    assert said["balance"] == "58.40" and Account.objects.get(account_no="00-0127").status == "closed"
    # Without the closing day the file is refused, naming the column.
    bare = export.replace(",I,05/15/2026", ",I,")
    with pytest.raises(ApplicationError) as refused:
        convert(bare.replace("00-0127", "00-0128").replace("M-0127", "M-0128"), mapping=mapping)
    assert [(e.field, e.message) for e in refused.value.errors] == [
        ("closed_on", "is required for a closed account: the day it closed")]


def test_a_mapping_is_held_to_its_registry_every_table_and_key():
    """Unknown tables and keys are refused naming the known ones and the nearest; every refusal at once."""
    with pytest.raises(ApplicationError) as refused:
        mapping_parse(b'[colums]\nacct = "A"\n[accounts]\nstatus = { A = "active" }\n'
                      b'[accounts.dates]\nformat = "mdY"\n', name="m.toml")
    said = str(refused.value)
    assert "[colums] is not a table of a mapping; known tables: accounts, columns, dates, kinds (did you mean " \
           "columns?)" in said
    assert "[accounts] status is not a key of this table; known keys: categories, columns, dates, meter_sizes, " \
           "statuses (did you mean statuses?)" in said
    assert "[accounts.dates] format 'mdY': a strftime format such as %m/%d/%Y" in said


def test_the_mapping_doc_is_written_from_the_registry():
    from conversion.mapping_doc import DOC, mapping_doc

    assert DOC.read_text() == mapping_doc(), "run `manage.py mapping_docs --write`"
    for key in ("[columns]", "[kinds]", "[dates]", "[accounts]", "`meter_sizes`", "`statuses`"):
        assert key in DOC.read_text()
