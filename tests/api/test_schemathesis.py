"""Schemathesis drives the API from its own OpenAPI schema against a live server: no operation answers a
server error, and every answer is one the schema documents, shaped as it says.

It runs every phase (coverage, fuzzing, stateful) with at most ``MAX_EXAMPLES`` cases per operation, as
a superuser's token, on the suite's database (PostgreSQL in CI), with a fixed seed so a run is repeatable;
``SCHEMATHESIS_SEED`` picks another. Checks left out, and why: ``positive_data_acceptance`` (a well-shaped
payment for an account that does not exist is rightly refused: business rules the schema cannot state)
and ``negative_data_rejection`` (the writer shared with the CSV import accepts a little more than the
documented patterns, e.g. ``1E+3`` dollars). A failure prints schemathesis's report with a curl command
that reproduces each case.
"""

import json
import os
import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from tests.termination.steps import served_case

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db(transaction=True)]

MAX_EXAMPLES = 25
CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "response_headers_conformance", "ignored_auth", "unsupported_method",
          "allow_header_conformance", "missing_required_header"]


# Values that have broken APIs like this one, offered now and then in place of generated text and
# numbers: a NUL (PostgreSQL refuses it), amounts and offsets past what a column holds, dates at the ends
# of the calendar.
EDGES = ["\\u0000", "a\\u0000b", "99999999999", "99999999999.99", "1e30", "99999999999999999999", "-1", "0",
         "0001-01-01", "9999-12-31", "2026-02-30"]


def _config(books: dict, case_number: str) -> str:
    """Identifiers on file, offered half the time in place of generated ones, so cases reach past a 404;
    and the edge values above. A path's ``number`` is a bill's or a termination case's."""
    on_file = {"accounts": [books["account"].account_no], "numbers": [books["bill"].number, case_number],
               "meters": [books["meter"].serial]}
    bindings = {"accounts": ["path.account_no", "query.account_no", "body.account_no", "body.[*].account_no"],
                "numbers": ["path.number"], "meters": ["body.meter_serial", "body.[*].meter_serial"]}
    lines = [f"[dictionaries.{name}]\nvalues = {json.dumps(values)}" for name, values in on_file.items()]
    quoted = ", ".join(f'"{value}"' for value in EDGES)
    lines.append(f"[dictionaries.edges]\nvalues = [{quoted}]")
    lines.append("[dictionaries.edge_integers]\nvalues = [9223372036854775808, 99999999999999999999, -1, 0]")
    lines.append("[parameters]")
    lines += [f'"{key}" = {{ dictionary = "{name}", probability = 0.5 }}' for name, keys in bindings.items()
              for key in keys]
    lines.append("[generation.dictionaries]")
    lines.append('string = { dictionary = "edges", probability = 0.1 }')
    lines.append('integer = { dictionary = "edge_integers", probability = 0.1 }')
    return "\n".join(lines) + "\n"


@pytest.mark.long(150)
def test_no_operation_answers_a_server_error_or_off_schema(live_server, books, tmp_path):
    root = get_user_model().objects.create_superuser("root", "root@example.org", "x")
    token = Token.objects.create(user=root).key
    case_number = served_case(books["account"], occupant=False)
    (tmp_path / "schemathesis.toml").write_text(_config(books, case_number))
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", f"{live_server.url}/api/schema/",
        "--header", f"Authorization: Token {token}", "--checks", ",".join(CHECKS),
        "--max-examples", str(MAX_EXAMPLES), "--seed", os.environ.get("SCHEMATHESIS_SEED", "20261130"),
        "--workers", "1", "--request-timeout", "60", "--generation-database", "none", "--no-color",
    ]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-30_000:] + result.stderr[-5_000:]
