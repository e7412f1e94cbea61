"""What a Spanish-speaking customer is sent and shown beyond the bill: the termination notice and the notice of the
determination, the case page and the request for a hearing, the counter's receipt, a backflow notice, autopay (its
page, the authorization kept as the customer read it, the notice before the debit and the receipt), the sign-up
and password e-mails, and a tester's pages. Each is checked against every English phrase of the catalog
(``tests.catalog.english_left``), leaving out what is recorded or set by the village as written (names,
addresses, the ordinance's words, the hearing officer's title). The office's own record stays in English."""

import re
from datetime import date, timedelta
from decimal import Decimal
from html import unescape

import pytest
from django.conf import settings
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from backflow.documents import notice_pdf as backflow_notice_pdf
from backflow.models import ComplianceNotice
from billing.documents.receipt import receipt_pdf
from billing.models import Payment
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from core import clock
from remittance.autopay import ach_export, autopay_notices_send
from remittance.models import AutopayEnrolment
from termination.documents import determination_paper, notice_pdf
from termination.models import CaseEvent, TerminationCase
from termination.policy import termination_policy
from tests.backflow.steps import bf, village
from tests.billing.test_pdf import needs_poppler, text_of
from tests.catalog import english_left
from tests.pdf_structure import structure
from tests.remittance.conftest import BANK_ACCOUNT, ROUTING, bank  # noqa: F401 - a fixture
from tests.remittance.test_autopay import DUE, noticed
from tests.termination.steps import terminated_case

from .conftest import billed_account, customer
from .test_termination_portal import case_url
from .test_tester_portal import login_tester

pytestmark = pytest.mark.django_db


def page_text(response) -> str:
    """What a page says: its text without markup, the title and the form's labels and messages included."""
    html = response.content.decode()
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", html))


def as_set_by_the_village(account) -> list[str]:
    """What a Spanish paper prints as recorded or as the village's preset words it: kept as written."""
    policy = termination_policy()
    return [account.premises.service_address, account.owner.name, account.owner.mailing_address,
            policy.hearing_officer, policy.appeal_body, policy.issued_by, policy.hearing_place, policy.utility_name]


def spanish_client(user) -> Client:
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return client


@needs_poppler
@pytest.mark.citation("§ 45.32")
def test_a_spanish_accounts_termination_notice_determination_and_case_page(mineola, media):
    from tests.termination.steps import delinquent_account

    account, _ = delinquent_account()
    account.language = "es"
    account.save()
    number = terminated_case(account)
    case = TerminationCase.objects.get(number=number)
    kept = as_set_by_the_village(account)

    notice = case.notices.get(role="owner")
    data = notice_pdf(notice)
    text = text_of(data)
    for expected in ("AVISO DE AUDIENCIA Y", "Entregado el", "1 abr 2026 por entrega en",
                     "SE LE NOTIFICA", "Falta de pago de las facturas indicadas abajo", "16 abr 2026", "§ 45.32", "A menos que se haga una solicitud",
                     "11 abr 2026", "Para evitar el corte, pague", "$186.13"):
        assert expected in text, expected
    assert english_left(text, ignoring=kept) == []
    assert structure(data).lang == "es"

    paper = determination_paper(case)
    determination = " ".join([paper.title, *(k + " " + v for k, v in paper.facts), *paper.paragraphs])
    assert paper.title == "AVISO DE DETERMINACIÓN" and paper.lang == "es"
    assert "Suspender el servicio" in determination and "4 may 2026" in determination
    assert english_left(determination, ignoring=kept) == []

    # The case page, read in the account's language; the office's timeline keeps its English words.
    dora = customer("dora@example.org")
    PortalLink.objects.create(user=dora, account=account)
    client = spanish_client(dora)
    page = client.get(case_url(number))
    assert 'lang="es"' in page.content.decode()
    text = page_text(page)
    for expected in ("Caso de suspensión", "El funcionario de audiencias decidió suspender el servicio: puede apelar",
                     "Próximo paso", "El último día para apelar: 4 may 2026", "Aviso al propietario",
                     "Entregado el 1 abr 2026 por entrega en persona", "Aviso de la determinación (PDF)",
                     "Lo que ha pasado", "Caso abierto", "Determinación tomada", "Oficina de la villa"):
        assert expected in text, expected
    assert english_left(text, ignoring=kept) == []


