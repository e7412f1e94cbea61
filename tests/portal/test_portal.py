"""The customer portal as a customer uses it: sign up, link, read bills, go paperless, reset a password."""

import io
import re
from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from billing.models import Bill
from meters.models import Reading
from portal.models import BillNotice
from portal.notify import bills_issued_notify
from tests.catalog import english_left
from tests.factories import AccountFactory, CustomerFactory, InstallationFactory, MeterFactory

from .conftest import PASSWORD, billed_account, customer, pay

pytestmark = pytest.mark.django_db


def test_root_redirects_to_the_portal(db):
    response = Client().get("/")
    assert response.status_code == 302 and response["Location"] == reverse("portal:home")


def test_sign_in_and_out(mineola):
    customer("fay@example.org")
    client = Client()
    response = client.post(reverse("portal:login"), {"username": "FAY@example.org", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == reverse("portal:home")
    assert client.post(reverse("portal:logout")).status_code == 302
    assert client.get(reverse("portal:link")).status_code == 302


def test_password_reset_by_email(mineola):
    customer("gail@example.org")
    client = Client()
    response = client.post(reverse("portal:password_reset"), {"email": "gail@example.org"})
    assert response.status_code == 302 and response["Location"] == reverse("portal:password_reset_done")
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["gail@example.org"]
    link = re.search(r"https?://[^/]+(/portal/password-reset/\S+/)", mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    assert form_page.status_code == 200 and b"Choose a new password" in form_page.content
    new_password = "a brand new long passphrase"
    done = client.post(form_page.redirect_chain[-1][0], {"new_password1": new_password,
                                                         "new_password2": new_password})
    assert done.status_code == 302 and done["Location"] == reverse("portal:password_reset_complete")
    assert get_user_model().objects.get().check_password(new_password)
    # Unknown emails get the same answer and no mail.
    assert client.post(reverse("portal:password_reset"), {"email": "nobody@example.org"}).status_code == 302
    assert len(mail.outbox) == 1


def test_linked_account_shows_balance_bills_lines_citations_chart_and_payments(mineola, media):
    account = billed_account()
    pay(account, "50.00", "2026-02-20", "CHK-77", as_of=date(2026, 3, 1))
    user = customer("hal@example.org")
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    response = client.post(reverse("portal:link"), {"account_no": account.account_no,
                                                    "access_code": account.access_code}, follow=True)
    page = response.content.decode()
    assert f"Account {account.account_no}" in page
    assert "$136.13" in page  # 186.13 billed less 50.00 paid (penalties after 2026-03-01 not yet assessed)
    assert "CHK-77" in page and "$50.00" in page
    assert '<svg xmlns="http://www.w3.org/2000/svg" id="chart-account"' in page
    assert "<caption>Gallons per bill, last 24 months</caption>" in page and "62,500" in page
    bill = Bill.objects.get(account=account)
    detail = client.get(reverse("portal:bill", kwargs={"public_id": bill.public_id})).content.decode()
    for text in ("Minimum charge, includes 20,000 gal", "§ 45.28 A(1), A(2)(a)", "$45.00", "$93.00", "$48.13",
                 "$186.13", "§ 45.29 E", "$195.44", "Download the bill (PDF)"):
        assert text in detail, text


def test_pdf_is_rendered_on_demand_then_served_from_storage(mineola, media):
    from billing.services.bill_pdfs import bill_pdf_render, bill_pdfs_store

    account = billed_account()
    user = customer("ivy@example.org")
    PortalLink.objects.create(user=user, account=account)
    bill = Bill.objects.get(account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    url = reverse("portal:bill_pdf", kwargs={"public_id": bill.public_id})
    fresh = client.get(url)
    assert fresh.status_code == 200 and fresh.content.startswith(b"%PDF")
    assert fresh["Content-Disposition"] == f'attachment; filename="water-bill-{bill.number}.pdf"'
    assert bill_pdfs_store(bill_ids=[bill.pk]) == 0  # the render was stored
    bill.refresh_from_db()
    assert bill.pdf.read() == fresh.content
    assert client.get(url).content == fresh.content == bill_pdf_render(bill=bill)


def test_paperless_choice_is_saved_with_who_made_it(mineola, media):
    account = billed_account()
    user = customer("jo@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    url = reverse("portal:paperless", kwargs={"public_id": account.public_id})
    assert client.post(url, {"paperless": "on"}).status_code == 302
    account.refresh_from_db()
    assert account.paperless and account.history.first().history_user == user
    client.post(url, {})
    account.refresh_from_db()
    assert not account.paperless
    assert client.get(url).status_code == 405


def test_paperless_customers_get_one_email_per_bill(mineola, media):
    # The owner's address on file is Kim's login in other letters: one address, one email.
    paperless = billed_account(paperless=True, owner=CustomerFactory(email="Kim@Example.org"))
    on_paper = billed_account()
    kim, lee = customer("kim@example.org"), customer("lee@example.org")
    PortalLink.objects.create(user=kim, account=paperless)
    PortalLink.objects.create(user=lee, account=paperless)
    PortalLink.objects.create(user=kim, account=on_paper)
    ids = list(Bill.objects.values_list("id", flat=True))
    assert bills_issued_notify(ids) == 2
    bill = Bill.objects.get(account=paperless)
    assert sorted(m.to[0] for m in mail.outbox) == ["kim@example.org", "lee@example.org"]
    body = mail.outbox[0].body
    assert f"/portal/bills/{bill.public_id}/" in body and "$186.13" in body and "March 1, 2026" in body
    assert "access code" not in body  # signed up already
    assert bills_issued_notify(ids) == 0 and len(mail.outbox) == 2
    assert BillNotice.objects.count() == 2


def test_a_spanish_accounts_bill_email_is_in_spanish(mineola, media):
    """The e-mail goes in the account's language, as its bill does; an English account's, in the same batch, in
    English."""
    spanish = billed_account(paperless=True, owner=CustomerFactory(email="rosa@example.org"))
    spanish.language = "es"
    spanish.save()
    english = billed_account(paperless=True, owner=CustomerFactory(email="kim@example.org"))
    assert bills_issued_notify(list(Bill.objects.values_list("id", flat=True))) == 2
    sent = {m.to[0]: m for m in mail.outbox}
    rosa, kim = sent["rosa@example.org"], sent["kim@example.org"]
    assert rosa.subject == f"Su factura de agua de la cuenta {spanish.account_no} está lista"
    assert "TOTAL A PAGAR antes del 1 de marzo de 2026: $186.13" in rosa.body
    assert f"vincule el número de cuenta {spanish.account_no} con el código de acceso {spanish.access_code}" in rosa.body
    assert english_left(rosa.body) == []
    assert kim.subject == f"Your water bill for account {english.account_no} is ready"
    assert "TOTAL AMOUNT DUE by March 1, 2026: $186.13" in kim.body


def test_a_paperless_owner_not_signed_up_is_emailed_at_the_address_on_file_with_an_invitation(mineola, media):
    """Paperless chosen at the office (or brought over from the old system): the owner has no login yet."""
    account = billed_account(paperless=True, owner=CustomerFactory(email="owner@example.org"))
    billed_account(owner=CustomerFactory(email="paper@example.org"))  # on paper: no email
    lee = customer("lee@example.org")
    PortalLink.objects.create(user=lee, account=account)
    ids = list(Bill.objects.values_list("id", flat=True))
    assert bills_issued_notify(ids) == 2
    to_owner = next(m for m in mail.outbox if m.to == ["owner@example.org"])
    assert "TOTAL AMOUNT DUE by March 1, 2026: $186.13" in to_owner.body
    assert "/portal/signup/" in to_owner.body
    assert f"link account number {account.account_no} with access code {account.access_code}" in to_owner.body
    assert BillNotice.objects.get(email="owner@example.org").user is None
    assert bills_issued_notify(ids) == 0 and len(mail.outbox) == 2


def test_a_billing_run_emails_paperless_customers_after_commit(mineola, django_capture_on_commit_callbacks):
    account = AccountFactory(book=1, paperless=True, owner=CustomerFactory(email=""))
    meter = MeterFactory()
    InstallationFactory(meter=meter, account=account, installed_on=date(2025, 7, 10))
    Reading.objects.create(meter=meter, read_on=date(2025, 7, 10), value=1_000_000, source="install")
    Reading.objects.create(meter=meter, read_on=date(2026, 1, 12), value=1_062_500)
    PortalLink.objects.create(user=customer("paperless@example.org"), account=account)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("run_billing", "--date", "2026-02-01", "--no-progress", stdout=io.StringIO())
    assert [m.to for m in mail.outbox] == [["paperless@example.org"]]
    assert account.bills.get().public_id.hex[:8] in mail.outbox[0].body.replace("-", "")


def test_home_card_shows_amount_due_and_due_date_and_each_bill_its_status(mineola, media):
    account = billed_account()  # $186.13, due 2026-03-01
    user = customer("card@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    home = client.get(reverse("portal:home")).content.decode()
    # Today the bill is long past its due date: all of it is past due.
    assert "Amount due" in home and "$186.13" in home and "Past due, pay now" in home
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert "status-unpaid" in page and ">Unpaid<" in page
    pay(account, "100.00", "2026-02-20", "PART-1", as_of=date(2026, 2, 20))
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert ">Partly paid<" in page and "$86.13" in page
    bill = Bill.objects.get(account=account)
    detail = client.get(reverse("portal:bill", kwargs={"public_id": bill.public_id})).content.decode()
    assert "Partly paid: of the $186.13 this bill has charged (its charges), $86.13 remains." in detail
    assert "principal first" in detail
    pay(account, "86.13", "2026-02-25", "PART-2", as_of=date(2026, 2, 25))
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert ">Paid<" in page
    home = client.get(reverse("portal:home")).content.decode()
    assert "Nothing due: thank you" in home
    bill = Bill.objects.get(account=account)
    detail = client.get(reverse("portal:bill", kwargs={"public_id": bill.public_id})).content.decode()
    assert "Total amount due" in detail and ">Paid<" in detail


def test_amount_due_names_the_next_due_date_when_nothing_is_past_due(mineola, media):
    from billing.selectors import account_amounts_due

    account = billed_account()
    due = account_amounts_due(account_ids=[account.id], as_of=date(2026, 2, 10))[account.id]
    assert (due.amount, due.past_due, due.due_date) == (Decimal("186.13"), Decimal("0.00"), date(2026, 3, 1))
    due = account_amounts_due(account_ids=[account.id], as_of=date(2026, 3, 2))[account.id]
    assert (due.amount, due.past_due, due.due_date) == (Decimal("186.13"), Decimal("186.13"), None)


def test_the_paperless_email_says_what_to_pay(mineola, media):
    account = billed_account(paperless=True)
    PortalLink.objects.create(user=customer("mail@example.org"), account=account)
    bills_issued_notify([Bill.objects.get(account=account).pk])
    body = mail.outbox[0].body
    for text in ("Previous balance: $0.00", "Payments received since: $0.00", "Current charges: $186.13",
                 "TOTAL AMOUNT DUE by March 1, 2026: $186.13", "If paid after March 1, 2026: $195.44"):
        assert text in body, text
