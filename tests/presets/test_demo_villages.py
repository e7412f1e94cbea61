"""A demo village on every preset bills without exceptions: ``setup_utility PRESET --demo N`` gives accounts
whose meter sizes, categories and sprinkler supplies the preset's rates bill, read in the month before each
of the calendar's bill dates, and the demo payments pay "on time" by the preset's own late rule."""

from datetime import date

import pytest
from django.core.management import call_command

from accounts.models import Account
from billing.districts import account_district
from billing.models import Bill, BillingException, LedgerEntry
from billing.ordinance import billing_days_on, ordinance_on
from core.dates import add_months
from demo.payments import demo_payments_create
from ordinance.models import Utility
from tests.billing.steps import run
from tests.presets.test_contract import PRESETS

pytestmark = pytest.mark.django_db
AS_OF = date(2026, 11, 30)


@pytest.mark.citation("demo")
@pytest.mark.parametrize("code", PRESETS)
def test_a_demo_village_bills_a_year_without_exceptions(code):
    call_command("setup_utility", code, "--demo", "120", "--date", AS_OF.isoformat(), stdout=open("/dev/null", "w"))
    utility = Utility.objects.get()
    assert utility.preset == code and utility.is_demo_site
    town = utility.office_address.splitlines()[-1]
    assert Account.objects.filter(owner__mailing_address__endswith=town).exists()
    # Every district's calendar (a town's districts bill on dates of their own; a village has the one).
    days = billing_days_on(AS_OF)
    firsts = [add_months(date(2025, 12, 1), n) for n in range(12)]
    for day in firsts:
        run("run_billing", "--date", day.isoformat())
    assert not BillingException.objects.exists(), list(BillingException.objects.values_list("detail", flat=True)[:5])
    billed = [day for day in firsts if days.due_books(day) or days.due_frequencies(day)]
    assert set(Bill.objects.values_list("bill_date", flat=True)) <= set(billed)
    for account in Account.objects.all():
        calendar = ordinance_on(AS_OF, account_district(account.pk, on=AS_OF)).calendar
        frequency = calendar.frequency_for(account.installations.get().meter.size)
        due = [day for day in billed if calendar.is_due(book=account.book, frequency=frequency, on=day)]
        assert sorted(Bill.objects.filter(account=account).values_list("bill_date", flat=True)) == due, account
    assert demo_payments_create(as_of=AS_OF) > 0
    run("assess_penalties", "--date", AS_OF.isoformat())
    assert LedgerEntry.objects.filter(kind="payment").exists()


@pytest.mark.citation("demo")
@pytest.mark.parametrize("code", PRESETS)
def test_a_demo_customer_sees_their_bills_in_the_portal_and_the_clerk_in_the_admin(code, media):
    from django.test import Client
    from django.urls import reverse

    from accounts.models import PortalLink
    from tests.factories import clerk_user
    from tests.portal.conftest import customer

    call_command("setup_utility", code, "--demo", "20", "--date", AS_OF.isoformat(), stdout=open("/dev/null", "w"))
    for day in [add_months(date(2025, 12, 1), n) for n in range(12)]:
        run("run_billing", "--date", day.isoformat())
    bill = Bill.objects.order_by("-bill_date", "id").first()
    name = Utility.objects.get().name
    user = customer(f"{code}@example.org")
    PortalLink.objects.create(user=user, account=bill.account)
    portal = Client()
    portal.force_login(user)
    account_page = portal.get(reverse("portal:account", args=[bill.account.public_id]))
    bill_page = portal.get(reverse("portal:bill", args=[bill.public_id]))
    assert account_page.status_code == bill_page.status_code == 200
    assert reverse("portal:bill", args=[bill.public_id]) in account_page.content.decode()
    assert name in bill_page.content.decode() and bill.number in bill_page.content.decode()
    assert portal.get(reverse("portal:bill_pdf", args=[bill.public_id])).content.startswith(b"%PDF-")
    office = Client()
    office.force_login(clerk_user())
    assert bill.number in office.get(reverse("admin:billing_bill_changelist")).content.decode()
    assert office.get(reverse("admin:billing_bill_change", args=[bill.pk])).status_code == 200
