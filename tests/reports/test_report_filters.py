"""The Reports page narrowed as a clerk narrows it (tests/reports/steps.py's village, signed in as the Clerk): a
book, a least amount and the accounts' status, with the totals row the rows'; rows ordered by a column's header;
the totals alone with the totals by book; the CSV as filtered; and each report's form opening with the settings
it was last run with."""

import csv
import io

import pytest
from django.urls import reverse

from accounts.models import Account
from tests.factories import clerk_user

from .steps import ON, billed_village

pytestmark = pytest.mark.django_db


@pytest.fixture
def clerk(client, mineola):
    billed_village()
    client.force_login(clerk_user())
    return client


def aging(client, **params):
    response = client.get(reverse("admin:reports"), {"report": "aging", "date": ON, "format": "view", **params})
    assert response.status_code == 200
    return response


def rows(response) -> list[dict]:
    table = response.context["shown"]["view"].main
    return table.rows


def test_aging_by_book_totals_that_books_accounts(clerk):
    shown = aging(clerk, book="3")
    assert [row["account_no"] for row in rows(shown)] == ["3-0001"]
    main = shown.context["shown"]["view"].main
    assert str(main.total["balance"]) == "113.42" and main.total_label == "Total: 1 account"
    html = shown.content.decode()
    assert "Only book 3: 1 account of 4." in html and "1-0001" not in html.split('id="report-result"')[1]


def test_aging_owing_at_least_and_by_status(clerk):
    assert [row["account_no"] for row in rows(aging(clerk, minimum="100"))] == ["1-0001", "3-0001"]
    Account.objects.filter(account_no="1-0003").update(status=Account.Status.SHUT_OFF)
    shut_off = aging(clerk, status="shut_off")
    assert [row["account_no"] for row in rows(shut_off)] == ["1-0003"]
    assert "Only shut off accounts: 1 account of 4." in shut_off.content.decode()


def test_a_columns_header_orders_the_rows(clerk):
    shown = aging(clerk, sort="balance", dir="desc")
    assert [row["account_no"] for row in rows(shown)] == ["1-0001", "3-0001", "1-0003", "1-0004"]
    html = shown.content.decode()
    assert 'aria-sort="descending"><a href="?' in html  # again: the other way
    assert [row["account_no"] for row in rows(aging(clerk, sort="balance", dir="asc"))][0] == "1-0004"
    assert [row["account_no"] for row in rows(aging(clerk, sort="owner", dir="asc"))] == sorted(
        (row["account_no"] for row in rows(aging(clerk))),
        key=lambda no: Account.objects.get(account_no=no).owner.name)


def test_totals_only_shows_the_totals_by_book(clerk):
    shown = aging(clerk, totals_only="on")
    view = shown.context["shown"]["view"]
    assert view.main.rows == [] and str(view.main.total["balance"]) == "325.40"
    by_book = view.more[0]
    assert [(row["book"], row["rows"], str(row["balance"])) for row in by_book.rows] == [
        (1, 3, "211.98"), (3, 1, "113.42")]  # 199.16 + 27.82 − 15.00
    assert "Totals by book" in shown.content.decode()


def test_the_csv_is_the_filtered_report(clerk):
    response = clerk.get(reverse("admin:reports"), {"report": "aging", "date": ON, "format": "csv", "book": "1",
                                                     "minimum": "20"})
    lines = list(csv.reader(io.StringIO(response.content.decode())))
    assert [line[0] for line in lines[1:]] == ["1-0001", "1-0003", "Total"]
    assert lines[-1][-1] == "226.98"  # 199.16 + 27.82


def test_a_report_opens_with_its_last_settings(clerk):
    aging(clerk, book="3", minimum="10")
    form = clerk.get(reverse("admin:reports")).context["other_forms"][1]
    assert form.kind.name == "aging" and (form.initial["book"], form.initial["minimum"]) == ("3", "10")
    assert 'value="3"' in clerk.get(reverse("admin:reports")).content.decode()


def test_a_bad_filter_is_refused_under_its_field(clerk):
    response = clerk.get(reverse("admin:reports"), {"report": "aging", "date": ON, "format": "view", "book": "x",
                                                     "minimum": "-5"})
    form = response.context["chosen_form"]
    assert set(form.errors) == {"book", "minimum"} and response.context["shown"] is None


def test_the_delinquency_list_by_book_and_amount(clerk):
    response = clerk.get(reverse("admin:reports"), {"report": "delinquency", "date": ON, "format": "view",
                                                     "book": "3", "sort": "amount", "dir": "desc"})
    view = response.context["shown"]["view"]
    assert [row["account_no"] for row in view.main.rows] == ["3-0001"]
    everyone = clerk.get(reverse("admin:reports"), {"report": "delinquency", "date": ON, "format": "view",
                                                     "sort": "amount", "dir": "desc"}).context["shown"]["view"]
    amounts = [row["amount"] for row in everyone.main.rows]
    assert amounts == sorted(amounts, reverse=True)


def test_a_big_villages_download_is_made_in_the_background_and_listed(clerk, settings, media,
                                                                      django_capture_on_commit_callbacks):
    from reports.models import ReportFile

    settings.REPORT_FILES_FROM_ACCOUNTS = 1  # this village counts as big
    with django_capture_on_commit_callbacks(execute=True):
        asked = clerk.get(reverse("admin:reports"), {"report": "aging", "date": ON, "format": "csv", "book": "1",
                                                      "minimum": "20"})
    assert asked.status_code == 302 and asked["Location"].endswith("#report-files")
    made = ReportFile.objects.get()
    assert (made.status, made.rows, made.format) == ("done", 2, "csv")
    assert made.title == "Aging, as of May 10, 2026"
    page = clerk.get(reverse("admin:reports")).content.decode()
    assert "Report files" in page and reverse("admin:reports_file", args=[made.pk]) in page
    download = clerk.get(reverse("admin:reports_file", args=[made.pk]))
    lines = list(csv.reader(io.StringIO(b"".join(download.streaming_content).decode())))
    assert [line[0] for line in lines[1:]] == ["1-0001", "1-0003", "Total"]  # as filtered, as on the page
    # Refused at once, under its field, when its date is wrong: nothing is queued.
    refused = clerk.get(reverse("admin:reports"), {"report": "register", "bill_date": "2026-01-15", "format": "pdf"})
    assert refused.status_code == 200 and "bill_date" in refused.context["chosen_form"].errors
    assert ReportFile.objects.count() == 1


def test_a_report_file_being_made_keeps_the_page_following_it(clerk):
    from reports.models import ReportFile

    user = clerk.get(reverse("admin:reports")).wsgi_request.user
    ReportFile.objects.create(name="aging", title="Aging, as of May 10, 2026", format="pdf", created_by=user,
                              status=ReportFile.Status.MAKING)
    page = clerk.get(reverse("admin:reports")).content.decode()
    assert '<meta http-equiv="refresh" content="3">' in page and "Being made, since" in page
