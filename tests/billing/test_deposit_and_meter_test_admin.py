"""A clerk receives and refunds a deposit, and settles a meter test, in the admin (the same services as
everywhere; refusals shown, nothing changed)."""

from datetime import date
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from accounts.roles import roles_install
from billing.models import Deposit, LedgerEntry, PendingCharge
from meters.models import MeterTest
from meters.services import meter_test_request, meter_test_result_record
from tests.billing.test_deposits_and_meter_tests import bill_february, wv_account
from tests.factories import clerk_user


@pytest.fixture
def clerk(washingtonville_fees):
    roles_install()
    client = Client()
    client.force_login(clerk_user())
    return client


@pytest.mark.citation("§ 169-4")
def test_a_clerk_receives_and_refunds_the_hydrant_deposit(clerk):
    account, _ = wv_account()
    add = reverse("admin:billing_deposit_add")
    refused = clerk.post(add, {"account_no": "no-such", "received_on": "2026-02-02", "reference": ""})
    assert refused.status_code == 400 and not Deposit.objects.exists()
    assert "no account &#x27;no-such&#x27;" in refused.content.decode()
    done = clerk.post(add, {"account_no": account.account_no, "received_on": "2026-02-02", "reference": "CK 881"})
    assert done.status_code == 302
    deposit = Deposit.objects.get()
    assert (deposit.amount.amount, deposit.citation, deposit.reference) == (Decimal("250.00"), "§ 169-4", "CK 881")
    changelist = reverse("admin:billing_deposit_changelist")
    form = clerk.post(changelist, {"action": "refund", "_selected_action": [deposit.pk]})
    assert "Discontinuance" in form.content.decode()  # asks why before refunding
    clerk.post(changelist, {"action": "refund", "_selected_action": [deposit.pk], "apply": "1",
                            "refunded_on": "2026-03-01", "note": "hydrant meter returned, service ended"})
    deposit.refresh_from_db()
    assert deposit.refunded_on == date(2026, 3, 1)
    assert sorted(LedgerEntry.objects.filter(kind__startswith="deposit").values_list("kind", "amount")) == [
        ("deposit", Decimal("-250.00")), ("deposit_refund", Decimal("250.00"))]


@pytest.mark.citation("§ 169-22")
def test_a_clerk_settles_a_meter_test_and_the_fee_waits_for_the_next_bill(clerk):
    account, meter = wv_account()
    bill_february(account, meter)
    test = meter_test_request(meter=meter, requested_on=date(2026, 2, 3), actor=None)
    untested = meter_test_request(meter=meter, requested_on=date(2026, 2, 4), actor=None)
    meter_test_result_record(test=test, tested_on=date(2026, 2, 10), actual_gallons=Decimal("100"),
                             registered_gallons=Decimal("102"), actor=None)  # 2% fast: within 3%, $20
    response = clerk.post(reverse("admin:meters_metertest_changelist"),
                          {"action": "settle", "_selected_action": [test.pk, untested.pk]}, follow=True)
    page = response.content.decode()
    assert "not settled" in page  # the untested one, with its reason
    assert PendingCharge.objects.get().amount.amount == Decimal("20.00")
    assert MeterTest.objects.get(pk=test.pk).settled_on is not None
    assert MeterTest.objects.get(pk=untested.pk).settled_on is None


@pytest.mark.citation("§ 169-4")
def test_receiving_a_deposit_needs_the_add_permission(washingtonville_fees):
    """A staff login that may only look at deposits never reaches deposit_receive through the add page."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    account, _ = wv_account()
    viewer = get_user_model().objects.create_user("viewer", password="x", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_deposit"))
    client = Client()
    client.force_login(viewer)
    add = reverse("admin:billing_deposit_add")
    assert client.get(add).status_code == 403
    assert client.post(add, {"account_no": account.account_no, "received_on": "2026-02-02",
                             "reference": "CK 1"}).status_code == 403
    assert not Deposit.objects.exists()
