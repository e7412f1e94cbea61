import io
from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from accounts.models import PortalLink
from meters.models import Reading
from tests.factories import AccountFactory, InstallationFactory, MeterFactory

PASSWORD = "correct horse battery staple"


def billed_account(*, book: int = 1, **kwargs):
    """An account read on 2025-07-10 and 2026-01-12 (62,500 gal) and billed on 2026-02-01: $186.13."""
    account = AccountFactory(book=book, **kwargs)
    meter = MeterFactory()
    InstallationFactory(meter=meter, account=account, installed_on=date(2025, 7, 10))
    Reading.objects.create(meter=meter, read_on=date(2025, 7, 10), value=1_000_000, source="install")
    Reading.objects.create(meter=meter, read_on=date(2026, 1, 12), value=1_062_500)
    call_command("run_billing", "--date", "2026-02-01", "--no-progress", stdout=io.StringIO())
    return account


def pay(account, amount: str, on: str, reference: str, *, as_of: date) -> None:
    from billing.services.payments import payment_post

    payment_post(account_no=account.account_no, amount=Decimal(amount), paid_on=date.fromisoformat(on),
                 reference=reference)


def customer(email: str):
    return get_user_model().objects.create_user(username=email, email=email, password=PASSWORD)


@pytest.fixture
def two_customers(mineola, media):
    """Alice and Bob, each with one linked, billed account."""
    alice_account = billed_account()
    bob_account = billed_account()
    alice, bob = customer("alice@example.org"), customer("bob@example.org")
    PortalLink.objects.create(user=alice, account=alice_account)
    PortalLink.objects.create(user=bob, account=bob_account)
    return {"alice": (alice, alice_account, alice_account.bills.get()),
            "bob": (bob, bob_account, bob_account.bills.get())}
