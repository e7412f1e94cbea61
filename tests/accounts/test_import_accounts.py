"""``import_accounts`` and the Account admin's upload page: all or nothing, every bad line named."""

import csv
import io
from datetime import date
from decimal import Decimal
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from accounts.models import Account, Customer, Ownership, Premises
from meters.models import Installation, Meter, Reading
from tests.factories import InstallationFactory, ReadingFactory

AS_OF = "2026-06-30"
COLUMNS = ["account_no", "book", "category", "owner_name", "owner_address", "occupant_name",
           "service_address", "sbl", "meter_serial", "meter_size", "meter_unit", "initial_reading",
           "initial_read_date"]


def row(**overrides) -> dict:
    values = {
        "account_no": "1-0001", "book": "1", "category": "one_two_family", "owner_name": "Ada Lovelace",
        "owner_address": "12 Main Street\nMineola, NY 11501", "occupant_name": "",
        "service_address": "12 Main Street", "sbl": "9-12-3", "meter_serial": "M1", "meter_size": "5/8",
        "meter_unit": "gal", "initial_reading": "1000", "initial_read_date": "2026-01-02",
    }
    values.update(overrides)
    return values


def csv_text(*rows: dict, columns=COLUMNS) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


TWO_ACCOUNTS = (
    row(),
    row(account_no="2-0002", book="2", category="other", owner_name="Main Street Holdings, LLC",
        owner_address="PO Box 7, Garden City, NY 11530", occupant_name="Corner Deli",
        service_address="1 Front St", sbl="", meter_serial="CF-9", meter_size="1.5", meter_unit="cf",
        initial_reading="0", initial_read_date="2026-02-01"),
)


def table_counts() -> dict[str, int]:
    return {model._meta.label: model._default_manager.count() for model in apps.get_models()}


def run(tmp_path, content: str | bytes, *args: str) -> str:
    path = tmp_path / "accounts.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    out = StringIO()
    call_command("import_accounts", str(path), "--date", AS_OF, "--no-progress", *args, stdout=out,
                 stderr=StringIO())
    return out.getvalue()


def rejected(tmp_path, content: str | bytes) -> tuple[str, str]:
    """Run an import expected to fail; returns (the CommandError message, the listed errors)."""
    before = table_counts()
    path = tmp_path / "bad.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    err = StringIO()
    with pytest.raises(CommandError) as excinfo:
        call_command("import_accounts", str(path), "--date", AS_OF, "--no-progress", stdout=StringIO(),
                     stderr=err)
    assert table_counts() == before, "a rejected file must change nothing"
    return str(excinfo.value), err.getvalue()


def test_creates_each_account_with_owner_occupant_premises_meter_and_first_reading(tmp_path, db):
    out = run(tmp_path, csv_text(*TWO_ACCOUNTS))
    assert "accounts 2 created, 0 updated, 0 skipped" in out

    first = Account.objects.select_related("owner", "premises").get(account_no="1-0001")
    assert (first.book, first.category, first.opened_on, first.occupant) == (1, "one_two_family",
                                                                             date(2026, 1, 2), None)
    assert first.owner.name == "Ada Lovelace"
    assert first.owner.mailing_address == "12 Main Street\nMineola, NY 11501"
    assert (first.premises.service_address, first.premises.sbl) == ("12 Main Street", "9-12-3")
    assert list(first.ownerships.values_list("owner__name", "started_on", "ended_on")) == [
        ("Ada Lovelace", date(2026, 1, 2), None)]
    [installation] = first.installations.select_related("meter")
    meter = installation.meter
    assert (meter.serial, meter.size, meter.unit) == ("M1", "5/8", "gal")
    assert (installation.installed_on, installation.removed_on) == (date(2026, 1, 2), None)
    assert list(installation.meter.readings.values_list("read_on", "value", "read_type", "source")) == [
        (date(2026, 1, 2), 1000, "actual", "install")]

    second = Account.objects.select_related("owner", "occupant", "premises").get(account_no="2-0002")
    assert second.owner.mailing_address == "PO Box 7, Garden City, NY 11530"  # commas kept, one line
    assert (second.occupant.name, second.occupant.mailing_address) == ("Corner Deli", "1 Front St")
    assert second.premises.sbl == ""
    meter = Meter.objects.get(serial="CF-9")
    assert (meter.size, meter.unit) == ("1 1/2", "cf")  # "1.5" normalized; a cubic-foot meter
    assert meter.readings.get().value == 0

    assert Customer.history.filter(history_change_reason__startswith="import_accounts").count() == 3
    assert Reading.history.count() == 2


