"""The portal in Spanish, in Debian's chromium: a customer whose account is set to Spanish (``Account.language``)
reads the portal in Spanish once signed in; a visitor picks Spanish with the page's language link. Each page's
text (what its screenshot shows) is checked against every English phrase of the catalog; the ordinance's
citations and words stay as written. Set ``PORTAL_SCREENSHOT_DIR`` to keep the screenshots."""

import os
import re
from pathlib import Path

import pytest

from accounts.models import PortalLink
from billing.models import Bill
from tests.browser import PHONE, needs_chromium
from tests.catalog import as_the_ordinance_words_it, english_left
from tests.remittance.conftest import standin  # noqa: F401 - the payment processor's stand-in, a fixture

from .conftest import PASSWORD, billed_account, customer

pytestmark = [pytest.mark.browser, needs_chromium]


def shown_in_spanish(page, name: str, *, ignoring=()) -> str:
    folder = os.environ.get("PORTAL_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"es-{name}.png"), full_page=True)
    assert page.locator("html").get_attribute("lang") == "es"
    text = page.locator("body").inner_text()
    assert english_left(text, ignoring=ignoring) == [], f"{name}: English left on the Spanish page"
    return text


def test_a_spanish_speaking_customer_reads_the_portal_in_spanish(live_server, mineola, browser, settings, tmp_path):
    from playwright.sync_api import expect

    settings.MEDIA_ROOT = tmp_path / "media"
    account = billed_account()
    account.language = "es"
    account.save()
    PortalLink.objects.create(user=customer("rosa@example.org"), account=account)
    page = browser.new_context(viewport=PHONE).new_page()

    page.goto(live_server.url + "/portal/")
    expect(page.get_by_role("heading", name="Your water account online")).to_be_visible()
    page.get_by_role("button", name="Español").click()  # the visitor's choice, kept in a cookie
    expect(page.get_by_role("heading", name="Su cuenta de agua en línea")).to_be_visible()
    shown_in_spanish(page, "welcome")
    page.get_by_role("link", name="Iniciar sesión").first.click()
    page.get_by_label("Correo electrónico").fill("rosa@example.org")
    page.get_by_label("Contraseña").fill("not the password")
    page.get_by_role("button", name="Iniciar sesión").click()
    expect(page.locator("#form-errors")).to_contain_text("Hay un problema")
    shown_in_spanish(page, "sign-in-error")
    page.get_by_label("Correo electrónico").fill("rosa@example.org")
    page.get_by_label("Contraseña").fill(PASSWORD)
    page.get_by_role("button", name="Iniciar sesión").click()
    expect(page.get_by_role("heading", name="Sus cuentas")).to_be_visible()
    shown_in_spanish(page, "accounts")

    # Signed in without the cookie, the account's language decides.
    page.context.clear_cookies(name="django_language")
    page.get_by_role("link", name=f"Cuenta {account.account_no}", exact=True).click()
    text = shown_in_spanish(page, "account")
    assert "Monto a pagar" in text and "$186.13" in text and "Facturas sin papel" in text
    page.get_by_role("link", name=re.compile(r"^1 feb 2026")).click()
    text = shown_in_spanish(page, "bill", ignoring=as_the_ordinance_words_it(Bill.objects.get()))
    assert "Factura 202602-" in text and "§ 45.28 A(1)" in text and "12,500 gal × 3.85 por cada 1,000" in text
    with page.expect_download() as download:
        page.get_by_role("link", name="Descargar la factura (PDF)").click()
    assert download.value.suggested_filename.endswith(".pdf")

    # The account set back to English in the office: the customer reads English from their next sign-in (no
    # cookie left to say otherwise).
    account.language = "en"
    account.save()
    page.get_by_role("button", name="Cerrar sesión").click()
    page.goto(live_server.url + "/portal/login/")
    page.get_by_label("Email").fill("rosa@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()


def test_a_visitor_pays_and_resets_a_password_in_spanish(live_server, mineola, browser, settings, tmp_path,
                                                          standin):  # noqa: F811
    from playwright.sync_api import expect

    settings.MEDIA_ROOT = tmp_path / "media"
    account = billed_account()
    page = browser.new_context(viewport=PHONE, locale="es-US").new_page()  # the browser asks for Spanish

    page.goto(live_server.url + "/pay/")
    expect(page.get_by_role("heading", name="Pague su factura de agua")).to_be_visible()
    page.get_by_role("button", name="Buscar mi cuenta").click()
    expect(page.locator("#form-errors")).to_contain_text("Hay un problema")
    shown_in_spanish(page, "pay-find-errors")
    page.get_by_label("Número de cuenta").fill(account.account_no)
    page.get_by_label("Monto de su última factura").fill("1.00")
    page.get_by_role("button", name="Buscar mi cuenta").click()
    expect(page.locator("#form-errors")).to_contain_text("no coinciden")
    page.get_by_label("Monto de su última factura").fill("186.13")
    page.get_by_role("button", name="Buscar mi cuenta").click()
    expect(page.get_by_role("heading", name=f"Pagar la cuenta {account.account_no}")).to_be_visible()
    shown_in_spanish(page, "pay")
    page.get_by_label("Monto a pagar ahora").fill("500")
    page.get_by_role("button", name="Continuar al pago seguro").click()
    expect(page.locator("#form-errors")).to_contain_text("es más de lo que la cuenta")
    shown_in_spanish(page, "pay-too-much")

    page.goto(live_server.url + "/portal/password-reset/")
    shown_in_spanish(page, "password-reset")
    page.get_by_label("Correo electrónico").fill("nobody@example.org")
    page.get_by_role("button", name="Enviar el enlace").click()
    expect(page.get_by_role("heading", name="Revise su correo electrónico")).to_be_visible()
    shown_in_spanish(page, "password-reset-sent")
    # The way back is named in its own language.
    page.get_by_role("button", name="English").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
