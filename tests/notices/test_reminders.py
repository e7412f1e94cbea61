"""Reminders before the due date and late notices after it, worked from Mineola's dates: a bill of $186.13 dated
2026-02-01, due 2026-03-01; the 5% of § 45.29 E falls on 2026-03-02 and 1% more on 2026-04-02."""

import io
import json
from datetime import date

import pytest
from django.core import mail
from django.core.management import call_command

from notices.models import CustomerNotice
from ordinance.models import Utility
from tests.billing.steps import account_with_meter, pay, read, run

pytestmark = pytest.mark.django_db
LATE = CustomerNotice.Kind.LATE_NOTICE
SOON = CustomerNotice.Kind.DUE_SOON


def billed(account_no="1-0001", *, email="owner@example.com", language="en"):
    account, meter = account_with_meter(book=1, account_no=account_no)
    account.owner.email = email
    account.owner.save()
    account.language = language
    account.save()
    read(meter, date(2026, 1, 12), 1_062_500)
    return account


@pytest.fixture
def notices(django_capture_on_commit_callbacks):
    """``notices --date DAY --json``; what follows its commit (a worker sending the e-mails queued) runs as it
    would."""
    def run_notices(day: str, *extra) -> dict:
        out = io.StringIO()
        with django_capture_on_commit_callbacks(execute=True):
            call_command("notices", "--date", day, "--json", *extra, stdout=out)
        return json.loads(out.getvalue())
    return run_notices


@pytest.mark.citation("§ 45.29 E")
def test_the_late_notice_goes_the_day_after_the_due_date_with_the_amount_and_the_section(mineola, notices):
    account = billed()
    run("run_billing", "--date", "2026-02-01")
    run("assess_penalties", "--date", "2026-03-02")  # the night's 5% ($9.31) is posted before the notices
    assert notices("2026-03-01")["notices"] == []  # the due date itself: not late yet
    found = notices("2026-03-02")
    assert found["given"] == 1
    (late,) = found["notices"]
    assert (late["kind"], late["account_no"], late["amount"], late["past_due"]) == ("late_notice", "1-0001", "186.13",
                                                                                     "195.44")
    assert (late["next_charge_on"], late["citation"]) == ("2026-04-02", "§ 45.29 E")
    notice = CustomerNotice.objects.get(account=account, kind=LATE)
    assert notice.channel == "email" and notice.sent_to == "owner@example.com" and notice.sent_at
    assert "Past due now: $195.44" in notice.body
    assert "Pay $186.13 by April 1, 2026 to avoid the Late payment penalty: 1% (month 2) (§ 45.29 E) on April 2, " \
           "2026." in notice.body
    assert mail.outbox[-1].subject.startswith("Late notice: your water bill is past due")
    # Not again the next night, nor when the date is run again.
    assert notices("2026-03-02")["given"] == 0 and notices("2026-03-03")["notices"] == []
    assert CustomerNotice.objects.filter(kind=LATE).count() == 1


def test_an_account_that_paid_hears_nothing(mineola, notices):
    paid, unpaid = billed("1-0001"), billed("1-0002", email="other@example.com")
    run("run_billing", "--date", "2026-02-01")
    pay(paid, "186.13", "2026-02-25", "CHK-1")
    assert [n["account_no"] for n in notices("2026-02-22")["notices"]] == ["1-0001", "1-0002"]  # due soon: both
    run("assess_penalties", "--date", "2026-03-02")
    assert [n["account_no"] for n in notices("2026-03-02")["notices"]] == ["1-0002"]
    assert not CustomerNotice.objects.filter(account=paid, kind=LATE).exists()
    assert CustomerNotice.objects.filter(account=unpaid, kind=LATE).exists()