@pytest.mark.citation("§ 45.32")
def test_a_hearing_asked_for_in_spanish_is_confirmed_in_spanish_and_recorded_in_english(mineola, media,
                                                                                        monkeypatch):
    from tests.termination.steps import delinquent_account, served_case

    account, _ = delinquent_account()
    account.language = "es"
    account.save()
    number = served_case(account)
    dora = customer("dora@example.org")
    PortalLink.objects.create(user=dora, account=account)
    client = spanish_client(dora)
    text = page_text(client.get(case_url(number)))
    assert "Pida una audiencia por escrito antes del" in text and "Pedir una audiencia" in text
    assert english_left(text, ignoring=as_set_by_the_village(account)) == []
    empty = client.post(case_url(number, "termination_request"), {"text": ""})
    assert empty.status_code == 400 and "Escriba su solicitud de audiencia antes de enviarla." in page_text(empty)

    monkeypatch.setattr(clock, "today", lambda: date(2026, 4, 14))  # after the Apr 11 deadline: accepted, flagged
    response = client.post(case_url(number, "termination_request"), {"text": "Pido una audiencia."}, follow=True)
    text = page_text(response)
    assert "Su solicitud se recibió el 14 abr 2026" in text and "Se recibió después del plazo del 11 abr 2026" in text
    assert english_left(text, ignoring=as_set_by_the_village(account)) == []
    # The office's record is in its own language, whoever's request wrote it.
    event = CaseEvent.objects.get(case__number=number, kind="requested")
    assert event.what.startswith("Written request for the hearing received online, after the window closed on "
                                 "Apr 11, 2026")


@needs_poppler
def test_a_spanish_accounts_counter_receipt(mineola):
    account = billed_account()
    account.language = "es"
    account.save()
    payment_post(account_no=account.account_no, amount=Decimal("100.00"), paid_on=date(2026, 2, 20),
                 reference="CHK-100", tender="check", check_number="100")
    payment = Payment.objects.get()
    payment_reverse(payment=payment, reversed_on=date(2026, 2, 25), reason="returned", note="NSF", actor=None)
    data = receipt_pdf(payment)
    text = text_of(data)
    for expected in ("RECIBO DE PAGO", "Número de recibo", "CHK-100", "Cheque n.º 100", "Monto pagado", "$100.00",
                     "Saldo después de este pago, al 20 feb 2026", "Este pago fue revertido el 25 feb 2026",
                     "cheque devuelto"):
        assert expected in text, expected
    assert english_left(text, ignoring=[account.premises.service_address, account.owner.name,
                                        account.owner.mailing_address]) == []
    assert structure(data).lang == "es"


@needs_poppler
def test_a_spanish_accounts_backflow_notice_keeps_the_ordinances_words(tmp_path):
    village(tmp_path, "washingtonville")
    notice_out = bf("notice", "1-0001", "--kind", "violation", "--served-on", "2026-03-01", "--per-day", "100",
                    date_="2026-03-01")
    assert notice_out
    notice = ComplianceNotice.objects.get()
    notice.account.language = "es"
    notice.account.save()
    data = backflow_notice_pdf(notice)
    text = text_of(data)
    for expected in ("INFRACCIÓN", "Número de cuenta", "Entregado el", "1 mar 2026", "Se impone una multa de $100.00",
                     "§ 169-37"):
        assert expected in text, expected
    from backflow.policy import backflow_policy

    rule_words = backflow_policy().notices[notice.kind].words
    assert " ".join(rule_words.split())[:40] in " ".join(text.split())  # the ordinance's words, as written
    account = notice.account
    assert english_left(text, ignoring=[rule_words, account.premises.service_address, account.owner.name,
                                        account.owner.mailing_address]) == []


