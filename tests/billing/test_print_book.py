"""``print_book``: paperless accounts are emailed, so their bills stay out of the mail-house file unless asked."""

import io

import pytest
from django.core.management import CommandError, call_command

from tests.billing.test_pdf import needs_poppler, run, text_of, worked_example_account
from tests.factories import CustomerFactory

pytestmark = pytest.mark.django_db


def print_book(tmp_path, *args):
    out, stdout = tmp_path / "book1.pdf", io.StringIO()
    call_command("print_book", "1", "--date", "2026-02-01", "--out", str(out), "--no-progress", *args, stdout=stdout)
    owners = [line.split("Owner of ")[1].split()[0] for line in text_of(out.read_bytes()).splitlines()
              if "Owner of " in line]
    return stdout.getvalue(), sorted(set(owners))


@pytest.fixture
def book_with_a_paperless_account(mineola):
    for number, paperless in (("1-00010", False), ("1-00020", True), ("1-00030", False)):
        worked_example_account(account_no=number, owner=CustomerFactory(name=f"Owner of {number}"),
                               paperless=paperless)
    run("run_billing", "--date", "2026-02-01")


@needs_poppler
def test_paperless_accounts_are_left_out_and_counted_by_default(tmp_path, book_with_a_paperless_account):
    output, owners = print_book(tmp_path)
    assert owners == ["1-00010", "1-00030"]
    assert "Wrote 2 bills of book 1 dated 2026-02-01" in output
    assert "Left out 1 bill of paperless accounts, which are emailed (--include-paperless prints them too)" in output
    _, owners = print_book(tmp_path, "--exclude-paperless")  # the old flag, now the default, still works
    assert owners == ["1-00010", "1-00030"]


@needs_poppler
def test_include_paperless_prints_every_bill(tmp_path, book_with_a_paperless_account):
    output, owners = print_book(tmp_path, "--include-paperless")
    assert owners == ["1-00010", "1-00020", "1-00030"]
    assert "Wrote 3 bills" in output and "Left out" not in output


def test_a_book_of_only_paperless_accounts_prints_nothing_and_says_why(tmp_path, mineola):
    worked_example_account(account_no="1-00010", paperless=True)
    run("run_billing", "--date", "2026-02-01")
    with pytest.raises(CommandError, match=r"every bill of book 1 dated 2026-02-01 \(1\) is for a paperless account"):
        call_command("print_book", "1", "--date", "2026-02-01", "--out", str(tmp_path / "b.pdf"), stdout=io.StringIO())
    assert not (tmp_path / "b.pdf").exists()


@needs_poppler
def test_a_paperless_account_with_no_address_to_email_is_printed(tmp_path, mineola):
    """Paperless ticked for an owner with no address on file and nobody linked online: the bill would reach
    nobody, so it goes in the mail; once a customer links the account online, it is emailed."""
    from accounts.models import Account, PortalLink
    from tests.portal.conftest import customer

    for number, email in (("1-00010", "ten@example.org"), ("1-00020", "")):
        worked_example_account(account_no=number, owner=CustomerFactory(name=f"Owner of {number}", email=email),
                               paperless=True)
    run("run_billing", "--date", "2026-02-01")
    output, owners = print_book(tmp_path)
    assert owners == ["1-00020"] and "Left out 1 bill of paperless accounts" in output
    PortalLink.objects.create(user=customer("twenty@example.org"), account=Account.objects.get(account_no="1-00020"))
    with pytest.raises(CommandError, match="every bill of book 1 dated 2026-02-01 \\(2\\) is for a paperless"):
        print_book(tmp_path)
