"""Two billing runs at once on PostgreSQL bill each account once: the database is the last defence."""

import threading
from datetime import date
from decimal import Decimal

import pytest
from django.db import connection, connections

from billing.models import Bill, LedgerEntry
from billing.runs.lifecycle import billing_run_chunk_execute, billing_run_create
from billing.services.penalties import penalties_assess_due
from tests.billing.steps import account_with_meter, read

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


@pytest.fixture(autouse=True)
def needs_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL): SQLite serializes writers, so there is no race to test")


def in_threads(*targets):
    errors = []
    barrier = threading.Barrier(len(targets))

    def wrap(target):
        try:
            barrier.wait()
            target()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=wrap, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_two_concurrent_runs_bill_each_account_once(mineola):
    for i in range(40):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_020_000 + 1_000 * i)
    # Different chunk sizes so the two runs' chunks overlap differently.
    runs = [billing_run_create(run_on=date(2026, 2, 1), chunk_size=size) for size in (7, 15)]

    def execute(run):
        def go():
            for chunk_id in run.chunks.order_by("index").values_list("id", flat=True):
                billing_run_chunk_execute(chunk_id=chunk_id)
        return go

    in_threads(*(execute(r) for r in runs))
    assert Bill.objects.count() == 40
    assert Bill.objects.values("account").distinct().count() == 40
    assert LedgerEntry.objects.filter(kind="water").count() == 40
    for r in runs:
        r.refresh_from_db()
    assert sum(r.bills_created for r in runs) == 40
    assert sum(r.already_billed for r in runs) == 40


def test_two_concurrent_penalty_assessments_post_once(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run = billing_run_create(run_on=date(2026, 2, 1))
    billing_run_chunk_execute(chunk_id=run.chunks.get().pk)
    in_threads(lambda: penalties_assess_due(as_of=date(2026, 5, 10)),
               lambda: penalties_assess_due(as_of=date(2026, 5, 10)))
    amounts = sorted(LedgerEntry.objects.filter(kind="penalty").values_list("amount", flat=True))
    assert amounts == [Decimal("1.86"), Decimal("1.86"), Decimal("9.31")]


def test_issued_bills_and_ledger_are_protected_by_the_database(mineola):
    from django.db import IntegrityError, transaction

    from billing.models import BillLine

    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run = billing_run_create(run_on=date(2026, 2, 1))
    billing_run_chunk_execute(chunk_id=run.chunks.get().pk)
    for attempt in (lambda: Bill.objects.update(total=Decimal("1.00")),
                    lambda: connection.cursor().execute("DELETE FROM billing_bill"),
                    lambda: LedgerEntry.objects.update(amount=Decimal("0.00")),
                    lambda: BillLine.objects.all().delete()):
        with pytest.raises(IntegrityError, match="append-only|cannot be deleted|cannot change"), transaction.atomic():
            attempt()
    Bill.objects.update(status="void", void_reason="allowed: voiding")
    with pytest.raises(IntegrityError, match="stays void"), transaction.atomic():
        Bill.objects.update(status="issued")
