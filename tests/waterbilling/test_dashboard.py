"""The admin home for staff: today's work with its figures and links, each section only for those who may see
it, the security and scheduler sections only for a superuser."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing.models import BillingException, BillingRun
from billing.services.payments import payment_post
from core.commands import today
from tests.billing.steps import account_with_meter
from tests.factories import clerk_user
from waterbilling.dashboard import dashboard_for, payments_today

pytestmark = pytest.mark.django_db


def _section(html: str, key: str) -> str:
    found = re.search(rf'<div class="module" id="dashboard-{key}">(.*?)</ul>\s*</div>', html, re.S)
    assert found, f"no {key} section"
    return " ".join(found.group(1).split())


@pytest.fixture
def office(mineola):
    account, _ = account_with_meter(book=1, account_no="1-0001")
    other, _ = account_with_meter(book=3, account_no="3-0001")
    payment_post(account_no="1-0001", amount=Decimal("10.00"), paid_on=today(), reference="CASH-1", tender="cash")
    payment_post(account_no="3-0001", amount=Decimal("25.50"), paid_on=today(), reference="CHK-77", tender="check",
                 check_number="77")
    # Yesterday's payment is not today's.
    payment_post(account_no="3-0001", amount=Decimal("99.00"), paid_on=today() - timedelta(days=1),
                 reference="CHK-76", tender="check", check_number="76")
    failed = BillingRun.objects.create(run_on=today(), status=BillingRun.Status.FAILED,
                                       error="chunk 2 of 3: database unavailable")
    BillingRun.objects.create(run_on=today() - timedelta(days=31), status=BillingRun.Status.DONE)
    BillingException.objects.create(account=account, bill_date=today(), kind=BillingException.Kind.HIGH_USAGE,
                                    detail="120,000 gal against an average of 20,000", run=failed)
    BillingException.objects.create(account=other, bill_date=today(), kind=BillingException.Kind.NO_READING,
                                    detail="no reading in the read window", run=failed)
    BillingException.objects.create(account=other, bill_date=today() - timedelta(days=31),
                                    kind=BillingException.Kind.HIGH_USAGE, detail="released",
                                    status=BillingException.Status.RELEASED)
    return failed


def test_payments_today_are_counted_and_added_up_by_tender(office):
    p = payments_today(as_of=today())
    assert (p.count, p.total) == (2, Decimal("35.50"))
    assert [(t.label, t.count, t.total) for t in p.tenders] == [("Cash", 1, Decimal("10.00")),
                                                                 ("Check", 1, Decimal("25.50"))]


def test_the_home_page_shows_todays_work_to_a_clerk(client, office):
    client.force_login(clerk_user())
    response = client.get(reverse("admin:index"))
    assert response.status_code == 200
    html = response.content.decode()
    payments = _section(html, "payments")
    assert "2 payments, $35.50" in payments
    assert "Cash: 1 payment, $10.00" in payments and "Check: 1 payment, $25.50" in payments
    runs = _section(html, "runs")
    assert f"Billing run {office.pk} for" in runs and "failed: chunk 2 of 3: database unavailable" in runs
    assert reverse("admin:billing_billingrun_change", args=[office.pk]) in runs
    assert "1 bill held for high usage" in runs and "1 other open exception" in runs
    assert "kind__exact=high_usage" in runs
    assert "Readings waiting" in _section(html, "readings")
    assert "draw" in _section(html, "penalties")
    assert "Termination deadlines" in _section(html, "termination")
    # A search box to find an account, posting to the account list's search.
    assert f'action="{reverse("admin:accounts_account_changelist")}"' in html and 'name="q"' in html
    assert reverse("admin:billing_billingrun_start") in html and reverse("admin:reports") in html
    # The pages that were on the home page are still there, and the apps.
    assert reverse("admin:termination_terminationcase_board") in html and 'id="reports-pages"' in html
    # Not a clerk's: the security, the scheduler and the nightly job.
    for key in ("security", "scheduler", "nightly"):
        assert f'id="dashboard-{key}"' not in html


def test_a_superuser_also_sees_security_and_the_scheduler(client, office):
    from axes.models import AccessAttempt, AccessFailureLog
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    AccessAttempt.objects.create(username="mallory", ip_address="203.0.113.9", failures_since_start=5,
                                 user_agent="", http_accept="", path_info="/admin/login/", get_data="",
                                 post_data="")
    AccessFailureLog.objects.create(username="mallory", ip_address="203.0.113.9", user_agent="", http_accept="",
                                    path_info="/admin/login/", locked_out=True)
    every = IntervalSchedule.objects.create(every=1, period=IntervalSchedule.DAYS)
    PeriodicTask.objects.create(name="Nightly job", task="waterbilling.tasks.nightly", interval=every,
                                enabled=False)
    admin_user = get_user_model().objects.create_superuser("boss", "boss@example.org", "x")
    client.force_login(admin_user)
    html = client.get(reverse("admin:index")).content.decode()
    security = _section(html, "security")
    assert "1 failed login in the last 7 days" in security and "1 lockout" in security
    assert "mallory from 203.0.113.9" in security
    assert "Nightly job: disabled" in _section(html, "scheduler")
    assert "The nightly job has not run yet." in _section(html, "nightly")


def test_a_section_needs_its_permission(office):
    user = get_user_model().objects.create_user("reader", is_staff=True)
    assert dashboard_for(user=user, as_of=today()).sections == []
    assert dashboard_for(user=user, as_of=today()).account_search_url == ""


def test_penalties_tonight_counts_unpaid_bills_whose_first_late_day_is_today_or_tomorrow(mineola):
    from datetime import date

    from tests.billing.steps import read, run
    from waterbilling.dashboard import penalties_tonight

    for number, gallons in (("1-0001", 62_500), ("1-0002", 20_000), ("1-0003", 30_000)):
        _, meter = account_with_meter(book=1, account_no=number)
        read(meter, date(2026, 1, 12), 1_000_000 + gallons)
    run("run_billing", "--date", "2026-02-01")  # due 2026-03-01; first penalty 2026-03-02 (§ 45.29 D, E)
    payment_post(account_no="1-0002", amount=Decimal("45.00"), paid_on=date(2026, 2, 20), reference="CHK-1")
    payment_post(account_no="1-0003", amount=Decimal("10.00"), paid_on=date(2026, 2, 20), reference="CHK-2")
    assert penalties_tonight(as_of=date(2026, 3, 1)) == 2  # 1-0001 unpaid, 1-0003 partly paid
    assert penalties_tonight(as_of=date(2026, 3, 2)) == 2
    assert penalties_tonight(as_of=date(2026, 2, 27)) == 0 and penalties_tonight(as_of=date(2026, 3, 3)) == 0


def test_readings_waiting_for_the_next_billing_date(mineola):
    from datetime import date

    from tests.billing.steps import read
    from waterbilling.dashboard import readings_waiting

    _, read_meter = account_with_meter(book=1, account_no="1-0001")
    account_with_meter(book=1, account_no="1-0002")
    account_with_meter(book=3, account_no="3-0001")  # book 3 is billed in March and September
    read(read_meter, date(2026, 7, 14), 1_020_000)
    w = readings_waiting(as_of=date(2026, 7, 20))
    # Book 1's next billing date is 2026-08-01 (§ 45.29 A(1)); its read window is July.
    assert (w.bill_date, w.due, w.without_reading) == (date(2026, 8, 1), 2, 1)


def test_the_readings_imported_today_are_counted_with_their_files(mineola, tmp_path):
    """Every file counts, however it came in: the command line here (an upload too small for a worker's job
    counts the same way)."""
    import io
    from datetime import date

    from django.core.management import call_command

    from core.clock import today
    from meters.models import Meter
    from waterbilling.dashboard import readings_waiting

    for n in (1, 2):
        _, meter = account_with_meter(book=1, account_no=f"1-000{n}", start=date(2025, 1, 1))
        Meter.objects.filter(pk=meter.pk).update(serial=f"F{n}")
    for n, name in ((1, "a.csv"), (2, "b.csv")):
        path = tmp_path / name
        path.write_text(f"meter_serial,read_date,reading\nF{n},{today().isoformat()},1001000\n")
        call_command("import_readings", str(path), stdout=io.StringIO())
    w = readings_waiting(as_of=today())
    assert (w.imported_today, w.import_files_today) == (2, 2)
