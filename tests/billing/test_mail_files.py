"""A run's print file for the mail house, made from the run's page by a worker: its paper bills sorted by ZIP code,
with the office's message for the book or the run; and the run's paperless e-mails, counted and sent from the page."""

import io
import shutil
import subprocess
from datetime import date, timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse

from accounts.models import Customer
from billing.models import Bill, BillingRun, BillMessage, MailFile
from billing.selectors import bill_messages
from billing.services.bill_pdfs import bill_pdfs_store
from billing.services.mail_files import NO_ZIP, mail_file_request, zip_code
from core.errors import ApplicationError
from ordinance.models import Utility
from tests.billing.steps import account_with_meter, read
from tests.factories import clerk_user

pytestmark = pytest.mark.django_db
needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None,
                                   reason="pdftotext (poppler-utils) is not installed")


def text_of(data: bytes) -> str:
    return subprocess.run(["pdftotext", "-layout", "-", "-"], input=data, capture_output=True, check=True).stdout.decode()


def test_the_zip_code_ends_the_address():
    assert zip_code("12 Elm St\nMineola NY 11501") == "11501"
    assert zip_code("PO Box 4\nGarden City, NY 11530-0004\n") == "11530"
    assert zip_code("Somewhere abroad") == NO_ZIP


@pytest.fixture
def run_of_four(mineola):
    """Four accounts billed 2026-02-01 whose owners live at three ZIP codes and one without; the second is
    paperless with an address."""
    owners = [("Zed Zimmer", "9 Oak Ave\nWestbury NY 11590"), ("Ann Paperless", "1 Elm St\nMineola NY 11501"),
              ("Bea Baker", "2 Elm St\nMineola NY 11501"), ("Carl Abroad", "Rue 5\nParis")]
    accounts = []
    for book, (name, address) in zip((1, 1, 2, 2), owners, strict=True):
        owner = Customer.objects.create(name=name, mailing_address=address)
        account, meter = account_with_meter(book=book, owner=owner)
        read(meter, date(2026, 1, 12), 1_030_000)
        accounts.append(account)
    paperless = accounts[1]
    paperless.owner.email = "ann@example.org"
    paperless.owner.save()
    paperless.paperless = True
    paperless.save()
    Utility.objects.update(bill_emails_wait=True)
    call_command("run_billing", "--date", "2026-02-01", "--no-progress", stdout=io.StringIO())
    assert not mail.outbox  # the office has them wait
    return BillingRun.objects.get(), accounts


def test_messages_for_a_book_and_for_every_book(run_of_four):
    run, accounts = run_of_four
    BillMessage.objects.create(text="Hydrant flushing on your street in April.", book=2,
                               first_bill_date=date(2026, 2, 1), last_bill_date=date(2026, 2, 1))
    BillMessage.objects.create(text="The office is closed Feb 16, Presidents' Day.", first_bill_date=date(2026, 1, 1),
                               last_bill_date=date(2026, 2, 28))
    BillMessage.objects.create(text="An old message.", first_bill_date=date(2025, 1, 1),
                               last_bill_date=date(2025, 12, 31))
    bills = Bill.objects.select_related("account").order_by("account__id")
    assert [bill_messages(bills)[b.pk] for b in bills] == [
        "The office is closed Feb 16, Presidents' Day.", "The office is closed Feb 16, Presidents' Day.",
        "Hydrant flushing on your street in April.", "Hydrant flushing on your street in April."]


@needs_poppler
def test_the_print_file_holds_the_paper_bills_by_zip_code_with_the_message(run_of_four,
                                                                          django_capture_on_commit_callbacks):
    run, accounts = run_of_four
    BillMessage.objects.create(text="Hydrant flushing on your street in April.", first_bill_date=date(2026, 2, 1),
                               last_bill_date=date(2026, 2, 1))
    with django_capture_on_commit_callbacks(execute=True):
        mail_file = mail_file_request(run=run, actor=None)  # made by the worker once the request commits
    mail_file.refresh_from_db()
    assert (mail_file.status, mail_file.bills, mail_file.emailed) == ("done", 3, 1)
    text = text_of(mail_file.file.read())
    names = [name for name in ("Bea Baker", "Zed Zimmer", "Carl Abroad", "Ann Paperless") if name in text]
    assert names == ["Bea Baker", "Zed Zimmer", "Carl Abroad"]
    assert text.index("Bea Baker") < text.index("Zed Zimmer") < text.index("Carl Abroad")  # 11501, 11590, none
    assert text.count("Hydrant flushing on your street in April.") == 3


