"""``convert post``, ``reconcile`` and ``rollback``: opening balances posted as one batch on the cutover, all or
nothing and once; the old system's late charges stand and ours start on the cutover; the books reconciled to the
cent; a batch removed whole, leaving the books as they were, until the first bill run after the cutover."""

import io
import json
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import Account
from backflow.models import Device, DeviceTest, Tester
from billing.models import Bill, BillingRun, BillLine, Deposit, LedgerEntry, PriorPayment
from billing.services.adjustments import adjustment_create, bill_void
from conversion.models import ConversionBatch, ConversionJob, OpeningItem
from conversion.posting import conversion_post, conversion_rollback
from conversion.reconcile import reconciliation
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter, pay, run, statement
from tests.conversion.test_check import CLEAN, HEADER, counts

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: conversion")]
CUTOVER = date(2026, 6, 15)
TODAY = date(2026, 7, 10)


@pytest.fixture
def accounts(mineola):
    return {number: account_with_meter(book=1, account_no=number)[0] for number in ("1-0001", "1-0002", "1-0003")}


def post(tmp_path, text: str = CLEAN, *, cutover: str = "2026-06-15") -> str:
    path = tmp_path / "open.csv"
    path.write_text(text)
    out = io.StringIO()
    call_command("convert", "post", str(path), "--cutover", cutover, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def books() -> dict:
    """Every row of the books, as the database holds it."""
    return {"entries": list(LedgerEntry.objects.order_by("id").values()),
            "bills": list(Bill.objects.order_by("id").values()),
            "lines": list(BillLine.objects.order_by("id").values()),
            "deposits": list(Deposit.objects.order_by("id").values()),
            "prior_payments": list(PriorPayment.objects.order_by("id").values()),
            "devices": list(Device.objects.order_by("id").values()),
            "device_tests": list(DeviceTest.objects.order_by("id").values()),
            "testers": list(Tester.objects.order_by("id").values()),
            "deposit_history": Deposit.history.count(),
            "contacts": list(Account.objects.order_by("id").values_list("id", "paperless", "owner__email"))}


def test_open_bills_post_on_their_own_dates_and_reconcile_to_the_cent(accounts, tmp_path):
    said = post(tmp_path)
    assert "posted conversion" in said and "3 accounts owing, 2 bills (2 open)" in said
    l1, l2 = Bill.objects.get(number="L-1"), Bill.objects.get(number="L-2")
    assert (l1.bill_date, l1.due_date, l1.converted_on, l1.total.amount, l1.rate_schedule_id) == (
        date(2026, 2, 1), date(2026, 3, 1), CUTOVER, Decimal("186.13"), None)
    assert [(line.kind, line.description, line.amount.amount) for line in l2.lines.order_by("position")] == [
        ("charge", "Minimum", Decimal("45.00")), ("fee", "Meter test", Decimal("25.00"))]
    rows = sorted((e.account.account_no, e.kind, e.posted_on.isoformat(), e.amount.amount)
                  for e in LedgerEntry.objects.select_related("account"))
    # Charges on their bill dates; the old system's penalty, the credit and the deposit at the close of the day
    # before the cutover.
    assert rows == [("1-0001", "converted_penalty", "2026-06-14", Decimal("9.31")),
                    ("1-0001", "water", "2026-02-01", Decimal("186.13")),
                    ("1-0002", "fee", "2026-05-01", Decimal("25.00")),
                    ("1-0002", "water", "2026-05-01", Decimal("45.00")),
                    ("1-0003", "credit", "2026-06-14", Decimal("-12.00")),
                    ("1-0003", "deposit", "2026-06-14", Decimal("-250.00"))]
    assert Deposit.objects.get().amount.amount == Decimal("250.00")
    result = reconciliation(cutover=CUTOVER)
    assert result.matches and result.differences == []
    assert (result.file.accounts, result.file.bills, result.books.accounts, result.books.bills) == (3, 2, 3, 2)
    # Owed: 186.13 + 9.31 + 45.00 + 25.00 - 12.00 = 253.44 on both sides.
    assert result.file.owed == result.books.owed == Decimal("253.44")
    out = io.StringIO()
    call_command("convert", "reconcile", "--cutover", "2026-06-15", "--format", "json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["totals"]["matches"] is True and report["rows"] == []
    assert {row["item"]: (row["file"], row["books"]) for row in report["totals"]["by_kind"]}[
        "Owed (charges less credits)"] == ("253.44", "253.44")


def test_posting_the_same_file_again_posts_nothing(accounts, tmp_path):
    post(tmp_path)
    before = counts()
    assert "was posted already as conversion" in post(tmp_path)
    assert counts() == before
    assert ConversionBatch.objects.count() == 1


def test_the_old_systems_late_charges_stand_and_ours_start_on_the_cutover(accounts, tmp_path):
    """Mineola § 45.29 E: 5% the day after the due date, 1% more each month after. L-1 (due March 1) had its 5%
    and the months to June 2 from the old system (9.31 in all, as it charged them); L-2 (due June 1) had its
    5% day, June 2, before the cutover, uncharged by the old system, so never charged. Ours: 1% on July 2 of
    each: 1.86 on 186.13 and 0.70 on 45.00 + 25.00."""
    post(tmp_path)
    run("assess_penalties", "--date", "2026-07-02")
    ours = sorted((e.bill.number, e.posted_on.isoformat(), e.amount.amount)
                  for e in LedgerEntry.objects.filter(kind="penalty").select_related("bill"))
    assert ours == [("L-1", "2026-07-02", Decimal("1.86")), ("L-2", "2026-07-02", Decimal("0.70"))]
    assert Decimal(statement("1-0001", "2026-07-02")["balance"]) == Decimal("197.30")  # 186.13 + 9.31 + 1.86
    assert Decimal(statement("1-0002", "2026-07-02")["balance"]) == Decimal("70.70")
    # Assessed again, or the night after, nothing more is charged for the same days.
    run("assess_penalties", "--date", "2026-07-03")
    assert LedgerEntry.objects.filter(kind="penalty").count() == 2


def test_a_payment_after_the_cutover_pays_the_converted_bill(accounts, tmp_path):
    post(tmp_path)
    pay(accounts["1-0001"], "195.44", "2026-06-20", "CK-1")
    run("assess_penalties", "--date", "2026-07-02")
    assert not LedgerEntry.objects.filter(kind="penalty", bill__number="L-1").exists()
    assert Decimal(statement("1-0001", "2026-07-02")["balance"]) == Decimal("0.00")


def test_a_difference_in_the_books_shows_exactly_that_account(accounts, tmp_path, admin_user):
    post(tmp_path)
    adjustment_create(bill=Bill.objects.get(number="L-2"), kind="debit", amount=Decimal("5.00"), reason="found later",
                      as_of=date(2026, 6, 1), actor=admin_user)
    result = reconciliation(cutover=CUTOVER)
    assert [(d.account_no, d.file_owed, d.books_owed, d.difference) for d in result.differences] == [
        ("1-0002", Decimal("70.00"), Decimal("75.00"), Decimal("5.00"))]
    assert result.differences[0].what == "fees: file 25.00, books 30.00"
    out = io.StringIO()
    call_command("convert", "reconcile", "--cutover", "2026-06-15", "--format", "csv", stdout=out)
    assert out.getvalue().splitlines()[1].startswith('1-0002,"fees: file 25.00, books 30.00",70.00,75.00,5.00')


def test_rollback_leaves_the_books_as_they_were(accounts, tmp_path):
    before = books()
    post(tmp_path)
    batch = ConversionBatch.objects.get()
    out = io.StringIO()
    call_command("convert", "rollback", str(batch.pk), stdout=out)
    assert "rolled back conversion" in out.getvalue()
    assert books() == before
    batch.refresh_from_db()
    assert batch.status == "rolled_back" and OpeningItem.objects.filter(batch=batch).count() == 6
    # Rolled back, the file may be posted again (a corrected one, or the same).
    assert "posted conversion" in post(tmp_path)
    with pytest.raises(CommandError):
        call_command("convert", "rollback", str(batch.pk), stdout=io.StringIO(), stderr=io.StringIO())


def test_rollback_is_refused_after_the_first_bill_run_or_anything_else_on_the_books(accounts, tmp_path):
    post(tmp_path)
    batch = ConversionBatch.objects.get()
    pay(accounts["1-0002"], "10.00", "2026-06-20", "CK-2")
    with pytest.raises(ApplicationError, match="nothing else on their books") as refused:
        conversion_rollback(batch.pk)
    assert "account 1-0002, payment of 2026-06-20" in str(refused.value.errors[0])
    before = books()
    BillingRun.objects.create(run_on=date(2026, 7, 1), status=BillingRun.Status.DONE)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "rollback", str(batch.pk), stdout=io.StringIO(), stderr=err)
    assert "billing run" in err.getvalue() and "on or after the cutover 2026-06-15" in err.getvalue()
    assert books() == before


def test_a_bad_file_or_an_account_with_books_posts_nothing(accounts, tmp_path, admin_user):
    before = counts()
    with pytest.raises(CommandError):
        post(tmp_path, CLEAN + "9-9999,L-9,2026-02-01,2026-03-01,water,10.00,\n")
    with pytest.raises(CommandError):  # dated on the cutover: after the close of the day before
        post(tmp_path, HEADER + "1-0001,L-1,2026-06-15,2026-07-15,water,10.00,\n")
    assert counts() == before
    pay(accounts["1-0003"], "10.00", "2026-06-01", "CK-3")
    before = counts()
    with pytest.raises(ApplicationError, match="account 1-0003 already has bills or ledger entries here"):
        conversion_post(CLEAN.encode(), cutover=CUTOVER, today=TODAY)
    assert counts() == before
    with pytest.raises(ApplicationError, match="after today"):
        conversion_post(CLEAN.encode(), cutover=date(2026, 8, 1), today=TODAY)


def test_a_converted_bill_is_corrected_by_a_memo_never_voided(accounts, tmp_path, admin_user):
    post(tmp_path)
    with pytest.raises(ApplicationError, match="brought over from the previous system"):
        bill_void(bill=Bill.objects.get(number="L-1"), reason="wrong", as_of=TODAY, actor=admin_user)



def test_outside_a_rollback_the_converted_rows_stay_append_only(accounts, tmp_path):
    """On PostgreSQL the database itself refuses to delete or change a converted row but inside a rollback."""
    from django.db import IntegrityError, connection, transaction

    if connection.vendor != "postgresql":
        pytest.skip("the append-only triggers are PostgreSQL's")
    post(tmp_path)
    for rows in (LedgerEntry.objects.filter(source__startswith="convert:"), BillLine.objects.all(),
                 Bill.objects.filter(number="L-1")):
        with pytest.raises(IntegrityError), transaction.atomic():
            rows._raw_delete(using="default")
    with pytest.raises(IntegrityError), transaction.atomic():
        Bill.objects.filter(number="L-1").update(due_date=date(2026, 4, 1))


def _supervisor(name: str):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client

    user = get_user_model().objects.create_user(name, is_staff=True)
    user.groups.add(Group.objects.get(name="Supervisor"))
    client = Client()
    client.force_login(user)
    return client


def _asked_and_approved(asker, approver, page: str, form: dict, capture):
    """One supervisor asks for the post (nothing posted, and the asker cannot approve it); another approves it
    (the worker runs on commit)."""
    batches = ConversionBatch.objects.count()
    asked = asker.post(page, form)
    assert asked.status_code == 302, asked.content.decode()[:3000]
    job = ConversionJob.objects.latest("pk")
    assert job.status == "pending" and ConversionBatch.objects.count() == batches
    waiting = approver.get(page).content.decode()
    assert f"Conversion post {job.pk}</a>: cutover" in waiting
    mine = asker.post(page, {"form": "decide", "job": str(job.pk), "approve": "1"}, follow=True).content.decode()
    assert "whoever asked for a conversion post does not decide it" in mine
    assert ConversionJob.objects.get(pk=job.pk).status == "pending"
    own = asker.get(f"{page}?job={job.pk}").content.decode()
    assert "Withdraw my request" in own and "Decided by another supervisor or an approver" in own
    # The approver may not withdraw it: only whoever asked.
    theirs = approver.post(page, {"form": "decide", "job": str(job.pk), "withdraw": "1"}, follow=True)
    assert "only whoever asked for a conversion post withdraws it" in theirs.content.decode()
    assert ConversionJob.objects.get(pk=job.pk).status == "pending"
    with capture(execute=True):
        approved = approver.post(page, {"form": "decide", "job": str(job.pk), "approve": "1"})
    return approver.get(approved["Location"])


def test_the_conversion_page_posts_reconciles_and_rolls_back(accounts, media, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    asker, approver = _supervisor("asks"), _supervisor("approves")
    client = approver
    page = reverse("admin:conversion")
    before = books()
    refused = _asked_and_approved(asker, approver, page, {
        "form": "post", "post-cutover": "2026-06-15", "post-confirm": "on",
        "post-file": SimpleUploadedFile("open.csv", (CLEAN + "9-9,L-9,2026-02-01,2026-03-01,water,1.00,\n").encode())},
        django_capture_on_commit_callbacks)
    html = refused.content.decode()
    assert refused.status_code == 200 and "Refused: nothing was saved" in html
    assert "<td class=\"r\">8</td><td>account_no</td><td>unknown account &#x27;9-9&#x27;</td>" in html
    assert books() == before
    contacts = b"account_no,email,paperless\n1-0001,owner1@example.org,Y\n"
    posted = _asked_and_approved(asker, approver, page, {
        "form": "post", "post-cutover": "2026-06-15", "post-confirm": "on",
        "post-file": SimpleUploadedFile("open.csv", CLEAN.encode()),
        "post-contacts": SimpleUploadedFile("contacts.csv", contacts)}, django_capture_on_commit_callbacks)
    html = posted.content.decode()
    assert "Posted as conversion" in html and "The books match the file to the cent." in html
    assert "<td>Paperless accounts</td><td class=\"r\">1</td><td class=\"r\">1</td>" in html
    assert Account.objects.get(account_no="1-0001").paperless
    assert not ConversionJob.objects.exclude(opening="").exists()  # the uploads are not kept once done
    assert not ConversionJob.objects.exclude(contacts="").exists()
    assert "<td>Owed (charges less credits)</td><td class=\"r\">$253.44</td><td class=\"r\">$253.44</td>" in html
    pdf = client.get(page, {"reconcile-cutover": "2026-06-15", "format": "pdf"})
    assert pdf["Content-Type"] == "application/pdf" and pdf.content.startswith(b"%PDF")
    batch = ConversionBatch.objects.get()
    rolled = client.post(page, {"form": "rollback", "batch": str(batch.pk)}, follow=True)
    assert "Rolled back conversion" in rolled.content.decode()
    assert books() == before
    again = client.post(page, {"form": "rollback", "batch": str(batch.pk)}, follow=True)
    assert "Not rolled back: conversion" in again.content.decode()


@pytest.mark.citation("policy: conversion control totals")
def test_the_reconciliation_ties_the_old_systems_control_report_to_the_books(accounts, tmp_path):
    """Posted with its control report, the cutover's reconciliation shows old system | books | difference for
    each total the report gave; a ledger row dated before the cutover afterwards shows as a difference there."""
    from tests.conversion.test_check import CONTROL

    (tmp_path / "open.csv").write_text(CLEAN)
    (tmp_path / "control.csv").write_text(CONTROL)
    call_command("convert", "post", str(tmp_path / "open.csv"), "--cutover", "2026-06-15", "--control",
                 str(tmp_path / "control.csv"), stdout=io.StringIO())
    assert ConversionBatch.objects.get().control["legacy"]["water"] == "231.13"
    said = io.StringIO()
    call_command("convert", "reconcile", "--cutover", "2026-06-15", "--format", "json", stdout=said)
    report = json.loads(said.getvalue())
    legacy = {row["item"]: (row["legacy"], row["books"], row["legacy_difference"])
              for row in report["totals"]["legacy"]}
    assert legacy["Water"] == ("$231.13", "$231.13", "$0.00")
    assert legacy["Accounts"] == ("3", "3", "0") and legacy["Owed"] == ("$253.44", "$253.44", "$0.00")
    assert reconciliation(cutover=CUTOVER).matches
    adjustment_create(bill=Bill.objects.get(number="L-2"), kind="debit", amount=Decimal("5.00"), reason="found later",
                      as_of=date(2026, 6, 1), actor=None)
    result = reconciliation(cutover=CUTOVER)
    assert not result.matches
    assert ("owed", Decimal("253.44"), Decimal("258.44")) in result.legacy_rows()


@pytest.mark.citation("policy: conversion control totals")
def test_in_the_admin_the_control_report_refuses_a_cent_and_a_refused_post_posts_nothing(
        accounts, media, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from tests.conversion.test_check import CONTROL

    asker, approver = _supervisor("asks"), _supervisor("approves")
    page = reverse("admin:conversion")
    off = CONTROL.replace("water,231.13", "water,231.14")
    checked = asker.post(page, {"form": "check", "check-file": SimpleUploadedFile("open.csv", CLEAN.encode()),
                                "check-control": SimpleUploadedFile("control.csv", off.encode())}).content.decode()
    assert "water" in checked and "231.14" in checked and "231.13" in checked and "$0.01" in checked
    # Asked for with the report $0.01 off, then approved: the worker refuses it, nothing posted.
    before = books()
    refused = _asked_and_approved(asker, approver, page, {
        "form": "post", "post-cutover": "2026-06-15", "post-confirm": "on",
        "post-file": SimpleUploadedFile("open.csv", CLEAN.encode()),
        "post-control": SimpleUploadedFile("control.csv", off.encode())}, django_capture_on_commit_callbacks)
    assert "Refused: nothing was saved" in refused.content.decode() and books() == before
    # Refused by the second supervisor: a note is needed, and nothing is posted.
    asker.post(page, {"form": "post", "post-cutover": "2026-06-15", "post-confirm": "on",
                      "post-file": SimpleUploadedFile("open.csv", CLEAN.encode())})
    job = ConversionJob.objects.latest("pk")
    bare = approver.post(page, {"form": "decide", "job": str(job.pk), "refuse": "1"}, follow=True).content.decode()
    assert "a refusal needs a note saying why" in bare
    approver.post(page, {"form": "decide", "job": str(job.pk), "refuse": "1", "note": "wrong cutover"})
    job.refresh_from_db()
    assert job.status == "refused" and job.decision_note == "wrong cutover" and not job.opening
    assert books() == before and not ConversionBatch.objects.exists()


@pytest.mark.citation("policy: conversion late charges")
def test_legacy_late_charges_keep_their_own_days_and_words_on_the_statement_and_the_portal(accounts, tmp_path,
                                                                                          client):
    """Each late charge the old system charged comes over as its own row: on the day it gives (``charged_on``),
    with its own words, never recomputed — not one lump per bill dated the day before the cutover. A charge
    without a day keeps the day before the cutover; a day before its bill, or given to a water charge, is
    refused."""
    from accounts.models import PortalLink
    from tests.portal.conftest import customer

    header = HEADER.rstrip("\n") + ",bill_total,charged_on\n"
    rows = header + (
        "1-0001,L-1,2026-02-01,2026-03-01,water,186.13,Water first half,,\n"
        "1-0001,L-1,2026-02-01,2026-03-01,penalty,9.31,Late penalty 5%,,2026-03-02\n"
        "1-0001,L-1,2026-02-01,2026-03-01,interest,1.86,Interest 1% a month,,2026-04-01\n"
        "1-0001,L-1,2026-02-01,2026-03-01,interest,1.88,Interest 1% a month,,\n")
    assert "posted conversion" in post(tmp_path, rows)
    charges = [(c["date"], c["kind"], c["amount"], c["description"])
               for c in statement("1-0001", "2026-06-20")["charges"]]
    assert charges == [
        ("2026-03-02", "converted_penalty", "9.31", "Late penalty 5% — bill L-1 (previous system)"),
        ("2026-04-01", "converted_interest", "1.86", "Interest 1% a month — bill L-1 (previous system)"),
        ("2026-06-14", "converted_interest", "1.88", "Interest 1% a month — bill L-1 (previous system)")]
    user = customer("owner@example.org")
    account = Account.objects.get(account_no="1-0001")
    PortalLink.objects.create(user=user, account=account)
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    from django.urls import reverse

    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert '<th scope="row">Mar 2, 2026</th><td>Late penalty 5% — bill L-1 (previous system)</td>' in page
    assert '<th scope="row">Apr 1, 2026</th><td>Interest 1% a month — bill L-1 (previous system)</td>' in page
    bad = header + ("1-0002,L-2,2026-05-01,2026-06-01,water,45.00,Minimum,,2026-05-02\n"
                    "1-0002,L-2,2026-05-01,2026-06-01,penalty,2.25,Late penalty,,2026-04-30\n"
                    "1-0002,L-2,2026-05-01,2026-06-01,penalty,2.25,Late penalty,,2026-06-15\n")
    (tmp_path / "bad.csv").write_text(bad)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(tmp_path / "bad.csv"), "--date", "2026-06-14", stdout=io.StringIO(),
                     stderr=err)
    assert err.getvalue().splitlines() == [
        "line 2: charged_on: only a late charge (penalty, interest) has a day of its own; leave it blank for a water",
        "line 3: charged_on: 2026-04-30 is before the bill's date 2026-05-01: a late charge follows its bill",
        "line 4: charged_on: 2026-06-15 is after 2026-06-14: the old system charged it before the cutover"]


def test_the_old_systems_account_notes_come_over_dated_and_signed_and_go_with_a_rollback(accounts, tmp_path):
    from accounts.models import AccountNote

    notes = tmp_path / "notes.csv"
    notes.write_text('account_no,written_on,author,note\n'
                     '1-0001,2026-03-04,jsmith,"Called about the February bill.\nPromised to pay by the 15th."\n'
                     '1-0002,2026-05-20,,Meter test requested by the owner\n')
    (tmp_path / "open.csv").write_text(CLEAN)
    out = io.StringIO()
    call_command("convert", "post", str(tmp_path / "open.csv"), "--cutover", "2026-06-15", "--notes", str(notes),
                 stdout=out)
    written = {n.account.account_no: n for n in AccountNote.objects.select_related("account")}
    assert written["1-0001"].text == ("Called about the February bill.\nPromised to pay by the 15th.\n"
                                      "— jsmith, in the previous system")
    assert written["1-0001"].created_at.date() == date(2026, 3, 4)
    assert written["1-0002"].text.endswith("— not known, in the previous system")
    result = reconciliation(cutover=CUTOVER)
    assert result.matches and result.notes == (2, 2)
    conversion_rollback(ConversionBatch.objects.get().pk)
    assert not AccountNote.objects.exists()
    # A bad notes file is refused whole, each problem named with its file, line and column.
    notes.write_text("account_no,written_on,author,note\n9-9,2026-03-04,x,Who?\n1-0001,2026-07-01,x,Later\n"
                     "1-0002,2026-03-04,x,\n")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(tmp_path / "open.csv"), "--notes", str(notes), "--date", "2026-06-14",
                     stdout=io.StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        "line 2: notes.account_no: unknown account '9-9'",
        "line 3: notes.written_on: 2026-07-01 is after 2026-06-14: a note of the old system was written before the "
        "cutover",
        "line 4: notes.note: is required: the note's text"]


@pytest.mark.citation("policy: payment plans")
def test_a_payment_plan_in_force_comes_over_with_what_is_left_of_its_schedule(accounts, tmp_path):
    """What is left of a plan the old system agreed comes over in force, paid by the payments posted from the
    cutover on: it holds a shut-off like any plan in good standing, is counted and totalled by the reconciliation,
    and goes with a rollback. A plan for more than the account owes in the opening balances is refused."""
    from arrears.models import PaymentPlan
    from arrears.services import plan_hold, plan_standing

    plans = tmp_path / "plans.csv"
    (tmp_path / "open.csv").write_text(CLEAN)
    # More than the account owes (1-0002 owes $70.00 in the opening balances): refused, nothing saved.
    plans.write_text("account_no,agreed_on,due_on,amount\n1-0002,2026-04-01,2026-06-01,70.01\n")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(tmp_path / "open.csv"), "--plans", str(plans), "--date", "2026-06-14",
                     stdout=io.StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        "line 2: plans.amount: account 1-0002's plan leaves $70.01 to pay, more than it owes in the opening "
        "balances ($70.00)"]
    plans.write_text("account_no,agreed_on,due_on,amount\n"
                     "1-0001,2026-04-01,2026-06-01,50.00\n"
                     "1-0001,2026-04-01,2026-07-01,50.00\n"
                     "1-0001,2026-04-01,2026-08-01,45.44\n")
    (tmp_path / "open.csv").write_text(CLEAN)
    call_command("convert", "post", str(tmp_path / "open.csv"), "--cutover", "2026-06-15", "--plans", str(plans),
                 stdout=io.StringIO())
    plan = PaymentPlan.objects.get()
    assert (plan.account.account_no, plan.started_on, plan.total.amount, plan.status) == (
        "1-0001", CUTOVER, Decimal("145.44"), "active")
    assert [(i.number, i.due_on, i.amount.amount) for i in plan.installments.all()] == [
        (1, date(2026, 6, 1), Decimal("50.00")), (2, date(2026, 7, 1), Decimal("50.00")),
        (3, date(2026, 8, 1), Decimal("45.44"))]
    assert "agreed it on 2026-04-01" in plan.note
    result = reconciliation(cutover=CUTOVER)
    assert result.plans == (1, 1) and result.plans_left == (Decimal("145.44"), Decimal("145.44"))
    conversion_rollback(ConversionBatch.objects.get().pk)
    assert not PaymentPlan.objects.exists()
    call_command("convert", "post", str(tmp_path / "open.csv"), "--cutover", "2026-06-15", "--plans", str(plans),
                 stdout=io.StringIO())
    plan = PaymentPlan.objects.get()
    # Paid from the cutover on: the June installment (past due at the cutover) paid within its grace holds.
    pay(Account.objects.get(account_no="1-0001"), "50.00", "2026-06-18", "CHK-1")
    assert plan_standing(plan, as_of=date(2026, 6, 20)).good and plan_hold(plan.account_id, date(2026, 6, 20))


