"""Issuing bills for a chunk of accounts, in three steps: load their facts in a few queries, with the accounts
locked (``load``); plan each bill or exception in Python (``plan``); write bills, lines and ledger entries in bulk
(``write``). A preview and the parallel run plan without locks and write nothing (``bills_plan``)."""

from collections import defaultdict
from datetime import date

from django.db import connection

from core.db import is_postgres

from ..districts import district_history, district_on
from ..models import BillingRun
from ..ordinance import Ordinance, ordinance_on
from .load import chunk_load
from .plan import ChunkResult, plan_chunk
from .write import chunk_write


def bill_accounts(*, account_ids: list[int], run_on: date, run: BillingRun | None) -> ChunkResult:
    """Issue the bills due on ``run_on`` for these accounts (inside the caller's transaction)."""
    if is_postgres():
        # A chunk's queries are small and the run's workers already share the cores: a parallel plan only
        # adds its workers' start-up to each query.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL max_parallel_workers_per_gather = 0")
    plan = _plan(account_ids, run_on=run_on, run=run, lock=True)
    chunk_write(plan, run_on=run_on)
    return plan


def bills_plan(*, account_ids: list[int], run_on: date) -> ChunkResult:
    """What issuing would do for these accounts on ``run_on``, nothing locked and nothing written: the very plan a
    run issues (previews, the parallel run against the previous system)."""
    return _plan(account_ids, run_on=run_on, run=None, lock=False)


def _plan(account_ids: list[int], *, run_on: date, run: BillingRun | None, lock: bool) -> ChunkResult:
    """The chunk's plan, the accounts of each district (their premises' on ``run_on``) under its rules: its calendar,
    rates, sewer rents and due date. A village names no districts: one plan, as it always was."""
    ordinances: dict[str, Ordinance] = {"": ordinance_on(run_on)}
    history = district_history(account_ids, installed=ordinances[""].utility)
    groups: dict[str, list[int]] = defaultdict(list)
    for account_id in account_ids:
        groups[district_on(history.get(account_id, ()), run_on)].append(account_id)
    if not groups:
        groups[""] = []  # an empty chunk plans nothing, as it always did

    def ordinance_of(code: str) -> Ordinance:
        if code not in ordinances:
            ordinances[code] = ordinance_on(run_on, code)
        return ordinances[code]

    # A chunk's facts are loaded once; in a town's chunk of several districts each account is due by its district's
    # calendar and each district's accounts are planned under its rules.
    town = len(groups) > 1
    group_of = {account_id: code for code, ids in groups.items() for account_id in ids}
    winter = {month for code in groups for month in ordinance_of(code).sewer.winter_months}
    facts = chunk_load(account_ids=account_ids, run_on=run_on, calendar=ordinance_of(next(iter(groups))).calendar,
                       lock=lock, districts={i: history[i] for i in account_ids if history.get(i)},
                       winter_months=tuple(sorted(winter)),
                       calendar_of={i: ordinance_of(group_of[i]).calendar for i in account_ids} if town else None)
    plans = [plan_chunk(facts, ordinance=ordinance_of(code), run_on=run_on, run=run, ordinance_of=ordinance_of,
                        only=set(ids) if town else None)
             for code, ids in sorted(groups.items())]
    return ChunkResult.merged(plans) if town else plans[0]
