"""A billing run's status follows its workflow: a chunk that raises fails the run with its error, which the
admin shows with the run's status history and a Retry button; the command exits non-zero; retrying once
the cause is fixed bills what the run had left; a change the workflow refuses says why.

Six accounts in book 1 read at 20,000..70,000 gal, billed on 2026-02-01 in chunks of two: 45.00, 76.00,
107.00, 138.00, 176.50 and 215.00; $757.50 in all.
"""

import io
from contextlib import redirect_stderr, redirect_stdout
from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import ManagementUtility
from django.core.management import base as management_base
from django.urls import reverse

from billing.models import Bill, BillingRun
from billing.runs import lifecycle as runs
from billing.runs.lifecycle import billing_run_retry
from core.workflow import TransitionRefused, status_history
from tests.billing.steps import account_with_meter, read
from tests.factories import clerk_user

pytestmark = pytest.mark.django_db

TOTALS = [Decimal(x) for x in ("45.00", "76.00", "107.00", "138.00", "176.50", "215.00")]
ERROR = "chunk 2 of 3 failed: ValueError: no rate for meter size 7/8"


@pytest.fixture
def six_accounts(mineola):
    for i in range(6):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_000_000 + 20_000 + 10_000 * i)


@pytest.fixture
def second_chunk_breaks(monkeypatch):
    real, calls = runs.bill_accounts, []

    def broken_second_chunk(**kwargs):
        calls.append(kwargs["account_ids"])
        if len(calls) == 2:
            raise ValueError("no rate for meter size 7/8")
        return real(**kwargs)

    monkeypatch.setattr(runs, "bill_accounts", broken_second_chunk)
    return lambda: monkeypatch.setattr(runs, "bill_accounts", real)  # the cause, fixed


@pytest.fixture(autouse=True)
def _keep_the_test_connection(monkeypatch):
    """``manage.py`` closes the database connections when a command ends; the test's must stay open."""
    monkeypatch.setattr(management_base.connections, "close_all", lambda: None)


def manage(*argv) -> tuple[int, str, str]:
    """``manage.py ARGV`` in this process: its exit code, output and error output."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            ManagementUtility(["manage.py", *argv]).execute()
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    return code, out.getvalue(), err.getvalue()


def test_a_chunk_that_raises_fails_the_run_the_command_exits_non_zero_and_the_admin_shows_why(
        six_accounts, second_chunk_breaks, client):
    code, out, err = manage("run_billing", "--date", "2026-02-01", "--chunk-size", "2", "--no-progress")

    run = BillingRun.objects.get()
    assert code == 1
    assert f"billing run {run.pk} for 2026-02-01 failed: {ERROR}" in err
    assert "Billing run" in out and ": failed;" in out
    assert (run.status, run.error, run.bills_created) == ("failed", ERROR, 2)
    assert [(c.from_status, c.to_status, c.note) for c in status_history(run)] == [
        ("pending", "running", "started"), ("running", "failed", ERROR)]

    client.force_login(clerk_user())
    page = client.get(reverse("admin:billing_billingrun_change", args=[run.pk])).content.decode()
    assert f'<p class="errornote">Failed: {ERROR}</p>' in page
    assert "Status history" in page and "no rate for meter size 7/8" in page
    assert reverse("admin:billing_billingrun_retry", args=[run.pk]) in page and ">Retry</button>" in page


def test_retry_after_the_fix_finishes_the_run_with_the_bills_it_had_left(
        six_accounts, second_chunk_breaks, client, django_capture_on_commit_callbacks):
    manage("run_billing", "--date", "2026-02-01", "--chunk-size", "2", "--no-progress")
    run = BillingRun.objects.get()
    assert list(run.chunks.order_by("index").values_list("attempts", "done")) == [(1, True), (1, False), (0, False)]
    second_chunk_breaks()  # the clerk fixes the rate table
    clerk = clerk_user()
    client.force_login(clerk)

    with django_capture_on_commit_callbacks(execute=True):  # handed out on commit, billed eagerly here
        response = client.post(reverse("admin:billing_billingrun_retry", args=[run.pk]))

    assert response.url == reverse("admin:billing_billingrun_change", args=[run.pk])
    run.refresh_from_db()
    assert (run.status, run.error, run.bills_created, run.chunks_done) == ("done", "", 6, 3)
    assert run.total_billed.amount == Decimal("757.50") and run.finished_at is not None
    assert sorted(Bill.objects.values_list("total", flat=True)) == TOTALS
    assert list(run.chunks.order_by("index").values_list("attempts", "done", "last_error")) == [
        (1, True, ""), (1, True, ""), (1, True, "")]
    assert [(c.from_status, c.to_status, c.actor) for c in status_history(run)] == [
        ("pending", "running", None), ("running", "failed", None), ("failed", "running", clerk),
        ("running", "done", None)]
    page = client.get(response.url).content.decode()
    assert f"Billing run {run.pk} retried." in page and ">Retry</button>" not in page


def test_retrying_a_run_that_did_not_fail_is_refused_with_the_reason(six_accounts, client):
    manage("run_billing", "--date", "2026-02-01", "--no-progress")
    run = BillingRun.objects.get()
    assert run.status == "done"

    with pytest.raises(TransitionRefused) as refused:
        billing_run_retry(run_id=run.pk, actor=None)
    assert refused.value.status_code == 409
    assert str(refused.value) == "status: a done billing run cannot become running; done is final"
    assert len(status_history(run)) == 2  # started, done: nothing more

    client.force_login(clerk_user())
    response = client.post(reverse("admin:billing_billingrun_retry", args=[run.pk]), follow=True)
    assert "The run was not retried: status: a done billing run cannot become running; done is final" in \
        response.content.decode()


def test_retry_is_refused_while_the_run_could_not_be_billed_now(six_accounts, second_chunk_breaks):
    from ordinance.models import Utility

    manage("run_billing", "--date", "2026-02-01", "--chunk-size", "2", "--no-progress")
    run = BillingRun.objects.get()
    second_chunk_breaks()
    # The site has since been marked a real one, and the run never accepted the sample rates it is on.
    Utility.objects.update(is_demo_site=False)

    with pytest.raises(TransitionRefused) as refused:
        billing_run_retry(run_id=run.pk, actor=None)

    assert len(refused.value.errors) == 1 and refused.value.errors[0].field == "status"
    assert "sample schedule" in str(refused.value) and "2026-02-01" in str(refused.value)
    run.refresh_from_db()
    assert run.status == "failed" and run.error == ERROR and run.bills_created == 2
    assert len(status_history(run)) == 2


def test_only_staff_who_may_start_a_run_may_retry_one(six_accounts, second_chunk_breaks, client):
    manage("run_billing", "--date", "2026-02-01", "--chunk-size", "2", "--no-progress")
    run = BillingRun.objects.get()
    viewer = get_user_model().objects.create_user("viewer", is_staff=True)
    from django.contrib.auth.models import Permission

    viewer.user_permissions.add(Permission.objects.get(codename="view_billingrun"))
    client.force_login(viewer)
    page = client.get(reverse("admin:billing_billingrun_change", args=[run.pk])).content.decode()
    assert "Status history" in page and ">Retry</button>" not in page
    assert client.post(reverse("admin:billing_billingrun_retry", args=[run.pk])).status_code == 403
    assert client.get(reverse("admin:billing_billingrun_retry", args=[run.pk])).status_code == 403
    run.refresh_from_db()
    assert run.status == "failed"
