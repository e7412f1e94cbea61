"""``demo_bootstrap`` leaves the trainee a day's work: every month of the demo is billed but the current one, whose
run it names — the accounts in its books have their readings in, and running it issues their bills."""

import io
import re
from datetime import date

import pytest
from django.core.management import call_command

from billing.models import Bill

pytestmark = pytest.mark.django_db


def test_the_demo_leaves_this_months_run_for_the_trainee(settings, media):
    settings.DEBUG = True  # demo_bootstrap runs only in development mode
    out = io.StringIO()
    call_command("demo_bootstrap", "--demo", "60", stdout=out, stderr=out)
    found = re.search(r"Demo: the run of (\S+) is left for you: (\d+) accounts in its books", out.getvalue())
    assert found, out.getvalue()
    left, due = date.fromisoformat(found.group(1)), int(found.group(2))
    assert left.day == 1 and due > 0
    assert not Bill.objects.filter(bill_date=left).exists()
    assert Bill.objects.filter(bill_date__lt=left).exists()
    said = io.StringIO()
    call_command("run_billing", "--date", left.isoformat(), "--no-progress", stdout=said)
    assert Bill.objects.filter(bill_date=left).count() == due, said.getvalue()