def test_owner_address_may_use_a_written_newline(tmp_path, db):
    run(tmp_path, csv_text(row(owner_address="12 Main Street\\nMineola, NY 11501")))
    assert Customer.objects.get().mailing_address == "12 Main Street\nMineola, NY 11501"


@pytest.mark.parametrize(("given", "stored"), [("1 1/2", "1 1/2"), ("1.5", "1 1/2"), ("3/4", "3/4"),
                                               ('2"', "2"), ("0.625", "5/8")])
def test_meter_size_is_normalized(tmp_path, db, given, stored):
    run(tmp_path, csv_text(row(meter_size=given)))
    assert Meter.objects.get().size == stored


def test_reimporting_the_same_file_changes_nothing(tmp_path, db):
    content = csv_text(*TWO_ACCOUNTS)
    run(tmp_path, content)
    before = table_counts()
    out = run(tmp_path, content)
    assert "accounts 0 created, 0 updated, 2 skipped" in out
    assert table_counts() == before


def test_reimport_updates_names_and_addresses(tmp_path, db):
    run(tmp_path, csv_text(*TWO_ACCOUNTS))
    first, second = TWO_ACCOUNTS
    out = run(tmp_path, csv_text(
        {**first, "owner_name": "ADA  LOVELACE", "owner_address": "1 New Road\nMineola, NY 11501",
         "occupant_name": "Tenant One", "service_address": "12 Main St", "sbl": "9-12-4"},
        {**second, "owner_name": "Buyer Inc.", "owner_address": "5 Elm St", "occupant_name": ""},
    ), "--user", get_user_model().objects.create_user("clerk").username)
    assert "accounts 0 created, 2 updated, 0 skipped" in out

    first_account = Account.objects.select_related("owner", "occupant", "premises").get(account_no="1-0001")
    # Same person (case and spacing aside): the record is corrected in place, no change of owner.
    owner = first_account.owner
    assert (owner.name, owner.mailing_address) == ("ADA LOVELACE", "1 New Road\nMineola, NY 11501")
    assert first_account.ownerships.count() == 1
    occupant = first_account.occupant
    assert (occupant.name, occupant.mailing_address) == ("Tenant One", "12 Main St")
    assert (first_account.premises.service_address, first_account.premises.sbl) == ("12 Main St", "9-12-4")

    second_account = Account.objects.select_related("owner").get(account_no="2-0002")
    assert second_account.owner.name == "Buyer Inc."
    assert second_account.occupant is None
    assert list(second_account.ownerships.order_by("started_on").values_list("owner__name", "started_on",
                                                                             "ended_on")) == [
        ("Main Street Holdings, LLC", date(2026, 2, 1), date(2026, 6, 30)),
        ("Buyer Inc.", date(2026, 6, 30), None)]
    assert Customer.objects.filter(name="Main Street Holdings, LLC").exists()  # the former owner is kept
    change = second_account.history.first()
    assert (change.history_user.username, change.history_type) == ("clerk", "~")

    before = table_counts()
    out = run(tmp_path, csv_text(
        {**first, "owner_name": "ADA LOVELACE", "owner_address": "1 New Road\nMineola, NY 11501",
         "occupant_name": "Tenant One", "service_address": "12 Main St", "sbl": "9-12-4"},
        {**second, "owner_name": "Buyer Inc.", "owner_address": "5 Elm St", "occupant_name": ""}))
    assert "accounts 0 created, 0 updated, 2 skipped" in out
    assert table_counts() == before


