from datetime import date

import pytest

from billing.models import Bill, BillingRun
from tests.billing.steps import account_with_meter, read, run


@pytest.fixture
def books(mineola):
    """One account billed on 2026-02-01 with its penalties to 2026-05-10, and the run that billed it."""
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    run("assess_penalties", "--date", "2026-05-10")
    return {"account": account, "meter": meter, "bill": Bill.objects.get(account=account),
            "run": BillingRun.objects.get()}
