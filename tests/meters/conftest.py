"""The meters tests' shared fixtures."""

import io

import pytest
from django.core.management import call_command

from tests.fee_presets import old_westbury_fees, washingtonville_fees  # noqa: F401


@pytest.fixture
def imported(tmp_path, django_capture_on_commit_callbacks):
    def run(text: str, *args: str, name="readings.txt", on="2026-12-02") -> str:
        path = tmp_path / name
        path.write_text(text)
        out = io.StringIO()
        with django_capture_on_commit_callbacks(execute=True):
            call_command("import_readings", str(path), "--date", on, *args, stdout=out, stderr=out)
        return out.getvalue()
    return run
