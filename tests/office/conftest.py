from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from billing.ledger.selectors import account_balances
from billing.services.payments import payment_post
from tests.termination.steps import delinquent_account


@pytest.fixture
def overpaid(mineola):
    """Mineola's worked bill: $186.13 billed 2026-02-01, due March 1, paid with $250.00 on Feb 20: a credit of
    $63.87."""
    account, bill = delinquent_account(occupant=False)
    payment_post(account_no=account.account_no, amount=Decimal("250.00"), paid_on=date(2026, 2, 20),
                 reference="CHK-250")
    return account


def staff(username: str, group: str):
    user = get_user_model().objects.create_user(username, is_staff=True, password="pw", first_name=username.title())
    user.groups.add(Group.objects.get(name=group))
    return get_user_model().objects.get(pk=user.pk)


@pytest.fixture
def clerk(mineola):
    return staff("clara", "Clerk")


@pytest.fixture
def supervisor(mineola):
    return staff("sam", "Supervisor")


def balance(account, on):
    """The account's balance at the end of ``on`` (negative: a credit)."""
    return account_balances([account.pk], through=on)[account.pk].balance


def fields(exc) -> set[str]:
    """The fields a refusal names."""
    return {e.field for e in exc.value.errors}
