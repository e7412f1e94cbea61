"""The office's day with the bank, signed in as the role that does each part — never as a superuser: the Clerk reads
the day's lockbox file and BAI2 report from the admin, works the exceptions queue and reconciles the deposits, and
reads the bank's ACH returns; the Clerk prepares the ACH debit file and a Supervisor (never the one who prepared
it) approves and downloads it; the Treasurer reads the books and exports the journal but changes nothing."""

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from billing.models import Payment, PaymentReversal
from demo.bank_files import bai2_report
from remittance.models import AchFile, AutopayEnrolment, BankDeposit, PaymentException
from tests.portal.conftest import billed_account
from tests.remittance.test_autopay import noticed, returns_file
from tests.remittance.test_lockbox import HEADER, scan

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: roles")]
DAY = date(2026, 2, 24)


def signed_in(role: str) -> Client:
    user = get_user_model().objects.create_user(role.lower(), is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    client = Client()
    client.force_login(user)
    return client


def upload(name: str, text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/plain")


def test_the_clerks_day_with_the_bank(mineola, media):
    one, two = billed_account().bills.get(), billed_account().bills.get()
    clerk = signed_in("Clerk")
    # The lockbox file, from the exceptions queue's page: one check posted, one queued.
    queue = clerk.get(reverse("admin:remittance_paymentexception_changelist"))
    assert queue.status_code == 200 and reverse("admin:remittance_paymentexception_import") in queue.content.decode()
    lockbox = HEADER + f"{DAY},7,1,186.13,1001,{scan(one)}\n{DAY},7,2,186.13,1002,\n"
    read = clerk.post(reverse("admin:remittance_paymentexception_import"),
                      {"file": upload("lockbox.csv", lockbox), "as_of": "2026-02-25"})
    assert read.status_code == 302, read.content.decode()[:2000]
    assert Payment.objects.filter(account=one.account).count() == 1
    # The queued check belongs to the second account: the clerk posts it there.
    queued = PaymentException.objects.get()
    posted = clerk.post(reverse("admin:remittance_paymentexception_change", args=[queued.pk]),
                        {"post_to": two.account.account_no, "resolution": "payer called"})
    assert posted.status_code == 302
    assert Payment.objects.filter(account=two.account).count() == 1
    # The BAI2 report: a bad one is refused by line and keeps nothing; the good one is read.
    bad = clerk.post(reverse("admin:remittance_bankdeposit_import"),
                     {"file": upload("bad.bai", "01,BANK,VILLAGE/\n")})
    assert bad.status_code == 200 and "Refused: nothing was kept" in bad.content.decode()
    assert not BankDeposit.objects.exists()
    report = bai2_report(DAY, [("115", 37226, "LBX7", "LOCKBOX 7")])
    good = clerk.post(reverse("admin:remittance_bankdeposit_import"), {"file": upload("day.bai", report)})
    assert good.status_code == 302 and BankDeposit.objects.count() == 1
    # The deposits reconciliation of the day.
    page = clerk.get(reverse("admin:deposits"), {"on": DAY.isoformat()})
    assert page.status_code == 200 and "Deposits reconciliation" in page.content.decode()


def test_the_clerk_prepares_the_debit_file_a_supervisor_approves_it_and_the_clerk_reads_its_returns(
        enrolled, monkeypatch, django_capture_on_commit_callbacks):
    account = enrolled[0]
    noticed(account)
    monkeypatch.setattr("remittance.admin.today", lambda: date(2026, 3, 1))
    clerk = signed_in("Clerk")
    listing = clerk.get(reverse("admin:remittance_achfile_changelist")).content.decode()
    assert "Prepare the debit file" in listing
    prepared = clerk.post(reverse("admin:remittance_achfile_make"), {"on": "2026-03-01"})
    file = AchFile.objects.get()
    assert prepared.status_code == 302
    assert prepared["Location"] == reverse("admin:remittance_achfile_decide", args=[file.pk])
    # Prepared, nothing is posted and there is nothing to download; the clerk cannot approve it.
    assert file.status == "pending" and not Payment.objects.filter(account=account).exists()
    page = clerk.get(prepared["Location"]).content.decode()
    assert account.account_no in page and "Waiting for a supervisor or an approver who did not prepare it" in page
    assert clerk.post(prepared["Location"], {"approve": "1"}).status_code == 403
    assert clerk.get(reverse("admin:remittance_achfile_nacha", args=[file.pk])).status_code == 302
    # A second file cannot be prepared while this one waits.
    again = clerk.post(reverse("admin:remittance_achfile_make"), {"on": "2026-03-01"}).content.decode()
    assert "already waiting for a supervisor" in again
    supervisor = signed_in("Supervisor")
    approved = supervisor.post(prepared["Location"], {"approve": "1"})
    assert approved.status_code == 302, approved.content.decode()[:3000]
    file.refresh_from_db()
    assert file.status == "approved" and file.decided_by.username == "supervisor"
    assert Payment.objects.get(account=account).reference == f"ACH-{file.pk}-0000001"
    download = supervisor.get(reverse("admin:remittance_achfile_nacha", args=[file.pk]))
    assert download["Content-Disposition"].startswith('attachment; filename="ach-2026-03-01-A.txt"')
    assert download.content.decode().startswith("101")
    debit = file.debits.get()
    garbled = clerk.post(reverse("admin:remittance_achfile_returns"), {"file": upload("returns.txt", "101 é"),
                                                                       "on": "2026-03-05"})
    assert garbled.status_code == 200 and "file: is not a NACHA file" in garbled.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        returned = clerk.post(reverse("admin:remittance_achfile_returns"),
                              {"file": upload("returns.txt", returns_file(debit, "R03")), "on": "2026-03-05"})
    assert returned.status_code == 302, returned.content.decode()[:2000]
    assert PaymentReversal.objects.get().payment == debit.payment
    assert AutopayEnrolment.objects.get().status == "suspended"


def test_the_treasurer_reads_the_books_and_exports_the_journal_but_changes_nothing(mineola, media):
    billed_account()
    treasurer = signed_in("Treasurer")
    for name in ("billing_payment_changelist", "billing_ledgerentry_changelist", "remittance_bankdeposit_changelist",
                 "remittance_achfile_changelist", "office_refund_changelist", "reports", "deposits"):
        assert treasurer.get(reverse(f"admin:{name}")).status_code == 200, name
    journal = treasurer.get(reverse("admin:office_dayclose_journal"),
                            {"start": "2026-02-01", "end": "2026-02-28", "format": "csv"})
    assert journal.status_code == 200 and journal["Content-Type"].startswith("text/csv")
    for name in ("billing_payment_counter", "remittance_achfile_make", "remittance_bankdeposit_import",
                 "remittance_paymentexception_import"):
        assert treasurer.get(reverse(f"admin:{name}")).status_code == 403, name
