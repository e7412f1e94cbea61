"""A sale: the former owner loses the account online, the new owner gets the next bill, and bills already
issued stay addressed as they were."""

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.urls import reverse

from accounts.models import Ownership, PortalLink
from accounts.services import account_owner_change
from billing.documents.bill import bill_views
from billing.models import Bill
from core.errors import ApplicationError
from portal.notify import bills_issued_notify
from tests.billing.steps import read, run
from tests.factories import CustomerFactory
from tests.portal.conftest import billed_account, customer

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return client


def sold(mineola):
    """Owner Ann, linked online with paperless bills, billed 2026-02-01; sold to Ben on 2026-03-15."""
    ann = CustomerFactory(name="Ann Seller", mailing_address="1 Old Road\nMineola, NY 11501")
    account = billed_account(owner=ann, paperless=True)
    Ownership.objects.create(account=account, owner=ann, started_on=date(2020, 5, 1))
    ann_login = customer("ann@example.org")
    PortalLink.objects.create(user=ann_login, account=account)
    old_code = account.access_code
    ben = CustomerFactory(name="Ben Buyer", mailing_address="9 New Lane\nGarden City, NY 11530")
    change = account_owner_change(account=account, new_owner=ben, on=date(2026, 3, 15), actor=None)
    return change.account, ann, ben, ann_login, old_code, change


def test_a_sale_ends_the_former_owners_access_and_paperless(mineola, media):
    account, ann, ben, ann_login, old_code, change = sold(mineola)
    assert change.links_ended == 1 and change.previous_owner == ann
    assert account.owner == ben and account.access_code != old_code and not account.paperless
    assert list(Ownership.objects.filter(account=account).order_by("started_on").values_list(
        "owner__name", "started_on", "ended_on")) == [
        ("Ann Seller", date(2020, 5, 1), date(2026, 3, 15)), ("Ben Buyer", date(2026, 3, 15), None)]
    # Ann's login no longer reaches the account or its bills.
    client = signed_in(ann_login)
    bill = Bill.objects.get(account=account)
    assert client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).status_code == 404
    assert client.get(reverse("portal:bill", kwargs={"public_id": bill.public_id})).status_code == 404
    assert client.get(reverse("portal:bill_pdf", kwargs={"public_id": bill.public_id})).status_code == 404
    # The old access code links nothing; the new one, printed on the next bill, does.
    response = client.post(reverse("portal:link"), {"account_no": account.account_no, "access_code": old_code})
    assert response.status_code == 400
    ben_login = customer("ben@example.org")
    response = signed_in(ben_login).post(reverse("portal:link"), {"account_no": account.account_no,
                                                                  "access_code": account.access_code})
    assert response.status_code == 302
    # No paperless email goes to Ann for the next bill.
    meter = account.installations.get().meter
    read(meter, date(2026, 7, 14), 1_082_500)
    run("run_billing", "--date", "2026-08-01")
    assert bills_issued_notify(list(Bill.objects.values_list("pk", flat=True))) == 0
    assert not mail.outbox
    # The link's end is on record: who had it, when it ended, why.
    ended = PortalLink.history.filter(history_type="-").get()
    assert ended.user == ann_login and ended.history_change_reason == "owner changed on 2026-03-15"


def test_bills_keep_the_name_and_address_they_were_issued_to(mineola, media):
    account, ann, ben, *_ = sold(mineola)
    february = Bill.objects.get(account=account)
    meter = account.installations.get().meter
    read(meter, date(2026, 7, 14), 1_082_500)
    run("run_billing", "--date", "2026-08-01")
    august = Bill.objects.get(account=account, bill_date=date(2026, 8, 1))
    # Rendered for the first time after the sale, February's bill is still Ann's.
    views = {v.pk: v for v in bill_views(bill_ids=[february.pk, august.pk])}
    assert (views[february.pk].owner_name, views[february.pk].owner_address) == (
        "Ann Seller", "1 Old Road\nMineola, NY 11501")
    assert (views[august.pk].owner_name, views[august.pk].owner_address) == (
        "Ben Buyer", "9 New Lane\nGarden City, NY 11530")
    assert views[august.pk].access_code == account.access_code


def test_a_sale_is_refused_for_the_same_owner_a_future_date_or_before_the_current_ownership(mineola):
    account, ann, ben, *_ = sold(mineola)
    for owner, on, field in ((ben, date(2026, 4, 1), "new_owner"), (ann, date(2099, 1, 1), "on"),
                             (ann, date(2026, 3, 1), "on")):
        with pytest.raises(ApplicationError) as refused:
            account_owner_change(account=account, new_owner=owner, on=on, actor=None)
        assert refused.value.errors[0].field == field


def test_the_clerk_records_a_sale_and_ends_portal_links_in_the_admin(mineola, media):
    ann = CustomerFactory(name="Ann Seller")
    account = billed_account(owner=ann)
    PortalLink.objects.create(user=customer("ann@example.org"), account=account)
    PortalLink.objects.create(user=customer("tenant@example.org"), account=account)
    clerk = get_user_model().objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-only-9")
    client = signed_in(clerk)
    page = client.get(reverse("admin:accounts_account_change", args=[account.pk])).content.decode()
    assert "Change owner" in page and "ann@example.org" in page and 'name="owner"' not in page
    # The account page is read as a page: no delete boxes; each link is ended on a page of its own.
    assert "DELETE" not in page and "End this link" in page
    tenant_link = PortalLink.objects.get(user__email="tenant@example.org")
    end = reverse("admin:accounts_account_end_link", args=[tenant_link.pk])
    assert "tenant@example.org" in client.get(end).content.decode()
    assert client.post(end, {"reason": ""}).status_code == 400  # the reason is kept in the history
    response = client.post(end, {"reason": "moved out"})
    assert response.status_code == 302 and not PortalLink.objects.filter(pk=tenant_link.pk).exists()
    # Then records the sale.
    ben = CustomerFactory(name="Ben Buyer")
    url = reverse("admin:accounts_account_change_owner", args=[account.pk])
    assert "Record the sale" in client.get(url).content.decode()
    response = client.post(url, {"new_owner": ben.pk, "on": "2026-03-15"})
    assert response.status_code == 302
    account.refresh_from_db()
    assert account.owner == ben and not account.portal_links.exists()
    ended = client.get(reverse("admin:accounts_historicalportallink_changelist")).content.decode()
    assert "tenant@example.org" in ended and "ann@example.org" in ended and "owner changed on 2026-03-15" in ended
    # A bad date is a form error, not a 500.
    response = client.post(url, {"new_owner": ann.pk, "on": "2026-03-01"})
    assert response.status_code == 200 and "would come before it" in response.content.decode()


def test_an_issued_bills_recipient_is_fixed_in_the_database(mineola):
    if connection.vendor != "postgresql":
        pytest.skip("the trigger is PostgreSQL's")
    account = billed_account()
    bill = Bill.objects.get(account=account)
    with pytest.raises(IntegrityError), transaction.atomic():
        Bill.objects.filter(pk=bill.pk).update(recipient_name="Someone Else")
