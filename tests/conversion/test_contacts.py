"""The owners' e-mail addresses and paperless choices brought over: checked, posted, reconciled, e-mailed from
the first bill after the cutover, and put back whole by a rollback.

1-0001 (owner Ann, no address here) chose paperless bills in the old system at ann@example.org; 1-0002 (owner
Bo, bo@old.example.org on file here) gets paper at a new address; 1-0003 (Ann's too) chose paperless at the same
address. Book 1 is billed on August 1 (§ 45.29 A, D).
"""

import io
from datetime import date

import pytest
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import Account, Customer
from billing.models import Bill
from conversion.posting import conversion_post, conversion_rollback
from conversion.reconcile import reconciliation, reconciliation_view
from core.errors import ApplicationError
from portal.notify import bills_issued_notify
from reports.render import as_json
from tests.billing.steps import account_with_meter, read, run
from tests.conversion.test_check import HEADER, counts
from tests.factories import CustomerFactory

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: conversion")]
CUTOVER = date(2026, 6, 15)
TODAY = date(2026, 12, 3)
OPEN = HEADER + "1-0002,L-200,2026-02-01,2026-03-01,water,76.00,Water\n"
CONTACTS = ("account_no,email,paperless\n"
            "1-0001,ann@example.org,Y\n"
            "1-0002,bo@new.example.org,N\n"
            "1-0003,ANN@example.org,yes\n")


@pytest.fixture
def accounts(mineola):
    ann = CustomerFactory(name="Ann", email="")
    bo = CustomerFactory(name="Bo", email="bo@old.example.org")
    made = {}
    for number, owner in (("1-0001", ann), ("1-0002", bo), ("1-0003", ann)):
        account, meter = account_with_meter(book=1, account_no=number, owner=owner)  # 1,000,000 on 2025-07-10
        made[number] = (account, meter)
    return made


def post(contacts: str = CONTACTS):
    return conversion_post(OPEN.encode(), cutover=CUTOVER, today=TODAY, contacts=contacts.encode())


def state() -> list:
    return sorted(Account.objects.values_list("account_no", "paperless", "owner__email"))


def test_addresses_and_paperless_choices_come_over_and_reconcile(accounts):
    before = state()
    batch = post().batch
    assert state() == [("1-0001", True, "ann@example.org"), ("1-0002", False, "bo@new.example.org"),
                       ("1-0003", True, "ann@example.org")]
    result = reconciliation(cutover=CUTOVER)
    assert (result.paperless, result.emails, result.matches) == ((2, 2), (3, 3), True)
    control = {row["item"]: row for row in as_json(reconciliation_view(result))["totals"]["counts"]}
    assert control["Paperless accounts"]["file_count"] == control["Paperless accounts"]["books_count"] == 2
    # Changed after posting (a clerk turned paperless off): the reconciliation shows it.
    Account.objects.filter(account_no="1-0003").update(paperless=False)
    assert reconciliation(cutover=CUTOVER).paperless == (2, 1)
    Account.objects.filter(account_no="1-0003").update(paperless=True)
    conversion_rollback(batch.pk)
    assert state() == before


def test_the_first_bill_after_the_cutover_is_emailed_to_the_owner_with_an_invitation(accounts, media):
    post()
    for _, meter in accounts.values():
        read(meter, date(2026, 7, 14), 1_030_000)
    run("run_billing", "--date", "2026-08-01")
    mail.outbox.clear()
    sent = bills_issued_notify(list(Bill.objects.filter(converted_on__isnull=True).values_list("pk", flat=True)))
    assert sent == 2 and sorted(m.to[0] for m in mail.outbox) == ["ann@example.org", "ann@example.org"]
    body = mail.outbox[0].body
    assert "/portal/signup/" in body and "access code" in body  # not signed up online yet
    assert not any(m.to == ["bo@new.example.org"] for m in mail.outbox)  # on paper


def test_a_bad_contacts_file_is_refused_naming_every_row(accounts):
    bad = ("account_no,email,paperless\n"
           "1-0001,not-an-address,Y\n"
           "1-0002,,maybe\n"
           "1-0003,,Y\n"  # Ann has no address here and the file gives none
           "9-9999,x@example.org,N\n"
           "1-0002,bo@example.org,N\n")
    before = counts()
    with pytest.raises(ApplicationError) as refused:
        post(bad)
    said = {str(e) for e in refused.value.errors}
    for expected in ("line 2: contacts.email: 'not-an-address' is not an e-mail address",
                     "line 3: contacts.paperless: 'maybe' is not yes or no",
                     "line 4: contacts.paperless: the owner of account 1-0003 has no e-mail address: paperless "
                     "bills would reach nobody; give the address in the email column or say no",
                     "line 5: contacts.account_no: unknown account '9-9999'",
                     "line 6: contacts.account_no: account 1-0002 is on line 3 too; one line per account"):
        assert expected in said, (expected, said)
    assert counts() == before


def test_an_owner_has_one_address(accounts):
    with pytest.raises(ApplicationError) as refused:
        post("account_no,email,paperless\n1-0001,ann@example.org,Y\n1-0003,ann@elsewhere.example.org,Y\n")
    assert [str(e) for e in refused.value.errors] == [
        "line 3: contacts.email: the owner of account 1-0003 also owns account 1-0001, given ann@example.org on "
        "line 2; an owner has one address"]
    assert Customer.objects.get(name="Ann").email == ""


def test_the_command_takes_the_contacts(accounts, tmp_path):
    opening, contacts = tmp_path / "open.csv", tmp_path / "contacts.csv"
    opening.write_text(OPEN)
    contacts.write_text(CONTACTS)
    out = io.StringIO()
    call_command("convert", "check", str(opening), "--contacts", str(contacts), "--date", "2026-06-14", stdout=out)
    assert "3 e-mail addresses, 2 paperless accounts" in out.getvalue()
    assert state()[0] == ("1-0001", False, "")  # check saves nothing
    contacts.write_text("account_no,email,paperless\n1-0001,,Y\n")
    with pytest.raises(CommandError):
        call_command("convert", "post", str(opening), "--contacts", str(contacts), "--cutover", "2026-06-15",
                     stdout=io.StringIO(), stderr=io.StringIO())
    assert not Account.objects.filter(paperless=True).exists()
