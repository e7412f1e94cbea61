"""Settings fail closed: debugging is off unless ``DJANGO_DEBUG`` asks for it, and off it wants a SECRET_KEY."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOW = ("import django; from django.conf import settings as s; django.setup(); "
        "print(s.DEBUG, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE)")


def settings_with(**variables) -> subprocess.CompletedProcess:
    """The project's settings read in a fresh process whose environment has ``variables`` and no
    DJANGO_DEBUG or SECRET_KEY of its own (the test suite's process asks for development mode)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG", "SECRET_KEY")}
    env.update(DJANGO_SETTINGS_MODULE="waterbilling.settings", **variables)
    return subprocess.run([sys.executable, "-c", SHOW], cwd=ROOT, env=env, capture_output=True, text=True)


def test_debug_is_off_when_the_environment_says_nothing():
    out = settings_with(SECRET_KEY="x" * 60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True"]


def test_with_nothing_set_the_app_refuses_to_start_without_a_secret_key():
    out = settings_with()
    assert out.returncode != 0
    assert "SECRET_KEY must be set when DJANGO_DEBUG is off" in out.stderr and "DJANGO_DEBUG=1" in out.stderr


def test_development_is_asked_for_and_gets_the_development_key():
    out = settings_with(DJANGO_DEBUG="1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False", "False"]


def test_test_payments_are_refused_with_debugging_off_and_give_the_demo_a_bank():
    refused = settings_with(SECRET_KEY="x" * 60, TEST_PAYMENTS="1")
    assert refused.returncode != 0 and "TEST_PAYMENTS is for development only" in refused.stderr
    allowed = settings_with(DJANGO_DEBUG="1", TEST_PAYMENTS="1")
    assert allowed.returncode == 0, allowed.stderr
    shown = subprocess.run([sys.executable, "-c", "import django; django.setup(); from django.conf import settings; "
                            "from cryptography.fernet import Fernet; Fernet(settings.BANK_ACCOUNT_KEY.encode()); "
                            "print(settings.ACH_ODFI_ROUTING, settings.ACH_COMPANY_NAME)"],
                           cwd=ROOT, capture_output=True, text=True,
                           env={**{k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "BANK_ACCOUNT_KEY")},
                                "DJANGO_SETTINGS_MODULE": "waterbilling.settings", "DJANGO_DEBUG": "1",
                                "TEST_PAYMENTS": "1"})
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == ["011000015", "TEST", "VILLAGE"]
    assert "run: export TEST_PAYMENTS ?= 1" in (ROOT / "Makefile").read_text().splitlines()


def test_make_run_asks_for_development_mode():
    assert "run: export DJANGO_DEBUG := 1" in (ROOT / "Makefile").read_text().splitlines()
