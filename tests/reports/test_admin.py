"""The admin's Reports page for a clerk: a form per report, the report shown as a table on the page or
downloaded as CSV or PDF, a refusal under the field it names, and only staff who may view bills let in."""

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from tests.factories import clerk_user

from .steps import ON, billed_village

pytestmark = pytest.mark.django_db


@pytest.fixture
def clerk(client, mineola):
    billed_village()
    client.force_login(clerk_user())
    return client


def page(client, **params):
    return client.get(reverse("admin:reports"), params)


def test_the_page_has_a_form_for_every_report(clerk):
    response = page(clerk)
    assert response.status_code == 200
    html = response.content.decode()
    for name, title in (("register", "Billing register"), ("aging", "Aging"), ("delinquency", "Delinquency list"),
                        ("relevy", "Relevy list for the tax roll"), ("receipts", "Cash receipts")):
        assert f'id="report-{name}"' in html and f"<h2>{title}</h2>" in html
    # Only the dates a report takes: the register's bill date is not on the aging form.
    assert 'id="id_register_bill_date"' in html and 'id="id_aging_bill_date"' not in html
    assert 'id="id_receipts_start"' in html and 'id="id_relevy_levy_date"' in html


def test_view_shows_the_report_as_a_table_on_the_page(clerk):
    html = page(clerk, report="aging", date=ON, format="view").content.decode()
    assert 'id="report-result"' in html and "Aging: As of May 10, 2026" in html
    assert "$199.16" in html and "−$15.00" in html and "$325.40" in html
    assert "Total: 4 accounts" in html
    html = page(clerk, report="register", date=ON, bill_date="2026-02-01", format="view").content.decode()
    assert "Lines by kind and citation" in html and "Minimum charge" in html and "$352.13" in html
    html = page(clerk, report="receipts", date=ON, start="2026-02-01", end="2026-02-28", format="view").content.decode()
    assert "Cash receipts: From Feb 1, 2026 to Feb 28, 2026" in html and "File import" in html and "$155.00" in html


def test_a_long_report_is_shown_a_page_of_rows_at_a_time_with_the_whole_reports_total(clerk, monkeypatch):
    from reports import admin as reports_admin

    monkeypatch.setattr(reports_admin, "PAGE_ROWS", 3)
    first = page(clerk, report="aging", date=ON, format="view").content.decode()
    assert "rows 1–3 of 4" in first and "next ›" in first and "‹ previous" not in first
    assert first.count('<td>1-000') + first.count('<td>3-000') == 3
    assert "Total: 4 accounts" in first and "$325.40" in first  # the total of all four, on every page
    second = page(clerk, report="aging", date=ON, format="view", page="2").content.decode()
    assert "rows 4–4 of 4" in second and "‹ previous" in second and "next ›" not in second
    assert "Total: 4 accounts" in second
    # A page beyond the last shows the last; a page that is not a number shows the first.
    assert "rows 4–4 of 4" in page(clerk, report="aging", date=ON, format="view", page="9").content.decode()
    assert "rows 1–3 of 4" in page(clerk, report="aging", date=ON, format="view", page="x").content.decode()


def test_csv_downloads_the_report(clerk):
    response = page(clerk, report="receipts", date=ON, start="2026-02-01", end="2026-02-28", format="csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="receipts-2026-02-28.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[-1] == ["Total", "", "3", "155.00"]


def test_pdf_downloads_the_report(clerk):
    response = page(clerk, report="relevy", date=ON, format="pdf")
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="relevy-2026-05-10.pdf"'
    assert response.content.startswith(b"%PDF")


def test_a_refusal_shows_under_the_field_it_names_and_nothing_is_downloaded(clerk):
    response = page(clerk, report="register", date=ON, bill_date="2026-03-15", format="csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "no bills are dated 2026-03-15; the latest bill date before it is 2026-03-01" in html
    assert 'class="field-bill_date errors"' in html
    html = page(clerk, report="aging", date="2027-01-01", format="view").content.decode()
    assert "2027-01-01 is after today" in html and 'class="field-date errors"' in html
    html = page(clerk, report="receipts", start="2026-02-31", format="view").content.decode()
    assert "Enter a valid date." in html and 'id="report-result"' not in html


@pytest.mark.parametrize("role", ["Backflow inspector", "Hearing officer", "Field crew", "Approver"])
def test_only_the_roles_that_run_reports_see_the_page_and_its_files(client, mineola, role):
    """The clerk, the supervisor and the treasurer run the reports; a hearing officer reads bills for a case but
    neither runs the office's reports nor downloads a report file by its number."""
    from reports.models import ReportFile

    maker = get_user_model().objects.create_user("maker", is_staff=True)
    made = ReportFile.objects.create(name="aging", title="Aging", params={}, format="csv", created_by=maker,
                                     status=ReportFile.Status.DONE)
    other = get_user_model().objects.create_user("other", is_staff=True)
    other.groups.add(Group.objects.get(name=role))
    client.force_login(other)
    assert page(client).status_code == 403
    assert "reports-pages" not in client.get(reverse("admin:index")).content.decode()
    assert client.get(reverse("admin:reports_file", args=[made.pk])).status_code == 403
    client.logout()
    assert page(client).status_code == 302  # to the admin's login


def test_the_admin_home_links_the_reports(clerk):
    html = clerk.get(reverse("admin:index")).content.decode()
    assert 'id="reports-pages"' in html
    assert f'href="{reverse("admin:reports")}#report-relevy"' in html
