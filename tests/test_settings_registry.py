"""Every setting from one registry (``waterbilling/environment.py``): settings.py reads each variable through it and
nothing else, docs/operations.md's table and docker-compose.yml's environment are what the registry writes, and a
value of the wrong kind stops the process naming the variable."""

import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from waterbilling.environment import BY_NAME, KINDS, VARIABLES, WHO, Environment
from waterbilling.management.commands.settings_docs import compose_file, operations_doc

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_PY = (ROOT / "waterbilling" / "settings.py").read_text()


def test_settings_py_reads_every_variable_of_the_registry_and_nothing_else():
    read = re.findall(r'setting\("([A-Z][A-Z0-9_]+)"\)', SETTINGS_PY)
    assert sorted(set(read)) == sorted(BY_NAME), "settings.py and waterbilling/environment.py name other variables"
    assert len(read) == len(set(read)), "a variable read twice"
    for other_door in ("os.environ", "getenv", "environ.Env", "env."):
        assert other_door not in SETTINGS_PY, f"settings.py reads the environment through {other_door}"


def test_each_variable_is_declared_whole():
    for variable in VARIABLES:
        assert variable.kind in KINDS and variable.who in WHO, variable.name
        assert variable.meaning and variable.shown, variable.name
    assert len(VARIABLES) == len(BY_NAME) >= 58


def test_the_operations_doc_and_the_compose_file_are_what_the_registry_writes():
    doc = (ROOT / "docs" / "operations.md").read_text()
    assert operations_doc(doc) == doc, "docs/operations.md differs: run manage.py settings_docs --write"
    compose = (ROOT / "docker-compose.yml").read_text()
    assert compose_file(compose) == compose, "docker-compose.yml differs: run manage.py settings_docs --write"
    for variable in VARIABLES:
        assert f"| `{variable.name}` |" in doc
        assert f"\n  {variable.name}: " in compose


@pytest.mark.parametrize(("name", "raw", "said"), [
    ("EMAIL_PORT", "twenty-five", "EMAIL_PORT='twenty-five' is not a whole number, 0 or more"),
    ("CHECK_CLEARING_DAYS", "-1", "CHECK_CLEARING_DAYS='-1' is not a whole number"),
    ("DJANGO_DEBUG", "maybe", "DJANGO_DEBUG='maybe' is not 1 or 0"),
    ("NIGHTLY_RUN_WAIT_SECONDS", "nan", "NIGHTLY_RUN_WAIT_SECONDS='nan' is not a number of seconds"),
    ("EXCEPTION_POST_LIMIT", "12.345", "EXCEPTION_POST_LIMIT='12.345' is not an amount of dollars and cents"),
    ("DATABASE_URL", "mysqll://x", "DATABASE_URL='mysqll://x' is not a database URL"),
])
def test_a_value_of_the_wrong_kind_is_refused_naming_the_variable(name, raw, said):
    with pytest.raises(ImproperlyConfigured) as refused:
        Environment({name: raw})(name)
    assert str(refused.value).startswith(said)


def test_values_are_read_by_their_kind_and_empty_is_the_default():
    read = Environment({"EMAIL_USE_TLS": "yes", "EMAIL_PORT": " 587 ", "EXCEPTION_POST_LIMIT": "250.00",
                        "BANK_BILLPAY_WORDS": "RPPS, BILL PAY ,", "CELERY_TASK_DEFAULT_QUEUE": "",
                        "REDIS_URL": "redis://r:6379/0"})
    assert read("EMAIL_USE_TLS") is True and read("EMAIL_PORT") == 587
    assert read("EXCEPTION_POST_LIMIT") == Decimal("250.00")
    assert read("BANK_BILLPAY_WORDS") == ["RPPS", "BILL PAY"]
    assert read("CELERY_TASK_DEFAULT_QUEUE") == "celery"
    assert read("LONG_WORK_IN_THREAD") is False and read("BILL_PDFS_ON_ISSUE") is True  # with a worker
    embedded = Environment({})
    assert embedded("LONG_WORK_IN_THREAD") is True and embedded("BILL_PDFS_ON_ISSUE") is False
    with pytest.raises(ImproperlyConfigured, match="NOT_DECLARED is not in waterbilling/environment.py"):
        embedded("NOT_DECLARED")


def test_a_process_started_with_a_wrong_value_stops_naming_it():
    env = {"DJANGO_SETTINGS_MODULE": "waterbilling.settings", "DJANGO_DEBUG": "1", "EMAIL_PORT": "twenty-five",
           "PATH": "/usr/bin:/bin"}
    started = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                             capture_output=True, text=True)
    assert started.returncode != 0
    assert "EMAIL_PORT='twenty-five' is not a whole number, 0 or more" in started.stderr