def test_several_bad_rows_are_all_listed_and_nothing_is_saved(tmp_path, db):
    message, listed = rejected(tmp_path, csv_text(
        row(),                                                        # line 2: fine
        row(account_no="1-0002", book="11", meter_serial="M2"),       # line 3
        row(account_no="1-0003", category="house", meter_unit="litres", meter_serial="M3"),  # line 4
        row(account_no="1-0001", meter_serial="M4", book="2"),        # line 5: a second meter, another book
    ))
    assert "rejected with 4 error(s) on 3 line(s); nothing was saved" in message
    assert listed.splitlines() == [
        "line 3: book: 11 is above 10",
        "line 4: category: 'house' is not one of one_two_family, other, nonprofit",
        "line 4: meter_unit: 'litres' is not one of gal, cf",
        "line 5: book: account 1-0001 is also on line 2 (one row per meter), with book 1; every row of an "
        "account gives the same account columns",
    ]


@pytest.mark.parametrize(("overrides", "column", "rule"), [
    ({"account_no": ""}, "account_no", "is required"),
    ({"account_no": "X" * 21}, "account_no", "is 21 characters long; at most 20 allowed"),
    ({"book": "0"}, "book", "0 is below 1"),
    ({"book": "11"}, "book", "11 is above 10"),
    ({"book": "one"}, "book", "'one' is not a whole number"),
    ({"category": "residential"}, "category", "'residential' is not one of one_two_family, other, nonprofit"),
    ({"category": ""}, "category", "is blank; it must be one of one_two_family, other, nonprofit"),
    ({"owner_name": ""}, "owner_name", "is required"),
    ({"owner_address": " "}, "owner_address", "is required (the owner's mailing address)"),
    ({"service_address": ""}, "service_address", "is required"),
    ({"sbl": "9" * 41}, "sbl", "is 41 characters long; at most 40 allowed"),
    ({"meter_serial": ""}, "meter_serial", "is required"),
    ({"meter_size": "7/8"}, "meter_size", "'7/8' is not a meter size; use one of 5/8, 3/4, 1, 1 1/2"),
    ({"meter_size": ""}, "meter_size", "is required"),
    ({"meter_unit": "m3"}, "meter_unit", "'m3' is not one of gal, cf"),
    ({"initial_reading": "-3"}, "initial_reading", "-3 is negative; must be 0 or more"),
    ({"initial_reading": "12.5"}, "initial_reading", "'12.5' is not a whole number"),
    ({"initial_reading": ""}, "initial_reading", "is required"),
    ({"initial_read_date": "1/2/2026"}, "initial_read_date", "'1/2/2026' is not a date; use YYYY-MM-DD"),
    ({"initial_read_date": "2026-07-01"}, "initial_read_date",
     "2026-07-01 is after the import date 2026-06-30; nothing is recorded in the future"),
    # A clerk's slips, refused rather than read as something else.
    ({"account_no": "1-00\n01"}, "account_no", "contains a control character (U+000A, a line break) at character 5"),
    ({"account_no": "1-\u200b0001"}, "account_no", "contains an invisible character (U+200B ZERO WIDTH SPACE)"),
    ({"owner_name": "Ada\x00 Lovelace"}, "owner_name", "contains a NUL character (\\x00), which is not text"),
    ({"owner_name": "Ada\x07 Lovelace"}, "owner_name", "contains a control character (U+0007)"),
    ({"owner_address": "12 Main\x1b Street\nMineola"}, "owner_address", "contains a control character (U+001B)"),
    ({"occupant_name": "Kevin \u202eWalsh"}, "occupant_name", "contains a control character (U+202E"),
    ({"service_address": "12 Main\x7fStreet"}, "service_address", "contains a control character (U+007F)"),
    ({"sbl": "9-12\x0b-3"}, "sbl", "contains a control character (U+000B"),
    ({"meter_serial": "M\t1"}, "meter_serial", "contains a control character (U+0009, a tab) at character 2"),
    ({"initial_reading": "10000000000"}, "initial_reading",
     "10000000000 is more than a meter register holds (10 digits: at most 9,999,999,999)"),
    ({"initial_reading": "1_000"}, "initial_reading", "'1_000' is not a whole number"),
    ({"initial_reading": "١٠٠٠"}, "initial_reading", "is not a whole number"),
    ({"initial_read_date": "0026-01-02"}, "initial_read_date", "the year 0026 is before 1900; check the year"),
    ({"initial_read_date": "20260102"}, "initial_read_date", "'20260102' is not a date; use YYYY-MM-DD"),
])
def test_each_rule_names_line_column_and_rule(tmp_path, db, overrides, column, rule):
    _, listed = rejected(tmp_path, csv_text(row(**overrides)))
    assert listed.startswith(f"line 2: {column}: ")
    assert rule in listed