@needs_poppler
def test_the_print_file_joins_the_stored_pdfs_when_no_message_changed_since_the_run(run_of_four, media, monkeypatch):
    """The workers stored each bill's PDF as it was issued: the print file is those pages in ZIP order, the
    font subsets they share kept once, with no bill laid out again."""
    import pikepdf

    from billing.services import mail_files

    run, accounts = run_of_four
    BillMessage.objects.create(text="Set before the run.", first_bill_date=date(2026, 2, 1),
                               last_bill_date=date(2026, 2, 1))
    BillMessage.history.update(history_date=run.created_at - timedelta(minutes=1))
    stored = bill_pdfs_store(bill_ids=list(Bill.objects.values_list("pk", flat=True)))
    assert stored == 4

    def laid_out(**kwargs):
        raise AssertionError("a bill was laid out again")

    monkeypatch.setattr(mail_files, "bills_pdf_render", laid_out)
    mail_file = mail_files.mail_file_make(mail_file_id=MailFile.objects.create(run=run).pk)
    assert (mail_file.status, mail_file.bills, mail_file.emailed) == ("done", 3, 1), mail_file.error
    data = mail_file.file.read()
    assert len(pikepdf.Pdf.open(io.BytesIO(data)).pages) == 3
    text = text_of(data)
    assert text.index("Bea Baker") < text.index("Zed Zimmer") < text.index("Carl Abroad") and "Ann Paperless" not in text
    assert text.count("Set before the run.") == 3
    paper = Bill.objects.exclude(account=accounts[1])
    assert len(data) < sum(bill.pdf.size for bill in paper)  # the shared fonts once
    # Joined in parts (a month's files are not all held open at once), the same pages in the same order.
    monkeypatch.setattr(mail_files, "JOIN_PART", 2)
    again = mail_files.mail_file_make(mail_file_id=MailFile.objects.create(run=run).pk).file.read()
    assert len(pikepdf.Pdf.open(io.BytesIO(again)).pages) == 3 and text_of(again) == text


def test_a_print_file_waits_for_a_finished_run(run_of_four):
    run, _ = run_of_four
    BillingRun.objects.filter(pk=run.pk).update(status="running")
    run.refresh_from_db()
    with pytest.raises(ApplicationError) as refused:
        mail_file_request(run=run, actor=None)
    assert "done" in str(refused.value) and not MailFile.objects.exists()


def test_the_clerk_makes_the_print_file_and_sends_the_emails_from_the_runs_page(run_of_four, client,
                                                                               django_capture_on_commit_callbacks):
    run, accounts = run_of_four
    client.force_login(clerk_user())
    page = client.get(reverse("admin:billing_billingrun_change", args=[run.pk]))
    assert b"1 bill of this run is for paperless accounts: 0 e-mailed (0 e-mails), 1 waiting" in page.content
    assert b"E-mail the 1 bill waiting" in page.content and b"Make the print file" in page.content
    with django_capture_on_commit_callbacks(execute=True):
        made = client.post(reverse("admin:billing_billingrun_print_file", args=[run.pk]), follow=True)
    assert b"sorted by ZIP code" in made.content
    mail_file = MailFile.objects.get()
    assert mail_file.status == "done" and mail_file.bills == 3
    download = client.get(reverse("admin:billing_mailfile_download", args=[mail_file.pk]))
    assert download["Content-Type"] == "application/pdf"
    sent = client.post(reverse("admin:billing_billingrun_emails", args=[run.pk]), follow=True)
    assert b"1 e-mail(s) sent." in sent.content
    assert [m.to for m in mail.outbox] == [["ann@example.org"]]
    assert b"1 e-mailed (1 e-mail), 0 waiting" in sent.content
    client.post(reverse("admin:billing_billingrun_emails", args=[run.pk]))  # again: nothing goes twice
    assert len(mail.outbox) == 1


def test_the_runs_page_shows_how_far_the_print_file_has_got(run_of_four, client, django_capture_on_commit_callbacks):
    run, _ = run_of_four
    client.force_login(clerk_user())
    waiting = MailFile.objects.create(run=run, to_print=10, laid_out=4)
    page = client.get(reverse("admin:billing_billingrun_change", args=[run.pk])).content.decode()
    assert '<progress max="10" value="4"' in page and "4 of 10 bills laid out" in page
    assert '<meta http-equiv="refresh" content="2">' in page  # the page follows it
    waiting.delete()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:billing_billingrun_print_file", args=[run.pk]))
    made = MailFile.objects.get()
    assert (made.status, made.to_print, made.laid_out) == ("done", 3, 3)


@pytest.mark.django_db(transaction=True)
def test_without_a_worker_the_print_file_is_made_on_a_thread_while_the_page_answers(mineola, settings, media):
    from billing import tasks
    from core.background import long_work_start

    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    call_command("run_billing", "--date", "2026-02-01", "--no-progress", stdout=io.StringIO())
    run = BillingRun.objects.get()
    mail_file = MailFile.objects.create(run=run)
    settings.LONG_WORK_IN_THREAD = True
    thread = long_work_start(tasks.mail_file_make, mail_file.pk)
    assert thread is not None
    thread.join(timeout=120)
    mail_file.refresh_from_db()
    assert (mail_file.status, mail_file.bills, mail_file.laid_out) == ("done", 1, 1)
    settings.LONG_WORK_IN_THREAD = False
    assert long_work_start(tasks.mail_file_make, mail_file.pk) is None  # run in place: made already
