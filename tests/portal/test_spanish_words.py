"""The system's own words on a Spanish-speaking customer's pages: the late charges, memos and voids among the
account's charges, and a bill's minimum and rate blocks, are said in Spanish (the record keeps them as written, and
an English reader reads them so); a time of day on the 24-hour clock."""

from datetime import date, time

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import translation

from accounts.models import PortalLink
from billing.documents.words import charge_words, line_words
from billing.models import Adjustment
from billing.ordinance import ordinance_on
from billing.services.adjustments import adjustment_create
from core.dates import fmt_time
from tests.catalog import english_left

from .conftest import billed_account, customer

pytestmark = pytest.mark.django_db


def reader(account, language: str) -> Client:
    user = customer(f"{language}@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    return client


def test_the_charges_and_the_bills_lines_in_spanish(mineola, media):
    account = billed_account()
    bill = account.bills.get()
    call_command("assess_penalties", "--date", "2026-05-10", "--no-progress", stdout=open("/dev/null", "w"))
    adjustment_create(bill=bill, kind=Adjustment.Kind.CREDIT, amount=5, reason="goodwill", as_of=date(2026, 5, 10),
                      actor=None)
    spanish = reader(account, "es")
    page = spanish.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert f"Recargo por pago atrasado: 5% (primer mes) sobre la factura {bill.number}" in page
    assert f"Recargo por pago atrasado: 1% (mes 2) sobre la factura {bill.number}" in page
    assert f"Nota de crédito en la factura {bill.number}" in page
    assert "Late payment penalty" not in page and "Credit memo" not in page
    shown = spanish.get(reverse("portal:bill", kwargs={"public_id": bill.public_id})).content.decode()
    assert "Cargo mínimo, incluye 20,000 gal" in shown
    assert "de 20,001 a 50,000 gal: 30,000 gal a $3.10 por cada 1,000" in shown
    assert "más de 50,000 gal: 12,500 gal a $3.85 por cada 1,000" in shown
    # What is left in English is the ordinance's own words, quoted.
    assert english_left(shown, ignoring=[account.premises.service_address,
                                         ordinance_on(bill.bill_date).penalties.words]) == []
    # In English, as recorded.
    english = reader(account, "en").get(reverse("portal:account", kwargs={"public_id": account.public_id}))
    assert f"Late payment penalty: 5% (first month) on bill {bill.number}" in english.content.decode()


def test_words_not_the_systems_are_shown_as_written():
    with translation.override("es"):
        assert line_words("Sprinkler service, 2 inch") == "Sprinkler service, 2 inch"
        assert charge_words("debit", "Returned check charge") == "Returned check charge"
        assert charge_words("void", "Bill 202602-1-0001 voided; a corrected bill replaces it") == (
            "Factura 202602-1-0001 anulada; la reemplaza una factura corregida")
        assert charge_words("interest", "Interest: 1.5% (month 3) on bill X-1") == (
            "Interés: 1.5% (mes 3) sobre la factura X-1")


def test_a_time_of_day_in_each_language():
    assert fmt_time(time(10, 0)) == "10:00 AM" and fmt_time(time(14, 30)) == "2:30 PM"
    with translation.override("es"):
        assert fmt_time(time(10, 0)) == "10:00" and fmt_time(time(14, 30)) == "14:30"