def test_duplicate_meter_serial_in_the_file(tmp_path, db):
    _, listed = rejected(tmp_path, csv_text(row(), row(account_no="1-0002")))
    assert listed.strip() == ("line 3: meter_serial: 'M1' is already on line 2 of this file; "
                              "each meter_serial may appear once")


def test_meter_installed_on_another_account(tmp_path, db):
    InstallationFactory(meter__serial="M1", account__account_no="9-9999", installed_on=date(2025, 5, 1))
    _, listed = rejected(tmp_path, csv_text(row()))
    assert listed.strip() == ("line 2: meter_serial: meter M1 is installed on account 9-9999 "
                              "(since 2025-05-01); remove it there first")


def test_a_meter_in_stock_is_installed_again(tmp_path, db):
    installation = InstallationFactory(meter__serial="M1", account__account_no="9-9999",
                                       installed_on=date(2025, 5, 1), removed_on=date(2025, 12, 1))
    ReadingFactory(meter=installation.meter, read_on=date(2025, 12, 1), value=900, read_type="final")
    out = run(tmp_path, csv_text(row()))
    assert "1 created" in out
    assert Meter.objects.count() == 1
    assert Installation.objects.get(removed_on=None).account.account_no == "1-0001"
    assert list(Reading.objects.order_by("read_on").values_list("value", flat=True)) == [900, 1000]


@pytest.mark.parametrize(("overrides", "column", "rule"), [
    ({"meter_size": "3/4"}, "meter_size", 'meter M1 is on file as 5/8"; the file says 3/4"'),
    ({"meter_unit": "cf"}, "meter_unit", "meter M1 is on file reading in gal; the file says cf"),
    ({"initial_read_date": "2025-11-30"}, "initial_read_date",
     "meter M1 was on account 9-9999 until 2025-12-01; it can be installed again only on or after that date"),
    ({"initial_reading": "899"}, "initial_reading",
     "899 is lower than meter M1's last reading 900 on 2025-12-01; a meter's readings never go down"),
])
def test_a_meter_in_stock_must_match(tmp_path, db, overrides, column, rule):
    installation = InstallationFactory(meter__serial="M1", account__account_no="9-9999",
                                       installed_on=date(2025, 5, 1), removed_on=date(2025, 12, 1))
    ReadingFactory(meter=installation.meter, read_on=date(2025, 12, 1), value=900, read_type="final")
    _, listed = rejected(tmp_path, csv_text(row(**overrides)))
    assert listed.strip() == f"line 2: {column}: {rule}"


