"""A village of 3,000 accounts converted end to end: its old system's export checked (nothing saved), posted,
reconciled with no difference, a difference in one account's books shown as exactly that account, rolled back to
books identical to the row, and a period of its bills run in parallel — identical under the same rates, and with
one rate changed, the accounts and the line that differ."""

import io
import re
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from billing.models import Bill, BillingRun, RateSchedule
from billing.services.adjustments import adjustment_create
from conversion.legacy import legacy_export
from conversion.parallel import legacy_bills_csv, our_bills, parallel_run
from conversion.posting import conversion_post, conversion_read, conversion_rollback
from conversion.reconcile import reconciliation
from core.errors import ApplicationError
from demo.village import demo_accounts_create
from tests.conversion.test_check import counts
from tests.conversion.test_post import books

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: conversion")]
CUTOVER = date(2026, 6, 15)
TODAY = date(2026, 12, 3)
ACCOUNTS = 3_000


@pytest.fixture
def village(mineola):
    demo_accounts_create(count=ACCOUNTS, as_of=date(2026, 6, 14), seed=7)


def test_a_3000_account_village_converts_reconciles_and_rolls_back(village, tmp_path, admin_user):
    export = legacy_export(cutover=CUTOVER, seed=7)
    files = {"bills": export.history.encode(), "payments": export.payments.encode(),
             "devices": export.devices.encode(), "contacts": export.contacts.encode()}
    before_check = counts()
    checked, history = conversion_read(export.opening.encode(), as_of=date(2026, 6, 14), **files)
    assert counts() == before_check  # the check saves nothing
    assert 1_000 < checked.accounts < ACCOUNTS and checked.bills > checked.accounts
    assert len(history.bills) >= 4 * ACCOUNTS and history.payments  # two years, twice a year or monthly

    posted = conversion_post(export.opening.encode(), cutover=CUTOVER, today=TODAY, actor=admin_user, **files)
    assert (posted.already, posted.batch.bills) == (False, len(history.bills))  # the open bills are among them
    result = reconciliation(cutover=CUTOVER)
    assert result.matches and result.differences == []
    assert (result.books.accounts, result.books.bills) == (checked.accounts, checked.bills)
    assert result.books.owed == result.file.owed == checked.owed
    assert result.books.aging == result.file.aging and sum(result.file.aging) == checked.charges
    assert result.history == (len(history.bills), len(history.bills), len(history.payments), len(history.payments))
    assert result.devices == (len(history.devices), len(history.devices)) and history.devices
    paperless = sum(1 for c in history.contacts if c.paperless)
    assert result.paperless == (paperless, paperless) and 0 < paperless < len(history.contacts)
    assert result.emails == (len(history.contacts), len(history.contacts))
    assert conversion_post(export.opening.encode(), cutover=CUTOVER, today=TODAY, **files).already  # posts once

    # A memo dated before the cutover on one account: that account, and only it, differs.
    bill = Bill.objects.filter(converted_on=CUTOVER).order_by("number")[17]
    adjustment_create(bill=bill, kind="credit", amount=Decimal("3.17"), reason="disputed", as_of=date(2026, 6, 1),
                      actor=admin_user)
    changed = reconciliation(cutover=CUTOVER)
    assert [(d.account_no, d.difference) for d in changed.differences] == [(bill.account.account_no, Decimal("-3.17"))]
    # Rolling back refuses while the memo is there; without it the books are as they were before, row for row.
    with pytest.raises(ApplicationError, match="nothing else on their books"):
        conversion_rollback(posted.batch.pk)


