"""An invoice is a charge on no bill, kept in the allocation under a key of its own: every page and command that
reads what an account owes reads it, as each role that opens them, and an invoice not yet due is not past due.

A Clerk invoices a tank-wagon fee through the admin (*Invoices → Add*) on an account billed $186.13 (Mineola's
worked bill); then the accounts list, the account's page, the accounts export, the customer's portal pages, guest
pay and the ACH debit file of the village all still answer, with the invoice in what is owed."""

from datetime import timedelta
from decimal import Decimal

import pytest
from cryptography.fernet import Fernet
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from billing.selectors import account_amounts_due
from core.banking_days import banking_day_on_or_after
from core.clock import today
from office.models import Invoice
from remittance.autopay import ach_export, autopay_enrol
from reports.selectors import aging
from tests.portal.conftest import billed_account, customer

from .conftest import staff

pytestmark = pytest.mark.django_db
D = Decimal


@pytest.fixture
def invoiced(mineola, media, settings, client, django_capture_on_commit_callbacks):
    """Account A billed $186.13 on 2026-02-01 and invoiced a tank-wagon fee today by a Clerk, due in 30 days;
    account B on autopay."""
    settings.BANK_ACCOUNT_KEY = Fernet.generate_key().decode()
    settings.ACH_ODFI_ROUTING, settings.ACH_ODFI_NAME = "021000021", "First Village Bank"
    settings.ACH_COMPANY_ID, settings.ACH_COMPANY_NAME = "1234567890", "MINEOLA WATER"
    account, autopaid = billed_account(), billed_account()
    client.force_login(staff("clara", "Clerk"))
    due_on = today() + timedelta(days=30)
    done = client.post(reverse("admin:office_invoice_add"), {
        "account_no": account.account_no, "code": "tank_wagon", "invoiced_on": today().isoformat(),
        "due_on": due_on.isoformat()}, follow=True)
    assert done.status_code == 200, done.content.decode()[:2000]
    invoice = Invoice.objects.get()
    for enrolled in (account, autopaid):  # each owes its bill past due: the arrears notice goes at once
        with django_capture_on_commit_callbacks(execute=True):
            autopay_enrol(account=enrolled, holder_name="Pat Payer", routing="011000015", account_number="000123456789",
                          account_type="checking", email="pat@example.org", agreed=True)
    return account, autopaid, invoice


def test_an_invoice_is_owed_and_falls_due_on_its_own_date(invoiced):
    account, _, invoice = invoiced
    due = account_amounts_due(account_ids=[account.pk], as_of=today())[account.pk]
    fee = invoice.amount.amount
    assert due.amount == D("186.13") + fee and due.past_due == D("186.13")  # the bill is past due, the invoice not
    after = account_amounts_due(account_ids=[account.pk], as_of=invoice.due_on + timedelta(days=1))[account.pk]
    assert after.past_due == D("186.13") + fee
    row = next(r for r in aging(as_of=today()).rows if r.account_no == account.account_no)
    assert row.buckets[0] == fee  # current: not yet due


@pytest.mark.parametrize("role", ["Clerk", "Supervisor"])
def test_every_admin_page_that_reads_the_account_answers_for_each_role(invoiced, role):
    account, _, _ = invoiced
    client = Client()
    client.force_login(staff(f"user-{role.lower()}", role))
    for url in (reverse("admin:accounts_account_changelist"),
                reverse("admin:accounts_account_change", args=[account.pk]),
                reverse("admin:accounts_account_export_csv")):
        page = client.get(url)
        assert page.status_code == 200, (url, page.status_code)
        body = b"".join(page.streaming_content) if page.streaming else page.content
        assert account.account_no.encode() in body or account.account_no.replace("-", "").encode() in body, url


def test_the_customers_pages_and_guest_pay_answer(invoiced):
    account, _, invoice = invoiced
    user = customer("pat@example.org")
    PortalLink.objects.create(user=user, account=account)
    portal = Client()
    portal.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    for url in (reverse("portal:home"), reverse("portal:account", kwargs={"public_id": account.public_id}),
                reverse("remittance:pay_linked", kwargs={"public_id": account.public_id})):
        assert portal.get(url).status_code == 200, url
    guest = Client()
    owed = D("186.13") + invoice.amount.amount
    found = guest.post(reverse("remittance:find"), {"account_no": account.account_no, "proof": f"{owed}"})
    assert found.status_code == 302  # what is owed today, the invoice in it, proves the account
    page = guest.get(found["Location"]).content.decode()
    assert account.premises.service_address in page and f"${owed}" in page


def test_the_village_ach_file_is_made_with_an_invoiced_account_in_it(invoiced):
    account, autopaid, _ = invoiced
    settle = banking_day_on_or_after(today() + timedelta(days=10))  # the arrears' notice period
    exported = ach_export(on=today(), settle=settle)
    # What falls due by the settlement day: the bill past due, not the invoice due later.
    assert sorted((d.account_id, d.amount.amount) for d in exported.file.debits.all()) == \
        sorted([(account.pk, D("186.13")), (autopaid.pk, D("186.13"))])