@pytest.mark.parametrize(("overrides", "column", "recorded"), [
    ({"book": "3"}, "book", "account 1-0001 is recorded with book 1, the file says 3"),
    ({"category": "other"}, "category", "account 1-0001 is recorded with category one_two_family"),
    ({"meter_size": "1"}, "meter_size", "meter M1 on account 1-0001 is recorded with meter_size 5/8"),
    ({"initial_reading": "5"}, "initial_reading",
     "meter M1 on account 1-0001 is recorded with initial_reading 1000, the file says 5"),
    ({"initial_read_date": "2026-01-03"}, "initial_read_date",
     "meter M1 on account 1-0001 is recorded with initial_read_date 2026-01-02, the file says 2026-01-03"),
])
def test_an_existing_accounts_billing_columns_are_not_rewritten(tmp_path, db, overrides, column, recorded):
    run(tmp_path, csv_text(row()))
    _, listed = rejected(tmp_path, csv_text(row(**overrides)))
    assert listed.startswith(f"line 2: {column}: {recorded}")
    assert "the import only updates names and addresses; change it on the account page" in listed


def test_an_account_opens_vacant_when_the_file_says_so(tmp_path, db):
    """The optional status column: vacant or active (blank); a file without it opens accounts active and leaves
    a recorded status alone; a shut-off is never a file's."""
    columns = [*COLUMNS, "status"]
    run(tmp_path, csv_text(row(status="vacant"), row(account_no="1-0002", meter_serial="M2", status=""),
                           columns=columns))
    assert dict(Account.objects.values_list("account_no", "status")) == {"1-0001": "vacant", "1-0002": "active"}
    run(tmp_path, csv_text(row()))  # the same account again, without the column: nothing changes
    assert Account.objects.get(account_no="1-0001").status == "vacant"
    _, listed = rejected(tmp_path, csv_text(row(status="active"), columns=columns))
    assert listed.startswith("line 2: status: account 1-0001 is recorded with status vacant, the file says active")
    _, listed = rejected(tmp_path, csv_text(row(account_no="1-0003", meter_serial="M3", status="shut_off"),
                                            columns=columns))
    assert listed.strip() == "line 2: status: 'shut_off' is not one of active, vacant, closed"


def test_an_existing_account_with_a_different_meter(tmp_path, db):
    run(tmp_path, csv_text(row()))
    _, listed = rejected(tmp_path, csv_text(row(meter_serial="M7")))
    assert listed.strip() == ("line 2: meter_serial: account 1-0001 has M1 installed, not M7; a meter added to an "
                              "account already on file (a bypass or irrigation meter) or a change of meter is "
                              "recorded on the account's page, not by the file")


def test_wrong_header_is_one_error_naming_expected_and_found(tmp_path, db):
    columns = [c for c in COLUMNS if c != "sbl"]
    without_sbl = {k: v for k, v in row().items() if k != "sbl"}
    message, listed = rejected(tmp_path, csv_text(without_sbl, columns=columns))
    assert "1 error(s)" in message
    assert listed.strip() == (f"line 1: header: expected columns {','.join(COLUMNS)}[,status][,closed_on]"
                              "[,units][,district]; "
                              f"found {','.join(columns)} (missing sbl)")


def test_not_utf8_is_one_clear_error(tmp_path, db):
    content = csv_text(row(owner_name="José Núñez")).encode("latin-1")
    message, listed = rejected(tmp_path, content)
    assert "1 error(s)" in message
    assert listed.startswith("line 2: file: the file is not UTF-8 text: byte 0xE9 in this row")


def test_utf8_names_and_byte_order_mark(tmp_path, db):
    run(tmp_path, b"\xef\xbb\xbf" + csv_text(row(owner_name="José Núñez")).encode())
    assert Customer.objects.get().name == "José Núñez"


# --- the admin upload page ------------------------------------------------------------------------------

@pytest.fixture
def admin_client(client, db):
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw-for-tests-only")
    client.force_login(user)
    return client


def test_changelist_has_an_import_button(admin_client):
    response = admin_client.get(reverse("admin:accounts_account_changelist"))
    assert response.status_code == 200
    assert reverse("admin:accounts_account_import").encode() in response.content


