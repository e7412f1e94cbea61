"""Bill PDF downloads: at most 30 a customer in ten minutes, counted atomically."""

import os
import threading
import uuid
from types import SimpleNamespace

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from core import ratelimit
from portal import views

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return client


def pdf_url(bill) -> str:
    return reverse("portal:bill_pdf", kwargs={"public_id": bill.public_id})


def clock(monkeypatch, seconds: float) -> None:
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: seconds))


def test_the_31st_download_in_ten_minutes_is_refused_and_others_are_not(two_customers, monkeypatch):
    alice, _, alice_bill = two_customers["alice"]
    bob, _, bob_bill = two_customers["bob"]
    clock(monkeypatch, 1_800_000_000)  # the start of a ten-minute window
    client = signed_in(alice)

    assert [client.get(pdf_url(alice_bill)).status_code for _ in range(30)] == [200] * 30
    refused = client.get(pdf_url(alice_bill))

    assert refused.status_code == 429 and refused["Retry-After"] == "600"
    text = refused.content.decode()
    assert "You have downloaded 30 bill PDFs in the last 10 minutes" in text
    assert "Try again in 10 minutes" in text
    assert signed_in(bob).get(pdf_url(bob_bill)).status_code == 200

    clock(monkeypatch, 1_800_000_000 + 599)
    assert client.get(pdf_url(alice_bill))["Retry-After"] == "1"
    clock(monkeypatch, 1_800_000_000 + 600)  # the next window
    assert client.get(pdf_url(alice_bill)).status_code == 200


def test_a_refused_download_renders_nothing(two_customers, monkeypatch):
    alice, _, alice_bill = two_customers["alice"]
    monkeypatch.setattr(views, "PDF_DOWNLOADS", 1)
    client = signed_in(alice)
    assert client.get(pdf_url(alice_bill)).status_code == 200
    monkeypatch.setattr(views, "bill_pdf_bytes", lambda **kwargs: pytest.fail("rendered or read a refused PDF"))
    assert client.get(pdf_url(alice_bill)).status_code == 429


def hits_at_once(n: int, *, limit: int) -> int:
    """How many of ``n`` simultaneous hits on one key the limit lets through."""
    barrier, allowed, key = threading.Barrier(n), [], uuid.uuid4().hex

    def hit():
        barrier.wait()
        if ratelimit.rate_limit_hit(scope="test", key=key, limit=limit, window_seconds=600) is None:
            allowed.append(1)

    threads = [threading.Thread(target=hit) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(allowed)


def test_while_the_cache_is_down_downloads_go_through(two_customers, monkeypatch, caplog):
    alice, _, alice_bill = two_customers["alice"]

    def unreachable(*args, **kwargs):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(ratelimit.cache, "add", unreachable)
    response = signed_in(alice).get(pdf_url(alice_bill))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert "not counted: the cache is unavailable" in caplog.text


def test_the_count_is_atomic():
    assert hits_at_once(40, limit=30) == 30


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs REDIS_URL: the counters production keeps")
def test_the_count_is_atomic_in_redis_which_every_web_process_shares(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": os.environ["REDIS_URL"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}}
    assert cache.get("nothing") is None  # really Redis: a fresh prefix
    assert hits_at_once(40, limit=30) == 30


def test_production_keeps_the_counters_in_redis():
    import subprocess
    import sys
    from pathlib import Path

    show = ("import django; from django.conf import settings as s; django.setup(); "
            "print(s.CACHES['default']['BACKEND'], s.CACHES['default']['LOCATION'])")
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_DEBUG"}
    env.update(DJANGO_SETTINGS_MODULE="waterbilling.settings", SECRET_KEY="x" * 60, REDIS_URL="redis://redis:6379/0")
    out = subprocess.run([sys.executable, "-c", show], cwd=Path(__file__).resolve().parents[2], env=env,
                         capture_output=True, text=True)
    assert out.stdout.split() == ["django.core.cache.backends.redis.RedisCache", "redis://redis:6379/0"], out.stderr
