"""A billing run's chunks travel through Redis to a real Celery worker, which bills them in PostgreSQL."""

import io
import os
import time
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command

from billing.models import Bill, BillingRun
from billing.services.runs import billing_run_start
from tests.billing.steps import account_with_meter, read


@pytest.mark.skipif(not os.environ.get("REDIS_URL"),
                    reason="needs REDIS_URL (redis://127.0.0.1:6379/0): a real worker takes tasks from Redis")
@pytest.mark.celery_worker
def test_a_billing_run_is_billed_by_a_real_worker(transactional_db, celery_worker_process):
    call_command("setup_utility", "mineola", "--demo", "0", "--date", "2026-01-01", stdout=io.StringIO())
    for i in range(5):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_020_000 + 10_000 * i)

    run = billing_run_start(run_on=date(2026, 2, 1))  # dispatched to the broker when it commits

    deadline = time.monotonic() + 60
    while (run := BillingRun.objects.get(pk=run.pk)).status == BillingRun.Status.RUNNING:
        assert time.monotonic() < deadline, celery_worker_process.log_path.read_text()
        time.sleep(0.2)
    assert run.status == BillingRun.Status.DONE and run.bills_created == 5
    # 20,000..60,000 gal: 45.00, 76.00, 107.00, 138.00, 45 + 93 + 38.50 = 176.50
    assert sorted(Bill.objects.values_list("total", flat=True)) == [
        Decimal("45.00"), Decimal("76.00"), Decimal("107.00"), Decimal("138.00"), Decimal("176.50")]
    assert run.total_billed.amount == Decimal("542.50")
