"""Signing up never tells whether an email already has a login, and is throttled per client address.

Sign-up takes an email and answers "check your email" whatever it is. A new address gets a link to choose
a password and finish; an address that already has a login gets a note that someone tried, with a link
to reset the password.
"""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail, signing
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from portal import services
from tests.billing.test_concurrency import in_threads

from .conftest import PASSWORD, customer

pytestmark = pytest.mark.django_db


def _link(message, name: str) -> str:
    """The path of the portal link in an email (the site's address in front is settings.SITE_URL)."""
    return re.search(rf"https?://[^/\s]+(/portal/{name}/\S+/)", message.body).group(1)


def _sign_up(email: str, *, address: str = "203.0.113.7", client: Client | None = None):
    return (client or Client()).post(reverse("portal:signup"), {"email": email}, REMOTE_ADDR=address)


def test_a_taken_email_gets_the_same_answer_as_a_new_one(mineola):
    customer("erin@example.org")
    new, taken = _sign_up("new@example.org"), _sign_up("ERIN@example.org ")
    assert (new.status_code, new["Location"]) == (taken.status_code, taken["Location"]) \
        == (302, reverse("portal:signup_sent"))
    assert sorted(new.cookies) == sorted(taken.cookies)
    pages = [Client().get(response["Location"]) for response in (new, taken)]
    assert pages[0].status_code == pages[1].status_code == 200
    # The same page, but for the form's own CSRF token (the language link's): a fresh one each time.
    same = [re.sub(rb'name="csrfmiddlewaretoken" value="[^"]+"', b"", page.content) for page in pages]
    assert same[0] == same[1] and b"Check your email" in pages[0].content
    # Nobody is signed in or signed up yet: that waits for the emailed link.
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["erin@example.org"]
    assert [m.to for m in mail.outbox] == [["new@example.org"], ["erin@example.org"]]


def test_a_new_email_finishes_signing_up_from_the_emailed_link(mineola):
    _sign_up("Dana@Example.org ")
    (message,) = mail.outbox
    assert message.to == ["dana@example.org"] and "finish signing up" in message.body
    client = Client()
    page = client.get(_link(message, "signup/finish"))
    assert page.status_code == 200 and b"dana@example.org" in page.content
    weak = client.post(_link(message, "signup/finish"), {"password1": "12345678", "password2": "12345678"})
    assert weak.status_code == 400 and b"too common" in weak.content
    differ = client.post(_link(message, "signup/finish"), {"password1": PASSWORD, "password2": PASSWORD + "x"})
    assert differ.status_code == 400 and b"The two passwords differ" in differ.content
    assert not get_user_model().objects.exists()

    done = client.post(_link(message, "signup/finish"), {"password1": PASSWORD, "password2": PASSWORD})
    assert done.status_code == 302 and done["Location"] == reverse("portal:home")
    user = get_user_model().objects.get()
    assert (user.username, user.email) == ("dana@example.org", "dana@example.org")
    assert user.password.startswith("argon2")
    assert client.get(reverse("portal:home")).context["user"] == user
    # The link is spent: it signs nobody up again, and says to sign in.
    again = Client().post(_link(message, "signup/finish"), {"password1": PASSWORD, "password2": PASSWORD})
    assert again.status_code == 400 and b"already finished" in again.content
    assert get_user_model().objects.count() == 1


def test_the_owner_of_a_taken_email_is_told_and_can_reset_the_password(mineola):
    erin = customer("erin@example.org")
    _sign_up("erin@example.org")
    (message,) = mail.outbox
    assert message.to == ["erin@example.org"]
    assert "tried to sign up" in message.body and reverse("portal:login") in message.body
    client = Client()
    form_page = client.get(_link(message, "password-reset"), follow=True)
    assert form_page.status_code == 200 and b"Choose a new password" in form_page.content
    new_password = "a brand new long passphrase"
    done = client.post(form_page.redirect_chain[-1][0], {"new_password1": new_password,
                                                         "new_password2": new_password})
    assert done.status_code == 302
    erin.refresh_from_db()
    assert erin.check_password(new_password)


def test_a_deactivated_login_is_not_emailed(mineola):
    user = customer("gone@example.org")
    user.is_active = False
    user.save()
    response = _sign_up("gone@example.org")
    assert response.status_code == 302 and response["Location"] == reverse("portal:signup_sent")
    assert mail.outbox == []


def test_tampered_and_expired_links_sign_nobody_up(mineola, monkeypatch):
    _sign_up("hal@example.org")
    token = _link(mail.outbox[0], "signup/finish").rstrip("/").rsplit("/", 1)[1]
    forged = token[:-1] + ("A" if token[-1] != "A" else "B")
    tampered = Client().post(reverse("portal:signup_finish", kwargs={"token": forged}),
                             {"password1": PASSWORD, "password2": PASSWORD})
    assert tampered.status_code == 400 and b"expired or is not valid" in tampered.content
    four_days_ago = timezone.now().timestamp() - timedelta(days=4).total_seconds()
    monkeypatch.setattr(signing.time, "time", lambda: four_days_ago)
    old = services.sign_up_token_make(email="hal@example.org")
    monkeypatch.undo()
    expired = Client().get(reverse("portal:signup_finish", kwargs={"token": old}))
    assert expired.status_code == 400 and b"expired or is not valid" in expired.content
    assert not get_user_model().objects.exists()


def test_sign_up_is_throttled_per_client_address(mineola):
    for n in range(services.SIGN_UPS_PER_ADDRESS):
        assert _sign_up(f"n{n}@example.org").status_code == 302
    refused = _sign_up("one-more@example.org")
    assert refused.status_code == 429 and b"Too many sign-ups" in refused.content
    assert len(mail.outbox) == services.SIGN_UPS_PER_ADDRESS  # the refused one sent nothing
    # Another address is not held back.
    assert _sign_up("elsewhere@example.org", address="198.51.100.4").status_code == 302


def test_the_throttle_counts_per_window(db):
    now = timezone.now()
    for _ in range(services.SIGN_UPS_PER_ADDRESS):
        assert services.sign_up_allowed(ip_address="203.0.113.9", now=now)
    assert not services.sign_up_allowed(ip_address="203.0.113.9", now=now)
    assert services.sign_up_allowed(ip_address="203.0.113.9", now=now + services.SIGN_UP_WINDOW)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_sign_ups_from_one_address_let_exactly_the_limit_through():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL): SQLite serializes writers, so there is no race to test")
    now, allowed = timezone.now(), []
    in_threads(*[lambda: allowed.append(services.sign_up_allowed(ip_address="203.0.113.5", now=now))
                 for _ in range(services.SIGN_UPS_PER_ADDRESS + 6)])
    assert allowed.count(True) == services.SIGN_UPS_PER_ADDRESS and len(allowed) == services.SIGN_UPS_PER_ADDRESS + 6