@pytest.mark.citation("§ 45.32")
def test_termination_cases_in_progress_come_over_at_their_stage_with_the_notices_served(accounts, tmp_path):
    """A case the old system had opened comes over at its stage, each step taken by termination's own services on
    its day: the notice served (its method, date and hearing) stands and the windows run from it; a request
    received is recorded; a determination by default follows the window's close. A step the ordinance refuses
    (a hearing too soon after service) refuses the post, naming the line; a rollback removes the cases."""
    from termination.models import TerminationCase
    from termination.policy import termination_policy

    account_with_meter(book=1, account_no="1-0004")
    opening = CLEAN + "1-0004,L-4,2026-01-01,2026-02-01,water,120.00,Water\n"
    (tmp_path / "open.csv").write_text(opening)
    policy = termination_policy()
    first, second = date(2026, 4, 2), date(2026, 3, 2)
    hearing_one, hearing_two = (policy.hearing_earliest(first) + timedelta(days=3),
                                policy.hearing_earliest(second) + timedelta(days=3))
    while hearing_one.weekday() > 4:
        hearing_one += timedelta(days=1)
    while hearing_two.weekday() > 4:
        hearing_two += timedelta(days=1)
    header = ("account_no,opened_on,served_on,method,article_number,hearing_on,request_received_on,determined_on,"
              "outcome\n")
    cases = tmp_path / "cases.csv"
    cases.write_text(header + f"1-0001,2026-04-01,{first},personal,,{first + timedelta(days=1)},,,\n")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "post", str(tmp_path / "open.csv"), "--cutover", "2026-06-15", "--cases", str(cases),
                     stdout=io.StringIO(), stderr=err)
    assert "line 2: cases.hearing_on:" in err.getvalue() and "the earliest lawful hearing date is" in err.getvalue()
    assert not TerminationCase.objects.exists() and not ConversionBatch.objects.exists()
    cases.write_text(header + f"1-0001,2026-04-01,{first},personal,,{hearing_one},{first + timedelta(days=3)},,\n"
                              f"1-0004,2026-03-01,{second},personal,,{hearing_two},,{hearing_two},terminate\n")
    call_command("convert", "post", str(tmp_path / "open.csv"), "--cutover", "2026-06-15", "--cases", str(cases),
                 stdout=io.StringIO())
    found = {c.account.account_no: c for c in TerminationCase.objects.select_related("account")}
    assert (found["1-0001"].status, found["1-0001"].request_received_on) == ("requested", first + timedelta(days=3))
    assert found["1-0004"].status == "determined" and found["1-0004"].by_default
    served = found["1-0001"].notices.get()
    assert (served.method, served.served_on, served.hearing_on) == ("personal", first, hearing_one)
    assert reconciliation(cutover=CUTOVER).cases == (2, 2)
    conversion_rollback(ConversionBatch.objects.get().pk)
    assert not TerminationCase.objects.exists()


