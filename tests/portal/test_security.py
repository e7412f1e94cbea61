"""A customer reaches only their own accounts; forms are CSRF-protected; sign-in and linking are throttled."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import Account, PortalLink
from portal.models import LinkFailure

from .conftest import PASSWORD, billed_account, customer

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def customer_urls(account, bill):
    """Every portal URL that names an account or a bill, with the method it takes."""
    return [
        ("get", reverse("portal:account", kwargs={"public_id": account.public_id})),
        ("post", reverse("portal:paperless", kwargs={"public_id": account.public_id})),
        ("get", reverse("portal:bill", kwargs={"public_id": bill.public_id})),
        ("get", reverse("portal:bill_pdf", kwargs={"public_id": bill.public_id})),
    ]


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return client


def test_each_customer_reaches_their_own_pages(two_customers):
    for name in ("alice", "bob"):
        user, account, bill = two_customers[name]
        client = signed_in(user)
        for method, url in customer_urls(account, bill):
            response = getattr(client, method)(url, {"paperless": "on"} if method == "post" else None)
            assert response.status_code in (200, 302), (name, url, response.status_code)
        pdf = client.get(reverse("portal:bill_pdf", kwargs={"public_id": bill.public_id}))
        assert pdf["Content-Type"] == "application/pdf" and pdf.content.startswith(b"%PDF")


def test_every_customer_url_answers_404_to_another_customer(two_customers):
    alice, alice_account, alice_bill = two_customers["alice"]
    bob, bob_account, bob_bill = two_customers["bob"]
    for user, (account, bill) in ((alice, (bob_account, bob_bill)), (bob, (alice_account, alice_bill))):
        client = signed_in(user)
        for method, url in customer_urls(account, bill):
            response = getattr(client, method)(url, {"paperless": "on"} if method == "post" else None)
            assert response.status_code == 404, (user.email, method, url, response.status_code)
    assert not Account.objects.filter(paperless=True).exists()  # the refused POSTs changed nothing


def test_unknown_identifiers_and_non_uuids_answer_404(two_customers):
    alice, _, _ = two_customers["alice"]
    client = signed_in(alice)
    assert client.get("/portal/accounts/00000000-0000-0000-0000-000000000000/").status_code == 404
    assert client.get("/portal/accounts/1/").status_code == 404
    assert client.get("/portal/bills/1/pdf/").status_code == 404


def test_anonymous_visitors_are_sent_to_sign_in(two_customers):
    _, account, bill = two_customers["alice"]
    client = Client()
    for method, url in [*customer_urls(account, bill), ("get", reverse("portal:link"))]:
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("portal:login") + "?next="), url


def test_customer_pages_carry_no_sequential_ids(two_customers):
    alice, account, bill = two_customers["alice"]
    client = signed_in(alice)
    pages = [client.get(reverse("portal:home")), client.get(reverse("portal:account",
                                                                    kwargs={"public_id": account.public_id}))]
    uuid = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    for page in pages:
        for href in re.findall(r'href="(/portal/(?:accounts|bills)/[^"]*)"', page.content.decode()):
            assert re.fullmatch(rf"/portal/(accounts|bills)/{uuid}/(pdf/|notifications/)?", href), href


@pytest.mark.parametrize("name", ["signup", "login", "link", "password_reset", "logout", "paperless"])
def test_forms_refuse_posts_without_a_csrf_token(two_customers, name):
    alice, account, _ = two_customers["alice"]
    client = Client(enforce_csrf_checks=True)
    if name in ("link", "logout", "paperless"):
        client.force_login(alice, backend="django.contrib.auth.backends.ModelBackend")
    url = reverse(f"portal:{name}", kwargs={"public_id": account.public_id} if name == "paperless" else None)
    assert client.post(url, {"email": "x@example.org", "username": "alice@example.org", "password": PASSWORD,
                             "account_no": account.account_no, "access_code": account.access_code,
                             "paperless": "on"}).status_code == 403


def test_forms_carry_csrf_tokens(two_customers):
    client = Client(enforce_csrf_checks=True)
    page = client.get(reverse("portal:login"))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    response = client.post(reverse("portal:login"), {"csrfmiddlewaretoken": token, "username": "alice@example.org",
                                                    "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == reverse("portal:home")


def test_sign_in_is_throttled_after_five_failures(two_customers):
    client = Client()
    url = reverse("portal:login")
    for _ in range(4):
        response = client.post(url, {"username": "alice@example.org", "password": "wrong password"})
        assert response.status_code == 200 and b"do not match an account here" in response.content and b"correct username" not in response.content
    # The fifth failure locks the email out from this address, and then even the right password fails.
    assert client.post(url, {"username": "alice@example.org", "password": "wrong"}).status_code == 429
    response = client.post(url, {"username": "alice@example.org", "password": PASSWORD})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    # Another customer is not affected.
    assert client.post(url, {"username": "bob@example.org", "password": PASSWORD}).status_code == 302


def test_linking_gives_one_generic_error_and_is_throttled(mineola, media):
    account = billed_account()
    other = billed_account()
    mallory = customer("mallory@example.org")
    client = signed_in(mallory)
    url = reverse("portal:link")
    wrong_code = client.post(url, {"account_no": account.account_no, "access_code": "WRONG234"})
    no_such_account = client.post(url, {"account_no": "9-99999", "access_code": account.access_code})
    other_accounts_code = client.post(url, {"account_no": account.account_no, "access_code": other.access_code})
    messages = set()
    for response in (wrong_code, no_such_account, other_accounts_code):
        assert response.status_code == 400
        messages.add(re.search(r"class=\"field-error\"[^>]*>([^<]*)<", response.content.decode()).group(1).strip())
    assert messages == {"That account number and access code do not match our records. Check both on your bill."}
    client.post(url, {"account_no": account.account_no, "access_code": "WRONG235"})
    client.post(url, {"account_no": account.account_no, "access_code": "WRONG236"})
    assert LinkFailure.objects.filter(user=mallory).count() == 5
    # The sixth try is refused even with the right code, and is not checked at all.
    response = client.post(url, {"account_no": account.account_no, "access_code": account.access_code})
    assert response.status_code == 429 and b"Too many attempts" in response.content
    assert not PortalLink.objects.filter(user=mallory).exists()


def test_linking_with_the_printed_code_works_and_tolerates_case_and_spaces(mineola, media):
    account = billed_account()
    client = signed_in(customer("carol@example.org"))
    code = account.access_code
    response = client.post(reverse("portal:link"), {"account_no": f" {account.account_no} ",
                                                    "access_code": f"{code[:4].lower()} {code[4:]}"})
    assert response.status_code == 302
    assert response["Location"] == reverse("portal:account", kwargs={"public_id": account.public_id})


def test_production_settings_have_secure_cookies_and_hsts():
    code = ("from django.conf import settings as s; import django; django.setup(); "
            "print(s.SESSION_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY, s.SESSION_COOKIE_SAMESITE, "
            "s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS > 0, s.SECURE_SSL_REDIRECT)")
    env = {**os.environ, "DJANGO_DEBUG": "0", "SECRET_KEY": "x" * 60, "DJANGO_SETTINGS_MODULE": "waterbilling.settings"}
    env.pop("SECURE_HSTS_SECONDS", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "Lax", "True", "True", "True"]


def test_production_refuses_to_start_without_a_secret_key():
    env = {**os.environ, "DJANGO_DEBUG": "0", "SECRET_KEY": "", "DJANGO_SETTINGS_MODULE": "waterbilling.settings"}
    out = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert out.returncode != 0 and "SECRET_KEY" in out.stderr
