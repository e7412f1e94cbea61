"""A small billed Mineola village for the reports, and the steps the tests take through ``report``.

Book 1, billed 2026-02-01 and due 2026-03-01 (§ 45.29 A, D), from readings of 2025-07-10 and 2026-01-12:

* 1-0001: 62,500 gal → $45.00 + 30,000 × $3.10 + 12,500 × $3.85 = $186.13 (docs/ordinances.md's worked
  example), unpaid: penalties 2026-03-02 $9.31, 2026-04-02 $1.86, 2026-05-02 $1.86 (§ 45.29 E) →
  $199.16 on 2026-05-10.
* 1-0002: 20,000 gal → the $45.00 minimum, paid at the counter 2026-02-20.
* 1-0003: 30,000 gal → $45.00 + 10,000 × $3.10 = $76.00; $50.00 paid from a bank file 2026-02-25 leaves
  $26.00: penalties 5% $1.30, then 1% $0.26 and $0.26 → $27.82.
* 1-0004: 10,000 gal → $45.00; $60.00 paid through the API 2026-02-10: a $15.00 credit.

Book 3, billed 2026-03-01 and due 2026-04-01, from a reading of 2026-02-10:

* 3-0001: 40,000 gal → $45.00 + 20,000 × $3.10 = $107.00, unpaid: penalties 2026-04-02 $5.35 and
  2026-05-02 $1.07 → $113.42.

Penalties are assessed through 2026-05-10. On that day the balances add up to $199.16 + $27.82 − $15.00 +
$113.42 = $325.40, of which $340.40 is past due and the $15.00 credit is current.
"""

import csv
import io
import json
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from billing.services.payments import payment_post
from tests.billing.steps import account_with_meter, pay, read, run

ON = "2026-05-10"


def billed_village():
    """The village above, penalties assessed through 2026-05-10; the accounts by number."""
    accounts = {}
    for number, gallons in (("1-0001", 62_500), ("1-0002", 20_000), ("1-0003", 30_000), ("1-0004", 10_000)):
        account, meter = account_with_meter(book=1, account_no=number)
        read(meter, date(2026, 1, 12), 1_000_000 + gallons)
        accounts[number] = account
    account, meter = account_with_meter(book=3, account_no="3-0001", start=date(2025, 8, 12))
    read(meter, date(2026, 2, 10), 1_040_000)
    accounts["3-0001"] = account
    run("run_billing", "--date", "2026-02-01")
    pay(accounts["1-0002"], "45.00", "2026-02-20", "CHK-2002")
    payment_post(account_no="1-0003", amount=Decimal("50.00"), paid_on=date(2026, 2, 25), reference="BANK-3", source="import")
    payment_post(account_no="1-0004", amount=Decimal("60.00"), paid_on=date(2026, 2, 10), reference="API-4", source="api")
    run("run_billing", "--date", "2026-03-01")
    run("assess_penalties", "--date", ON)
    return accounts


def report(*args: str) -> str:
    out = io.StringIO()
    call_command("report", *args, stdout=out)
    return out.getvalue()


def report_json(*args: str) -> dict:
    return json.loads(report(*args, "--format", "json"))


def report_csv(*args: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(report(*args, "--format", "csv"))))


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as info:
        report(*args)
    return str(info.value)