def test_what_the_old_system_relevied_comes_over_as_history_never_owed(accounts, tmp_path, client):
    """Amounts the old system had already relevied to the tax roll are collected with the taxes: they come over as
    history — on the statement PDF's view and in the portal, counted by the reconciliation, removed by a rollback
    — and are never owed on the water account (the balance is the opening balances' alone)."""
    from django.urls import reverse

    from accounts.models import PortalLink
    from billing.documents.statement import statement_view
    from billing.models import PriorRelevy
    from tests.portal.conftest import customer

    relevied = tmp_path / "relevied.csv"
    relevied.write_text("account_no,relevied_on,tax_roll,amount\n"
                        "1-0001,2025-11-15,2025-26 village tax roll,312.40\n")
    (tmp_path / "open.csv").write_text(CLEAN)
    call_command("convert", "post", str(tmp_path / "open.csv"), "--cutover", "2026-06-15", "--relevied",
                 str(relevied), stdout=io.StringIO())
    account = Account.objects.get(account_no="1-0001")
    kept = PriorRelevy.objects.get()
    assert (kept.account, kept.relevied_on, kept.amount.amount) == (account, date(2025, 11, 15), Decimal("312.40"))
    assert statement("1-0001", "2026-06-20")["balance"] == "195.44"  # the open bill alone: 186.13 + 9.31
    assert statement_view(account=account, as_of=date(2026, 6, 20)).prior_relevies == [
        "Nov 15, 2025: $312.40 to the 2025-26 village tax roll"]
    user = customer("owner@example.org")
    PortalLink.objects.create(user=user, account=account)
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert "Relevied to the tax roll by the previous billing system" in page and "2025-26 village tax roll" in page
    assert reconciliation(cutover=CUTOVER).relevied == (Decimal("312.40"), Decimal("312.40"))
    conversion_rollback(ConversionBatch.objects.get().pk)
    assert not PriorRelevy.objects.exists()
    relevied.write_text("account_no,relevied_on,tax_roll,amount\n1-0001,2026-07-01,roll,-5.00\n")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(tmp_path / "open.csv"), "--relevied", str(relevied), "--date",
                     "2026-06-14", stdout=io.StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        "line 2: relevied.relevied_on: 2026-07-01 is after 2026-06-14: the old system relevied it before the cutover",
        "line 2: relevied.amount: -5.00 must be more than zero"]
