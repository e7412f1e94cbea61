"""Issuing bills for a chunk of accounts, in three steps: load their facts in a few queries, with the accounts
locked (``load``); plan each bill or exception in Python (``plan``); write bills, lines and ledger entries in bulk
(``write``). A preview and the parallel run plan without locks and write nothing (``bills_plan``)."""

from datetime import date

from django.db import connection

from core.db import is_postgres

from ..models import BillingRun
from ..ordinance import ordinance_on
from .load import chunk_load
from .plan import ChunkResult, plan_chunk
from .write import chunk_write


def bill_accounts(*, account_ids: list[int], run_on: date, run: BillingRun | None) -> ChunkResult:
    """Issue the bills due on ``run_on`` for these accounts (inside the caller's transaction)."""
    ordinance = ordinance_on(run_on)
    if is_postgres():
        # A chunk's queries are small and the run's workers already share the cores: a parallel plan only
        # adds its workers' start-up to each query.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL max_parallel_workers_per_gather = 0")
    facts = chunk_load(account_ids=account_ids, run_on=run_on, calendar=ordinance.calendar, lock=True)
    plan = plan_chunk(facts, ordinance=ordinance, run_on=run_on, run=run)
    chunk_write(plan, run_on=run_on)
    return plan


def bills_plan(*, account_ids: list[int], run_on: date) -> ChunkResult:
    """What issuing would do for these accounts on ``run_on``, nothing locked and nothing written: the very plan a
    run issues (previews, the parallel run against the previous system)."""
    ordinance = ordinance_on(run_on)
    facts = chunk_load(account_ids=account_ids, run_on=run_on, calendar=ordinance.calendar, lock=False)
    return plan_chunk(facts, ordinance=ordinance, run_on=run_on)