def test_autopay_in_spanish_page_authorization_notice_and_receipt(mineola, media, bank,  # noqa: F811
                                                                  django_capture_on_commit_callbacks):
    account = billed_account()
    account.language = "es"
    account.save()
    pat = customer("pat@example.org")
    PortalLink.objects.create(user=pat, account=account)
    client = spanish_client(pat)
    url = reverse("remittance:autopay", kwargs={"public_id": account.public_id})
    text = page_text(client.get(url))
    assert "Activar el pago automático" in text and "Autorizo a" in text and "Número de ruta bancaria" in text
    assert english_left(text, ignoring=[account.premises.service_address]) == []
    form = {"action": "enrol", "holder_name": "Pat Payer", "routing_number": ROUTING, "account_number": BANK_ACCOUNT,
            "account_number_again": BANK_ACCOUNT, "account_type": "checking", "email": "pat@example.org", "agree": "on"}
    for wrong, said in (({"account_number_again": "0001"}, "no coincide con el número de cuenta"),
                        ({"routing_number": "011000016"}, "dígito de control ABA")):
        bad = client.post(url, {**form, **wrong})
        text = page_text(bad)
        assert bad.status_code == 400 and said in text
        assert english_left(text, ignoring=[account.premises.service_address]) == []
    response = client.post(url, form, follow=True)
    text = page_text(response)
    assert "El pago automático está activado" in text and "Cuenta de cheques que termina en 6789" in text
    # The authorization is kept as the customer read and agreed to it.
    assert AutopayEnrolment.objects.get().authorization.startswith(
        "Autorizo a Village of Mineola Water Department a debitar de la cuenta de cheques que termina en 6789")

    assert autopay_notices_send([account.bills.get().pk]) == 1
    (notice,) = mail.outbox
    assert notice.subject == f"Pago automático: se debitarán $186.13 por la cuenta de agua {account.account_no}"
    assert "El 2 de marzo de 2026 debitaremos $186.13 de su cuenta de cheques que termina en 6789" in notice.body
    assert english_left(notice.body, ignoring=[account.premises.service_address]) == []
    noticed(account)  # sent on the bill's day
    with django_capture_on_commit_callbacks(execute=True):
        ach_export(on=DUE)
    (receipt,) = [m for m in mail.outbox if m.subject.startswith("Recibo")]
    assert "Gracias: recibimos su pago." in receipt.body and "1 de marzo de 2026" in receipt.body
    assert english_left(receipt.body, ignoring=[account.premises.service_address]) == []


def test_sign_up_and_password_emails_in_the_language_the_visitor_reads(mineola, settings):
    client = Client()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    client.post(reverse("portal:signup"), {"email": "nueva@example.org"})
    customer("ya@example.org")
    client.post(reverse("portal:signup"), {"email": "ya@example.org"})
    client.post(reverse("portal:password_reset"), {"email": "ya@example.org"})
    assert [m.subject for m in mail.outbox] == ["Termine de registrarse para su cuenta de agua",
                                                "Alguien intentó registrarse con su correo electrónico",
                                                "Restablezca la contraseña de su cuenta de agua"]
    for message in mail.outbox:
        assert english_left(message.subject + "\n" + message.body) == [], message.subject


def test_a_testers_pages_in_spanish(mineola, media):
    tester = login_tester("pat@example.org", "NY-2000", expires=date.today() + timedelta(days=10))
    client = spanish_client(tester.user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    for name in ("portal:tester_home", "portal:tester_submit"):
        text = page_text(client.get(reverse(name)))
        assert "Su certificación vence pronto" in text and "en 10 días" in text
        assert english_left(text, ignoring=[tester.name, tester.company]) == [], name
    refused = client.post(reverse("portal:tester_submit"), {"serial": "", "tested_on": "", "result": ""})
    text = page_text(refused)
    assert "Indique el número de serie del dispositivo que probó." in text and "Elija aprobada o fallida." in text
