"""The rate schedule and fee pages read as the ordinance's tables: no JSON for a clerk."""

import pytest
from django.urls import reverse

from billing.models import Fee, RateSchedule
from billing.rate_tables import schedule_summary
from tests.factories import clerk_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def clerk(client, mineola):
    client.force_login(clerk_user())
    return client


def test_the_rate_schedule_page_shows_tables_not_json(clerk):
    schedule = RateSchedule.objects.get()
    html = clerk.get(reverse("admin:billing_rateschedule_change", args=[schedule.pk])).content.decode()
    assert "Minimum charge per bill, by category" in html
    assert "One- and two-family use" in html and "$45.00" in html and "20,000 gal" in html
    assert "over 20,000 to 50,000 gal" in html and "$3.10 per 1,000 gal" in html and "over 50,000 gal" in html
    assert "§ 45.28 A(1), A(2)(a)" in html
    assert "Monthly bills: annual minimum by meter size" in html and "$4,800.00" in html and "1,250,000 gal" in html
    assert "§ 45.28 E" in html and "$500.00" in html  # nonprofit
    assert "Sprinkler service: annual charge by supply pipe" in html
    # The stored rules are not on the clerk's page (no raw JSON: no keys, no braces).
    assert "allowance_gallons" not in html and "per_1000" not in html and '{"' not in html


def test_the_json_stays_editable_behind_advanced_until_a_bill_is_rated(admin_client, mineola):
    schedule = RateSchedule.objects.get()
    html = admin_client.get(reverse("admin:billing_rateschedule_change", args=[schedule.pk])).content.decode()
    assert "Advanced: the rules as the preset declares them" in html and 'name="rules"' in html
    assert 'class="module collapse' in html or "collapse" in html


def test_the_list_has_a_one_line_summary(clerk):
    html = clerk.get(reverse("admin:billing_rateschedule_changelist")).content.decode()
    assert "One- and two-family use: $45.00 for 20,000 gal, then $3.10, $3.85 per 1,000 gal" in html
    assert schedule_summary({}) == "—"


def test_a_fee_by_size_is_a_table(clerk):
    fee = Fee.objects.exclude(by_size={}).first()
    html = clerk.get(reverse("admin:billing_fee_change", args=[fee.pk])).content.decode()
    assert "By size" in html and '<td>2&quot;</td><td>$100.00</td>' in html
    assert '{"' not in html
