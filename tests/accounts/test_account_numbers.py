"""An account number is found with or without its dash (and in any case): at the counter, in the account search,
when a customer links it online or pays from the bill. Two numbers that differ only by their dashes are ambiguous:
neither is guessed."""

from datetime import date

import pytest

from accounts.selectors import account_find, account_no_key, account_search
from billing.cash import counter_account
from tests.factories import AccountFactory

pytestmark = pytest.mark.django_db


def test_typed_with_or_without_the_dash():
    account = AccountFactory(account_no="1-00042")
    assert account_no_key(" 1-00042 ") == account_no_key("100042") == "100042"
    for typed in ("1-00042", "100042", "1 00042", " 1-00042 "):
        assert account_find(typed) == account, typed
    assert account_find("1-00043") is None and account_find("") is None and account_find("--") is None
    assert list(account_search(q="100042")) == [account]
    assert counter_account(account_no="100042", as_of=date(2026, 2, 1)).account_no == "1-00042"


def test_two_numbers_alike_but_for_the_dash_are_not_guessed():
    AccountFactory(account_no="1-00042")
    AccountFactory(account_no="10-0042")
    assert account_find("100042") is None
    assert account_find("1-00042").account_no == "1-00042"  # as written, it is exact


def test_a_customer_links_the_account_typed_without_its_dash(mineola):
    from portal.services import account_link
    from tests.portal.conftest import customer

    account = AccountFactory(account_no="1-00042")
    linked = account_link(user=customer("pat@example.org"), account_no="100042", access_code=account.access_code)
    assert linked == account
