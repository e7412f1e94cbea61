"""The run page links its bills and exceptions; a held bill is released from its own page."""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from billing.models import Bill, BillingException, BillingRun
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db


@pytest.fixture
def clerk(client, mineola):
    client.force_login(User.objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-only-9"))
    return client


def _two_runs():
    """Feb 1: book 1 (62,500 gal → $186.13, and 20,000 gal → $45.00) and book 2 (30,000 gal → $76.00), and
    one account of book 2 with no reading; then Mar 1 bills a monthly meter (another run)."""
    for book, value in ((1, 1_062_500), (1, 1_020_000), (2, 1_030_000)):
        _, meter = account_with_meter(book=book)
        read(meter, date(2026, 1, 12), value)
    account_with_meter(book=2)
    run("run_billing", "--date", "2026-02-01")
    _, meter = account_with_meter(book=3, category="other", size="2", start=date(2026, 1, 30), value=0)
    read(meter, date(2026, 2, 27), 90_000)
    run("run_billing", "--date", "2026-03-01")
    return BillingRun.objects.get(run_on=date(2026, 2, 1)), BillingRun.objects.get(run_on=date(2026, 3, 1))


def test_run_page_links_its_bills_and_exceptions_and_totals_by_book(clerk):
    february, march = _two_runs()
    html = clerk.get(reverse("admin:billing_billingrun_change", args=[february.pk])).content.decode()
    bills_link = reverse("admin:billing_bill_changelist") + f"?run__id__exact={february.pk}"
    exceptions_link = reverse("admin:billing_billingexception_changelist") + f"?run__id__exact={february.pk}"
    assert f'href="{bills_link}"' in html and "3 bills</a>" in html
    assert f'href="{exceptions_link}"' in html and "1 exception</a>" in html
    assert "Bills by book" in html
    # Book 1: 186.13 + 45.00 = 231.13 for 82,500 gal; book 2: 76.00 for 30,000 gal; 307.13 in all.
    assert "$231.13" in html and "82,500" in html and "$76.00" in html and "$307.13" in html

    listed = clerk.get(bills_link)
    assert listed.status_code == 200
    assert {b.pk for b in listed.context["cl"].result_list} == set(Bill.objects.filter(run=february)
                                                                   .values_list("pk", flat=True))
    assert len(listed.context["cl"].result_list) == 3
    exceptions = clerk.get(exceptions_link)
    assert exceptions.status_code == 200 and len(exceptions.context["cl"].result_list) == 1
    march_bills = clerk.get(reverse("admin:billing_bill_changelist") + f"?run__id__exact={march.pk}")
    assert [b.total.amount for b in march_bills.context["cl"].result_list] == [Decimal("480.00")]


def test_a_voided_bill_is_not_in_the_run_table(clerk):
    february, _ = _two_runs()
    bill = Bill.objects.get(run=february, total=Decimal("76.00"))
    clerk.post(reverse("admin:billing_bill_void", args=[bill.pk]), {"reason": "misread meter"})
    html = clerk.get(reverse("admin:billing_billingrun_change", args=[february.pk])).content.decode()
    assert "$231.13" in html and "Not counted: 1 bill of this run voided since" in html


@pytest.fixture
def held(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    read(meter, date(2026, 7, 10), 1_462_500)  # 400,000 gal in 179 days vs 62,500 in 186: held
    run("run_billing", "--date", "2026-08-01")
    return BillingException.objects.get(kind="high_usage")


def test_held_bill_page_shows_the_history_and_releases(clerk, held):
    url = reverse("admin:billing_billingexception_change", args=[held.pk])
    html = clerk.get(url).content.decode()
    assert "Release: bill as read" in html
    assert "1,462,500" in html and "1,062,500" in html and "Jul 10, 2026" in html  # the readings
    assert "202602-" in html and "$186.13" in html  # the February bill
    release = reverse("admin:billing_billingexception_release", args=[held.pk])
    assert clerk.get(release).status_code == 403  # a button, never a link
    response = clerk.post(release)
    assert response.status_code == 302 and response.url == url
    held.refresh_from_db()
    assert held.status == "released" and held.resolved_by.username == "clerk"
    assert "Release: bill as read" not in clerk.get(url).content.decode()
    assert "1 bills issued" in run("run_billing", "--date", "2026-08-01")
    assert Bill.objects.get(bill_date=date(2026, 8, 1)).gallons == 400_000


def test_release_refused_says_why_and_is_not_offered_for_a_missing_reading(clerk, mineola):
    account_with_meter(book=1)
    run("run_billing", "--date", "2026-02-01")
    missing = BillingException.objects.get(kind="no_reading")
    url = reverse("admin:billing_billingexception_change", args=[missing.pk])
    assert "Release: bill as read" not in clerk.get(url).content.decode()
    response = clerk.post(reverse("admin:billing_billingexception_release", args=[missing.pk]), follow=True)
    assert "only a bill held for high usage can be released" in response.content.decode()
    missing.refresh_from_db()
    assert missing.status == "open"


def test_release_needs_the_change_permission(client, held):
    viewer = User.objects.create_user("viewer", "v@example.org", "pw-for-tests-only-9", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_billingexception"))
    client.force_login(viewer)
    html = client.get(reverse("admin:billing_billingexception_change", args=[held.pk])).content.decode()
    assert "Release: bill as read" not in html
    assert client.post(reverse("admin:billing_billingexception_release", args=[held.pk])).status_code == 403
    held.refresh_from_db()
    assert held.status == "open"


def test_a_second_run_of_a_billed_date_is_warned_first(clerk):
    february, _ = _two_runs()
    start = reverse("admin:billing_billingrun_start")
    warned = clerk.post(start, {"run_on": "2026-02-01", "_start": "1"})
    html = warned.content.decode()
    assert warned.status_code == 200 and "2026-02-01 was run already (1 run" in html
    # Not yet billed: the account with no reading, and the monthly meter installed Jan 30 (billed from Mar 1).
    assert "3 bills dated 2026-02-01; 2 accounts due on it are not yet billed" in html
    assert BillingRun.objects.filter(run_on=date(2026, 2, 1)).count() == 1
    again = clerk.post(start, {"run_on": "2026-02-01", "again": "on", "_start": "1"})
    assert again.status_code == 302 and BillingRun.objects.filter(run_on=date(2026, 2, 1)).count() == 2


def test_the_start_page_proposes_no_date_when_everything_due_is_billed(clerk, settings):
    from billing.runs.preview import billing_date_proposals
    from core.clock import today

    proposals = billing_date_proposals(today=today())
    page = clerk.get(reverse("admin:billing_billingrun_start")).content.decode()
    if proposals.initial is None:  # nothing due today on the demo calendar with no accounts
        assert "Nothing is due to bill today" in page
    else:
        assert "(proposed)" in page
