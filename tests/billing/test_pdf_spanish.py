"""A Spanish-speaking customer's bill: the account's language (``Account.language``) prints its bill in Spanish
— every label, sentence and date — while the ordinance's citations, the charges' descriptions and the late-payment
rule stay as the ordinance words them. Checked on the PDF's text (what its picture shows) against every English
phrase of the catalog; the catalog is complete and compiled."""

import gettext
import os
import subprocess
from pathlib import Path

import pytest

from billing.models import Bill
from billing.services import bill_pdfs
from tests.billing.test_pdf import needs_poppler, run, text_of, worked_example_account
from tests.catalog import SPANISH, as_the_ordinance_words_it, english_left, messages
from tests.pdf_structure import structure

pytestmark = pytest.mark.django_db


def test_the_catalog_is_complete_and_compiled():
    catalog = messages()
    assert len(catalog) > 40
    assert [msgid for msgid, msgstr, fuzzy in catalog if not msgstr or fuzzy] == []
    with open(SPANISH / "django.mo", "rb") as compiled:
        mo = gettext.GNUTranslations(compiled)
    assert [msgid for msgid, msgstr, _ in catalog if mo.gettext(msgid) != msgstr] == [], \
        "django.mo is older than django.po: run manage.py compilemessages"


@needs_poppler
def test_a_spanish_speaking_customers_bill_is_in_spanish(mineola, tmp_path):
    account, _ = worked_example_account(read_type="estimated")
    account.language = "es"
    account.save()
    english, _ = worked_example_account()
    run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get(account=account)
    data = bill_pdfs.bill_pdf_render(bill=bill)
    text = text_of(data)
    for expected in ("FACTURA DE AGUA", "Número de cuenta", "Fecha de vencimiento", "1 feb 2026", "1 mar 2026",
                     "10 jul 2025 – 12 ene 2026", "LECTURAS DEL MEDIDOR", "Anterior", "Actual", "E = lectura estimada",
                     "12,500 gal × 3.85 por cada 1,000", "cargo fijo 45.00", "Total a pagar", "$186.13", "$195.44",
                     "Si paga después del 1 mar 2026", "Saldo anterior", "Recargos", "Monto adjunto",
                     "Desprenda y devuelva", account.access_code,
                     # The system's words for the lines, in Spanish; the sections as the ordinance numbers them.
                     "Cargo mínimo, incluye 20,000 gal", "más de 50,000 gal: 12,500 gal a $3.85 por cada 1,000",
                     "§ 45.28 A(1), A(2)(a)", "§ 45.29 E"):
        assert expected in text, expected
    # Nothing else is left in English but the ordinance's own words, quoted.
    assert english_left(text, ignoring=as_the_ordinance_words_it(bill)) == []
    s = structure(data)
    assert (s.lang, s.title) == ("es", f"Factura de agua {bill.number}")
    # The picture of the bill, for a look by eye (PORTAL_SCREENSHOT_DIR, as the portal's browser tests keep theirs).
    folder = Path(os.environ.get("PORTAL_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bill-es.pdf").write_bytes(data)
    subprocess.run(["pdftoppm", "-png", "-r", "80", "-singlefile", str(folder / "bill-es.pdf"), str(folder / "bill-es")],
                   check=True)
    assert (folder / "bill-es.png").stat().st_size > 10_000

    # The other account's bill, in the same run and the same batch, is in English as ever.
    batch = bill_pdfs.bills_pdf_files(bills=list(Bill.objects.order_by("pk")))
    english_text = text_of(batch[Bill.objects.get(account=english).pk])
    assert "WATER BILL" in english_text and "Feb 1, 2026" in english_text and "FACTURA" not in english_text
    assert batch[bill.pk] == data