def test_admin_upload_success(admin_client):
    url = reverse("admin:accounts_account_import")
    page = admin_client.get(url).content.decode()
    assert ",".join(COLUMNS) in page
    upload = SimpleUploadedFile("accounts.csv", csv_text(*TWO_ACCOUNTS).encode())
    response = admin_client.post(url, {"file": upload, "as_of": AS_OF}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("admin:accounts_account_changelist")
    assert "Imported accounts.csv: accounts 2 created, 0 updated, 0 skipped" in response.content.decode()
    assert Account.objects.count() == 2
    assert Account.history.filter(history_user__username="boss").count() == 2


def test_admin_upload_failure_lists_every_line(admin_client):
    before = table_counts()
    content = csv_text(row(book="0"), row(account_no="1-0002", meter_serial="M2"), row(account_no="1-0003",
                                                                                      meter_serial="M3",
                                                                                      meter_size="9"))
    upload = SimpleUploadedFile("accounts.csv", content.encode())
    response = admin_client.post(reverse("admin:accounts_account_import"), {"file": upload, "as_of": AS_OF})
    assert response.status_code == 200
    page = response.content.decode()
    assert "The file was rejected and nothing was saved: 2 errors on 2 lines." in page
    assert '<td class="line">2</td><td>book</td><td>0 is below 1</td>' in page
    assert '<td class="line">4</td><td>meter_size</td><td>&#x27;9&#x27; is not a meter size' in page
    assert table_counts() == before


def test_admin_import_needs_the_add_account_permission(client, db):
    clerk = get_user_model().objects.create_user("clerk", password="pw", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_account"))
    client.force_login(clerk)
    assert client.get(reverse("admin:accounts_account_import")).status_code == 403
    clerk.user_permissions.add(Permission.objects.get(codename="add_account"))
    assert client.get(reverse("admin:accounts_account_import")).status_code == 200


def test_admin_import_is_staff_only(client, db):
    client.force_login(get_user_model().objects.create_user("customer", password="pw"))
    response = client.get(reverse("admin:accounts_account_import"))
    assert response.status_code == 302
    assert Premises.objects.count() == Ownership.objects.count() == 0


def test_line_numbers_count_rows_even_when_an_address_spans_lines(tmp_path, db):
    content = csv_text(row(owner_address="Apt 4\n12 Main Street\nMineola, NY 11501"),
                       row(account_no="1-0002", meter_serial="M2", book="zero"))
    assert content.count("\n") == 6  # the header, then rows on three and on two text lines
    _, listed = rejected(tmp_path, content)
    assert listed.strip() == "line 3: book: 'zero' is not a whole number (digits only, no commas or decimals)"


def test_not_utf8_after_a_multi_line_address_names_the_row(tmp_path, db):
    content = csv_text(row(owner_address="Apt 4\n12 Main Street"),
                       row(account_no="1-0002", meter_serial="M2", owner_name="Zoë")).encode("latin-1")
    _, listed = rejected(tmp_path, content)
    assert listed.startswith("line 3: file: the file is not UTF-8 text: byte 0xEB in this row")


def test_a_change_of_owner_cannot_predate_the_current_owner(tmp_path, db):
    run(tmp_path, csv_text(row(initial_read_date="2026-06-01")))
    path = tmp_path / "earlier.csv"
    path.write_text(csv_text(row(initial_read_date="2026-06-01", owner_name="Somebody Else")))
    with pytest.raises(CommandError):
        call_command("import_accounts", str(path), "--date", "2026-05-01", stdout=StringIO(),
                     stderr=StringIO())
    assert Ownership.objects.count() == 1


def test_one_customer_named_differently_on_two_rows(tmp_path, db):
    run(tmp_path, csv_text(row(), row(account_no="1-0002", meter_serial="M2")))
    # A clerk has since linked both accounts to one owner record.
    shared = Account.objects.get(account_no="1-0001").owner
    Account.objects.filter(account_no="1-0002").update(owner=shared)
    _, listed = rejected(tmp_path, csv_text(row(owner_address="1 New Road"),
                                            row(account_no="1-0002", meter_serial="M2")))
    assert listed.strip() == ("line 3: owner_name: Ada Lovelace is also named on line 2 (another account), "
                              "with a different spelling or mailing address; give the same on both rows")


def test_unknown_user(tmp_path, db):
    with pytest.raises(CommandError, match="--user: no user 'ghost'"):
        run(tmp_path, csv_text(row()), "--user", "ghost")


def test_service_with_a_progress_bar(db, capsys):
    from meters.account_imports import accounts_import

    result = accounts_import(file=csv_text(row()).encode(), as_of=date(2026, 6, 30), actor=None,
                             progress=True)
    assert (result.created, result.updated, result.skipped) == (1, 0, 0)


@pytest.mark.citation("Mineola § 45.28 C(2)")
def test_an_account_with_a_bypass_meter_comes_over_on_two_rows_and_is_billed_for_both(tmp_path, mineola):
    """A sprinkler service's 5/8" bypass meter is "a meter on the account": the account is on two rows, one per
    meter, and its bill counts the water through both — 50,000 gal domestic and 12,500 through the bypass bill as
    the worked 62,500 gal: $186.13 (docs/ordinances.md)."""
    from accounts.models import Account
    from billing.models import Bill
    from meters.models import Installation, Reading

    two_meters = csv_text(row(meter_serial="DOM-1", initial_reading="1000000", initial_read_date="2025-07-10"),
                          row(meter_serial="BYP-1", initial_reading="0", initial_read_date="2025-07-10"))
    assert "accounts 1 created, 0 updated, 0 skipped" in run(tmp_path, two_meters)
    account = Account.objects.get(account_no="1-0001")
    assert sorted(Installation.objects.filter(account=account).values_list("meter__serial", flat=True)) == \
        ["BYP-1", "DOM-1"]
    assert "accounts 0 created, 0 updated, 2 skipped" in run(tmp_path, two_meters)  # the same file again
    Reading.objects.create(meter=Installation.objects.get(meter__serial="DOM-1").meter, read_on=date(2026, 1, 12),
                           value=1_050_000)
    Reading.objects.create(meter=Installation.objects.get(meter__serial="BYP-1").meter, read_on=date(2026, 1, 12),
                           value=12_500)
    call_command("run_billing", "--date", "2026-02-01", "--no-progress", stdout=StringIO())
    bill = Bill.objects.get(account=account)
    assert (bill.gallons, bill.total.amount) == (62_500, Decimal("186.13"))
    # A meter not on the account yet is not added by a file: the account's page records it.
    _, listed = rejected(tmp_path, csv_text(row(meter_serial="DOM-1", initial_reading="1000000",
                                                initial_read_date="2025-07-10"),
                                            row(meter_serial="IRR-9", initial_reading="0",
                                                initial_read_date="2025-07-10")))
    assert ("account 1-0001 has BYP-1, DOM-1 installed, not IRR-9; a meter added to an account already on file (a "
            "bypass or irrigation meter) or a change of meter is recorded on the account's page") in listed


def test_the_optional_units_column_sets_the_dwelling_units_and_a_bad_count_is_named(tmp_path, db):
    columns = [*COLUMNS, "units"]
    run(tmp_path, csv_text({**row(), "units": "3"}, {**TWO_ACCOUNTS[1], "units": ""}, columns=columns))
    assert dict(Account.objects.values_list("account_no", "units")) == {"1-0001": 3, "2-0002": 1}
    message, listed = rejected(tmp_path, csv_text({**row(account_no="3-0003", meter_serial="M3"), "units": "0"},
                                                  columns=columns))
    assert "line 2: units:" in listed and "1" in listed
    # The recorded count is the account page's to change: a file that says otherwise is refused, naming both.
    message, listed = rejected(tmp_path, csv_text({**row(), "units": "4"}, columns=columns))
    assert "account 1-0001 is recorded with units 3, the file says 4" in listed
