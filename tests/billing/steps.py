"""Steps the billing tests take through the commands and services, as a clerk would."""

import io
import json
from datetime import date

from django.core.management import call_command

from billing.services.payments import payments_rows_post
from core.csvimport import CsvRow
from meters.models import Reading
from tests.factories import AccountFactory, InstallationFactory, MeterFactory


def run(*args):
    out = io.StringIO()
    call_command(*args, "--no-progress", stdout=out) if args[0] in ("run_billing", "assess_penalties") \
        else call_command(*args, stdout=out)
    return out.getvalue()


def statement(account_no, on):
    out = io.StringIO()
    call_command("statement", account_no, "--json", "--date", on, stdout=out)
    return json.loads(out.getvalue())


def account_with_meter(*, book=1, category="one_two_family", size="5/8", unit="gal", start=date(2025, 7, 10),
                       value=1_000_000, **kwargs):
    account = AccountFactory(book=book, category=category, **kwargs)
    meter = MeterFactory(size=size, unit=unit)
    InstallationFactory(meter=meter, account=account, installed_on=start)
    Reading.objects.create(meter=meter, read_on=start, value=value, source="install")
    return account, meter


def pay(account, amount, on, reference):
    payments_rows_post(rows=[CsvRow(2, {"account_no": account.account_no, "amount": amount, "paid_on": on,
                                        "reference": reference})], as_of=date.fromisoformat(on), source="counter")


def read(meter, on, value, read_type="actual"):
    return Reading.objects.create(meter=meter, read_on=on, value=value, read_type=read_type)
