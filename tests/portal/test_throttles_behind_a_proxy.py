"""Throttles and lockouts count each customer's own address, also behind the TLS proxy, and the
linking limit holds under concurrent attempts."""

import threading

import pytest
from django.db import connection, connections
from django.test import Client, RequestFactory
from django.urls import reverse

from core.errors import ApplicationError
from core.net import client_ip
from portal.models import LinkFailure
from portal.services import LinkThrottled, account_link

from .conftest import PASSWORD, billed_account, customer

PROXY = "10.0.0.2"


def request_from(remote: str, forwarded: str | None = None):
    meta = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **meta)


@pytest.mark.parametrize(("count", "remote", "forwarded", "expected"), [
    (0, "203.0.113.5", "198.51.100.7", "203.0.113.5"),  # no proxy configured: the header is ignored
    (1, PROXY, "198.51.100.7", "198.51.100.7"),  # one proxy: what it saw
    (1, PROXY, "6.6.6.6, 198.51.100.7", "198.51.100.7"),  # the client's own entry is never trusted
    (2, PROXY, "6.6.6.6, 198.51.100.7, 10.0.0.9", "198.51.100.7"),  # two proxies
    (1, PROXY, None, PROXY),  # did not come through the proxy
    (2, PROXY, "198.51.100.7", PROXY),  # fewer hops than proxies
    (1, PROXY, "not-an-address", PROXY),
])
def test_the_client_address_comes_from_the_trusted_proxies_only(settings, count, remote, forwarded, expected):
    settings.TRUSTED_PROXY_COUNT = count
    assert client_ip(request_from(remote, forwarded)) == expected


def through_proxy(client_address: str) -> Client:
    return Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=client_address)


@pytest.mark.django_db
def test_one_customers_wrong_codes_do_not_block_everyone_behind_the_proxy(settings, mineola, media):
    settings.TRUSTED_PROXY_COUNT = 1
    account = billed_account()
    # Four guessers at one address run into the per-address limit of 20 …
    for n in range(4):
        guesser = through_proxy("198.51.100.66")
        guesser.force_login(customer(f"guesser{n}@example.org"), backend="django.contrib.auth.backends.ModelBackend")
        for attempt in range(5):
            guesser.post(reverse("portal:link"), {"account_no": account.account_no, "access_code": f"WRONG{n}{attempt}AB"})
    assert LinkFailure.objects.filter(ip_address="198.51.100.66").count() == 20
    # … while a customer at home, behind the same proxy, links their account.
    owner = through_proxy("203.0.113.10")
    owner.force_login(customer("owner@example.org"), backend="django.contrib.auth.backends.ModelBackend")
    response = owner.post(reverse("portal:link"), {"account_no": account.account_no,
                                                   "access_code": account.access_code})
    assert response.status_code == 302


@pytest.mark.django_db
def test_failed_sign_ins_lock_the_username_from_that_address_only(settings, mineola):
    settings.TRUSTED_PROXY_COUNT = 1
    customer("alice@example.org")
    attacker = through_proxy("198.51.100.66")
    for _ in range(5):
        attacker.post(reverse("portal:login"), {"username": "alice@example.org", "password": "wrong"})
    assert attacker.post(reverse("portal:login"), {"username": "alice@example.org",
                                                   "password": PASSWORD}).status_code == 429
    # Alice, from her own address through the same proxy, still signs in.
    alice = through_proxy("203.0.113.10")
    response = alice.post(reverse("portal:login"), {"username": "alice@example.org", "password": PASSWORD})
    assert response.status_code == 302


@pytest.mark.django_db(transaction=True)
def test_twelve_concurrent_wrong_codes_count_as_twelve_tries_of_five(mineola):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL): SQLite serializes writers, so there is no race to test")
    account = billed_account()
    mallory = customer("mallory@example.org")
    barrier = threading.Barrier(12)
    outcomes = []

    def attempt(n):
        try:
            barrier.wait()
            account_link(user=mallory, account_no=account.account_no, access_code=f"WRONG{n:03d}",
                         ip_address="198.51.100.66")
        except LinkThrottled:
            outcomes.append("throttled")
        except ApplicationError:
            outcomes.append("refused")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert LinkFailure.objects.filter(user=mallory).count() == 5
    assert sorted(outcomes) == ["refused"] * 5 + ["throttled"] * 7