def test_rollback_of_a_3000_account_conversion_leaves_the_books_identical(village, admin_user):
    legacy = legacy_export(cutover=CUTOVER, seed=7)
    export, files = legacy.opening.encode(), {"bills": legacy.history.encode(), "payments": legacy.payments.encode(),
                                              "devices": legacy.devices.encode(),
                                              "contacts": legacy.contacts.encode()}
    before = books()
    posted = conversion_post(export, cutover=CUTOVER, today=TODAY, actor=admin_user, **files)
    assert books() != before
    conversion_rollback(posted.batch.pk, actor=admin_user)
    assert books() == before
    # Posted again, then billed on or after the cutover: the conversion is ours for good.
    posted = conversion_post(export, cutover=CUTOVER, today=TODAY, actor=admin_user, **files)
    BillingRun.objects.create(run_on=date(2026, 8, 1), status=BillingRun.Status.DONE)
    with pytest.raises(ApplicationError, match="on or after the cutover"):
        conversion_rollback(posted.batch.pk)


def test_the_villages_period_in_parallel_identical_then_one_rate_changed(village, tmp_path):
    """The period the demo's readings bill on June 1 (every book's 1st of the month); the old system's file is
    our own preview, so every account is identical; then the 20,001–50,000 gal block of the one-and-two-family
    schedule costs 10¢ more per 1,000 gal in ours, and exactly the accounts with use in that block differ, on
    their water line."""
    run_on = date(2026, 6, 1)
    ours, _ = our_bills(run_on=run_on, today=TODAY)
    assert len(ours) > 100
    path = tmp_path / "legacy.csv"
    path.write_text(legacy_bills_csv(ours, bill_date=run_on))
    same = parallel_run(legacy=path, run_on=run_on, today=TODAY)
    assert (same.count("identical"), same.not_identical) == (len(ours), [])
    schedule = RateSchedule.objects.get()
    rules = schedule.rules
    rules["per_bill"]["one_two_family"]["blocks"][0]["per_1000"] = "3.20"
    RateSchedule.objects.filter(pk=schedule.pk).update(rules=rules)
    changed = parallel_run(legacy=path, run_on=run_on, today=TODAY)
    assert changed.not_identical and changed.count("identical") + changed.count("different") == len(ours)
    assert {k.kind for a in changed.not_identical for k in a.kinds if k.difference} == {"water"}
    assert all(a.difference > 0 for a in changed.not_identical)
    out = io.StringIO()
    call_command("convert", "parallel", str(path), "--date", "2026-06-01", stdout=out)
    assert f"{changed.count('different')} different" in out.getvalue()


def test_the_demo_export_converts_with_the_lines_it_prints(mineola, tmp_path):
    """``convert demo-export`` as the README has a clerk try it: the check and post lines it prints run as printed,
    and the reconciliation matches."""
    demo_accounts_create(count=120, as_of=date(2026, 6, 14), seed=11)
    out = io.StringIO()
    call_command("convert", "demo-export", str(tmp_path), "--cutover", "2026-06-15", "--period", "2026-06-01",
                 stdout=out)
    lines = [line.strip() for line in out.getvalue().splitlines() if line.strip().startswith("convert ")]
    assert [line.split()[1] for line in lines] == ["check", "parallel", "post"] and "--contacts" in lines[2]
    before = counts()
    said = io.StringIO()
    call_command(*lines[0].split(), stdout=said)
    assert "no problems" in said.getvalue() and counts() == before
    # The parallel run of the last period before the cutover, in the printed order: before the post.
    said = io.StringIO()
    call_command(*lines[1].split(), stdout=said)
    assert " 0 different, 0 only in the old system" in said.getvalue() and counts() == before
    said = io.StringIO()
    call_command(*lines[2].split(), stdout=said)
    assert "posted conversion" in said.getvalue()
    result = reconciliation(cutover=CUTOVER)
    assert result.matches and result.paperless[0] == result.paperless[1] > 0
    # After the post the same run would compare the old system's bills with themselves: refused, saying when.
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was saved"):
        call_command(*lines[1].split(), stdout=io.StringIO(), stderr=err)
    assert re.search(r"date: the period billed on 2026-06-01 is before the cutover 2026-06-15 of conversion \d+, "
                     r"posted already.*before `convert post`", err.getvalue()), err.getvalue()