@pytest.mark.citation("§ 45.29 E")
def test_the_reminder_goes_the_offices_days_before_the_due_date(mineola, notices):
    Utility.objects.update(reminder_days=5)
    account = billed()
    run("run_billing", "--date", "2026-02-01")
    assert notices("2026-02-22", "--dry-run")["notices"] == []
    found = notices("2026-02-24", "--dry-run")
    (soon,) = found["notices"]
    assert (soon["kind"], soon["amount"], soon["due_date"], soon["next_charge_on"]) == (
        "due_soon", "186.13", "2026-03-01", "2026-03-02")
    assert found["given"] == 0 and not CustomerNotice.objects.exists()  # a dry run gives none
    notices("2026-02-24")
    notice = CustomerNotice.objects.get(account=account, kind=SOON)
    assert "Pay by March 1, 2026 to avoid the Late payment penalty: 5% (first month) (§ 45.29 E) on March 2, 2026." \
        in notice.body
    Utility.objects.update(reminder_days=0)
    assert notices("2026-02-24")["notices"] == []  # 0: the office sends no reminders


def test_a_spanish_account_reads_its_late_notice_in_spanish(mineola, notices):
    billed(language="es")
    run("run_billing", "--date", "2026-02-01")
    run("assess_penalties", "--date", "2026-03-02")
    notices("2026-03-02")
    notice = CustomerNotice.objects.get(kind=LATE)
    assert notice.language == "es"
    assert notice.subject.startswith("Aviso de atraso")
    assert "2 de abril de 2026" in notice.body


def test_without_an_email_the_late_notice_is_paper_for_the_clerk_to_print(mineola, notices):
    account = billed(email="")
    run("run_billing", "--date", "2026-02-01")
    run("assess_penalties", "--date", "2026-03-02")
    notices("2026-03-02")
    notice = CustomerNotice.objects.get(kind=LATE)
    assert notice.channel == "paper" and notice.sent_at is None
    assert account.owner.name in notice.sent_to


def test_the_nightly_job_gives_the_days_notices_after_the_late_charges(mineola):
    billed()
    run("run_billing", "--date", "2026-02-01")
    from waterbilling.nightly import nightly_run

    report = nightly_run(as_of=date(2026, 3, 2))
    steps = [step["name"] for step in report["steps"]]
    assert steps.index("penalties") < steps.index("customer_notices")
    assert report["reminders_given"] == 1
    assert "$195.44" in CustomerNotice.objects.get(kind=LATE).body


def test_the_nightly_print_file_holds_the_days_paper_late_notices_by_zip_code_for_the_clerk(mineola, client):
    import subprocess

    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from accounts.roles import roles_install
    from waterbilling.nightly import nightly_run

    far, near = billed("1-0001", email=""), billed("1-0002", email="")
    far.owner.mailing_address = "9 Elm St\nMineola NY 11501"
    near.owner.mailing_address = "1 Park Ave\nNew York NY 10001"
    for account in (far, near):
        account.owner.save()
    run("run_billing", "--date", "2026-02-01")
    report = nightly_run(as_of=date(2026, 3, 2))
    assert report["paper_notices"] == 2
    assert set(CustomerNotice.objects.values_list("printed_on", flat=True)) == {date(2026, 3, 2)}
    roles_install()
    clerk = get_user_model().objects.create_user("clerk", is_staff=True)
    clerk.groups.add(Group.objects.get(name="Clerk"))
    client.force_login(clerk)
    listing = client.get("/admin/notices/customernotice/").content.decode()
    assert "/admin/notices/customernotice/print-files/2026-03-02/" in listing
    pdf = b"".join(client.get("/admin/notices/customernotice/print-files/2026-03-02/").streaming_content)
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=pdf, capture_output=True, check=True).stdout.decode()
    assert text.index("1-0002") < text.index("1-0001")  # ZIP 10001 before 11501
    assert "Late notice" in text and "Pay $186.13 by April 1, 2026" in text
    # Printed once: the next night has nothing new to print.
    assert nightly_run(as_of=date(2026, 3, 3))["paper_notices"] == 0
