"""The debit file can never vanish with the money posted, settles on a banking day chosen ahead, waits for the
customer's notice, presents a returned debit again only as NACHA and the office allow, and a returns file is
checked whole before anything in it is applied.

The account is Mineola's worked bill: $186.13 billed 2026-02-01, due Sunday March 1 (§ 45.29 D); its notice went out
on the bill's day, so its debit settles on Monday March 2, 2026, the next banking day.
"""

import io
import os
import stat
from datetime import date, timedelta
from decimal import Decimal

import achkit
import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from billing.models import Payment
from core.banking_days import is_banking_day, next_banking_day, why_not_banking_day
from core.errors import ApplicationError
from remittance.autopay import (
    ach_export,
    ach_export_again,
    ach_file_decide,
    ach_file_prepare,
    ach_returns,
    autopay_enrol,
    autopay_notices_send,
)
from remittance.models import AchFile, AutopayDebit, AutopayNotice
from remittance.nacha import NachaError, returns_read
from tests.portal.conftest import billed_account
from tests.remittance.conftest import BANK_ACCOUNT, ROUTING
from tests.remittance.test_autopay import check_nacha, noticed, returns_file

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: autopay")]
D = Decimal
FRIDAY, MONDAY = date(2026, 2, 27), date(2026, 3, 2)


def valid_by_achkit(text: str) -> None:
    """An independent NACHA validator (achkit, from the package index) accepts the file."""
    verdict = achkit.validate(text)
    assert verdict["ok"], verdict["errors"]


# --- banking days -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("day", "banking", "why"), [
    (date(2026, 3, 1), False, "Sunday"),
    (date(2026, 2, 28), False, "Saturday"),
    (date(2026, 3, 2), True, ""),
    (date(2026, 12, 25), False, "a Federal Reserve holiday (Christmas Day)"),
    (date(2027, 7, 5), False, "a Federal Reserve holiday (Independence Day (observed))"),  # July 4 a Sunday
    (date(2027, 12, 24), True, ""),  # Christmas on a Saturday closes nothing: the Friday before is open
    (date(2027, 6, 18), True, ""),  # Juneteenth on a Saturday, likewise
    (date(2026, 11, 11), False, "a Federal Reserve holiday (Veterans Day)"),
])
def test_banking_days_are_the_federal_reserves(day, banking, why):
    assert is_banking_day(day) is banking and why_not_banking_day(day) == why


def test_the_next_banking_day_skips_weekends_and_holidays():
    assert next_banking_day(date(2026, 12, 24)) == date(2026, 12, 28)  # Christmas Friday, then the weekend
    assert next_banking_day(date(2027, 7, 2)) == date(2027, 7, 6)  # the weekend, then the observed Monday
    assert next_banking_day(date(2026, 2, 27)) == MONDAY


# --- the effective entry date -----------------------------------------------------------------------------------

def test_a_file_made_on_sunday_settles_on_monday(enrolled):
    noticed(enrolled[0])
    exported = ach_export(on=date(2026, 3, 1))
    assert exported.file.effective_on == MONDAY and not exported.file.same_day
    batch_header = exported.text.splitlines()[1]
    assert batch_header[69:75] == "260302"  # the effective entry date in the batch header
    valid_by_achkit(exported.text)


def test_a_holiday_or_weekend_is_refused_as_the_settlement_day_naming_the_next(enrolled):
    noticed(enrolled[0])
    with pytest.raises(ApplicationError) as refused:
        ach_export(on=date(2026, 12, 21), settle=date(2026, 12, 25))
    assert refused.value.errors[0].field == "settle"
    assert "Christmas Day" in refused.value.errors[0].message and "2026-12-28" in refused.value.errors[0].message
    with pytest.raises(ApplicationError, match="not after the file's date"):
        ach_export(on=MONDAY, settle=MONDAY)
    assert not AchFile.objects.exists() and not Payment.objects.filter(tender="ach").exists()


def test_the_friday_file_for_monday_is_made_with_a_settlement_day_in_the_future(enrolled, tmp_path):
    noticed(enrolled[0])
    friday = timezone.localdate() - timedelta(days=(timezone.localdate().weekday() - 4) % 7)
    monday = friday + timedelta(days=3)
    out = tmp_path / "friday.ach"
    if not is_banking_day(monday):  # the rare Monday holiday: the next banking day
        monday = next_banking_day(monday)
    call_command("ach_export", "--date", friday.isoformat(), "--settle", monday.isoformat(), "--out", str(out),
                 stdout=io.StringIO(), stderr=io.StringIO())
    file = AchFile.objects.get()
    assert (file.created_on, file.effective_on) == (friday, monday)
    assert out.read_text().splitlines()[1][69:75] == monday.strftime("%y%m%d")


def test_same_day_only_when_asked(enrolled):
    noticed(enrolled[0])
    exported = ach_export(on=MONDAY, same_day=True)
    assert exported.file.effective_on == MONDAY and exported.file.same_day


# --- the notice before the debit --------------------------------------------------------------------------------

def test_nothing_is_debited_before_its_notice_reached_the_customer_the_notice_period_before(enrolled):
    account, _, _ = enrolled
    bill = account.bills.get()
    assert ach_export(on=date(2026, 3, 1)).file is None  # no notice sent
    autopay_notices_send([bill.pk])
    late = timezone.make_aware(timezone.datetime(2026, 2, 25, 9))  # 5 days before: too late for March 2
    AutopayNotice.objects.filter(bill=bill).update(sent_at=late)
    assert ach_export(on=date(2026, 3, 1)).file is None
    # Ten days after the notice (March 7, a Saturday), the first banking day is March 9.
    exported = ach_export(on=date(2026, 3, 6), settle=date(2026, 3, 9))
    assert exported.file.debits.get().amount.amount == D("186.13")


def test_arrears_at_enrolment_wait_for_their_own_notice(mineola, media, bank, django_capture_on_commit_callbacks,
                                                         mailoutbox):
    account = billed_account()  # owes $186.13, past due since March 1
    today = timezone.localdate()
    with django_capture_on_commit_callbacks(execute=True):
        autopay_enrol(account=account, holder_name="Pat Payer", routing=ROUTING, account_number=BANK_ACCOUNT,
                      account_type="checking", email="pat@example.org", agreed=True)
    notice = AutopayNotice.objects.get(kind="arrears")
    assert notice.amount.amount == D("186.13") and notice.sent_at is not None
    assert notice.debit_on >= today + timedelta(days=10) and is_banking_day(notice.debit_on)
    (mail,) = mailoutbox
    assert "$186.13" in mail.body and "past due when you set up autopay" in mail.body
    assert ach_export(on=today).file is None  # the next banking day is inside the notice period
    exported = ach_export(on=today, settle=notice.debit_on)
    assert exported.file.debits.get().amount.amount == D("186.13")


# --- a file that could not be written ---------------------------------------------------------------------------

def test_a_failed_write_loses_nothing_and_again_writes_the_identical_file(enrolled, tmp_path):
    account, _, _ = enrolled
    noticed(account)
    bad = tmp_path / "no-such-folder" / "debits.ach"
    with pytest.raises(CommandError) as failed:
        call_command("ach_export", "--date", "2026-03-01", "--out", str(bad), stdout=io.StringIO(),
                     stderr=io.StringIO())
    file = AchFile.objects.get()
    assert f"ach_export --again {file.pk}" in str(failed.value) and "kept sealed" in str(failed.value)
    assert BANK_ACCOUNT not in file.sealed_text and file.written_at is None
    assert AutopayDebit.objects.get().payment.amount.amount == D("186.13")  # posted, and the file is kept
    # A retry of the day finds the debit made: nothing twice.
    assert ach_export(on=date(2026, 3, 1)).file is None
    good = tmp_path / "debits.ach"
    call_command("ach_export", "--again", str(file.pk), "--out", str(good), stdout=io.StringIO(),
                 stderr=io.StringIO())
    again = good.read_text()
    assert stat.S_IMODE(os.stat(good).st_mode) == 0o600
    entries = check_nacha(again, company_id="1234567890", odfi="021000021")
    assert entries == [("27", ROUTING, 18613, AutopayDebit.objects.get().trace_number)]
    valid_by_achkit(again)
    second = tmp_path / "debits-2.ach"
    call_command("ach_export", "--again", str(file.pk), "--out", str(second), stdout=io.StringIO(),
                 stderr=io.StringIO())
    assert second.read_bytes() == good.read_bytes()  # identical, byte for byte
    file.refresh_from_db()
    assert file.written_at is not None and file.written_to == str(second)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".ach-")]  # no temporary file left behind


def test_again_names_a_file_that_is_not_there(enrolled):
    with pytest.raises(CommandError, match="file_id: there is no debit file 99"):
        call_command("ach_export", "--again", "99", stdout=io.StringIO(), stderr=io.StringIO())


# --- presented again --------------------------------------------------------------------------------------------

def test_a_debit_returned_for_insufficient_funds_is_presented_again_never_the_same_day_at_most_twice(enrolled):
    account, _, _ = enrolled
    noticed(account)
    first = ach_export(on=date(2026, 3, 1)).file
    ach_returns(returns_file(first.debits.get(), "R01"), as_of=date(2026, 3, 4))
    assert ach_export(on=date(2026, 3, 4)).file is None  # never the day of the return
    assert ach_export(on=date(2026, 3, 5)).file is None  # the office waits 2 days after it
    second = ach_export(on=date(2026, 3, 6)).file
    retry = second.debits.get()
    assert (retry.presentment, retry.amount.amount, retry.notice_id) == (2, D("186.13"), first.debits.get().notice_id)
    text = ach_export_text(second)
    assert text.splitlines()[1][53:63] == "RETRY PYMT"  # NACHA: a reinitiated entry's batch says so
    valid_by_achkit(text)
    ach_returns(returns_file(retry, "R01"), as_of=date(2026, 3, 10))
    third = ach_export(on=date(2026, 3, 12)).file.debits.get()
    assert third.presentment == 3
    ach_returns(returns_file(third, "R01"), as_of=date(2026, 3, 16))
    assert ach_export(on=date(2026, 3, 20)).file is None  # twice presented again: no more


def test_a_debit_returned_for_a_closed_account_is_never_presented_again(enrolled):
    account, _, _ = enrolled
    noticed(account)
    ach_returns(returns_file(ach_export(on=date(2026, 3, 1)).file.debits.get(), "R02"), as_of=date(2026, 3, 4))
    assert ach_export(on=date(2026, 3, 10)).file is None


def ach_export_text(file: AchFile) -> str:
    return ach_export_again(file_id=file.pk).text


# --- the returns file checked whole -----------------------------------------------------------------------------

def _returned(enrolled) -> AutopayDebit:
    noticed(enrolled[0])
    ach_export(on=date(2026, 3, 1))
    return AutopayDebit.objects.get()


def test_a_returns_file_cut_short_is_refused_and_nothing_applied(enrolled):
    debit = _returned(enrolled)
    whole = returns_file(debit, "R02").splitlines()
    for cut in (whole[:4], whole[:5], whole[:6]):  # before the batch control, before the file control, unblocked
        with pytest.raises(ApplicationError) as refused:
            ach_returns("\n".join(cut) + "\n", as_of=date(2026, 3, 4))
        assert "line" in refused.value.errors[0].message
    debit.refresh_from_db()
    assert debit.returned_code == "" and not hasattr(debit.payment, "reversal")


@pytest.mark.parametrize(("record", "start", "wrong", "said"), [
    (4, 4, "000001", "entry and addenda count is 000001; the records above give 2"),  # batch control count
    (4, 10, "0000000001", "entry hash is 0000000001"),
    (5, 1, "000002", "the file control counts 000002 batches"),
    (5, 13, "00000009", "entry and addenda count is 00000009"),
    (5, 7, "000002", "counts 000002 blocks; the file has 1"),
])
def test_a_returns_file_whose_controls_do_not_add_up_is_refused_naming_the_line(enrolled, record, start, wrong, said):
    debit = _returned(enrolled)
    lines = returns_file(debit, "R01").splitlines()
    lines[record] = lines[record][:start] + wrong + lines[record][start + len(wrong):]
    with pytest.raises(NachaError, match=f"line {record + 1}: .*{said}"):
        returns_read("\n".join(lines) + "\n")
    with pytest.raises(ApplicationError):
        ach_returns("\n".join(lines) + "\n", as_of=date(2026, 3, 4))
    assert not AutopayDebit.objects.exclude(returned_code="").exists()


def test_records_out_of_order_are_refused(enrolled):
    debit = _returned(enrolled)
    lines = returns_file(debit, "R01").splitlines()
    lines[2], lines[3] = lines[3], lines[2]  # the addenda before its entry
    with pytest.raises(NachaError, match="line 3: an addenda with no entry before it"):
        returns_read("\n".join(lines) + "\n")


def test_the_admin_downloads_a_kept_file_again_identical(enrolled, client, django_user_model):
    noticed(enrolled[0])
    exported = ach_export(on=date(2026, 3, 1))
    user = django_user_model.objects.create_user("treasurer", password="pw", is_staff=True)
    client.force_login(user)
    url = reverse("admin:remittance_achfile_nacha", args=[exported.file.pk])
    assert client.get(url).status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="view_achfile"))
    client.force_login(django_user_model.objects.get(pk=user.pk))
    page = client.get(reverse("admin:remittance_achfile_changelist"))
    assert b"Download again (identical)" in page.content
    download = client.get(url)
    assert download.status_code == 200 and download.content.decode() == exported.text
    assert download["Content-Disposition"] == 'attachment; filename="ach-2026-03-01-A.txt"'


# --- two people for a file made in the admin ------------------------------------------------------------------

def _staff(name: str, *perms: str):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(name, is_staff=True)
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return get_user_model().objects.get(pk=user.pk)  # permissions read afresh


def test_a_prepared_file_posts_nothing_until_another_supervisor_approves_it(enrolled):
    account = enrolled[0]
    noticed(account)
    clerk = _staff("clerk", "remittance.add_achfile")
    boss = _staff("boss", "remittance.approve_achfile", "remittance.add_achfile")
    other = _staff("other", "remittance.approve_achfile")
    file = ach_file_prepare(on=date(2026, 3, 1), actor=boss)
    assert file.status == "pending" and file.entries == 1 and file.total.amount == D("186.13")
    assert file.proposed == [{"account_no": account.account_no, "amount": "186.13", "presentment": 1,
                              "enrolment": file.proposed[0]["enrolment"], "notice": file.proposed[0]["notice"]}]
    assert not Payment.objects.exists() and not file.sealed_text
    with pytest.raises(ApplicationError) as refused:
        ach_export_again(file_id=file.pk)
    assert "waiting for a supervisor: only an approved file goes to the bank" in str(refused.value)
    # Not the clerk, not the one who prepared it, not another day: every reason at once.
    with pytest.raises(ApplicationError) as refused:
        ach_file_decide(file, approve=True, note="", actor=clerk, on=date(2026, 3, 2))
    said = [(e.field, e.message) for e in refused.value.errors]
    assert said == [("actor", "only a supervisor or an approver approves or refuses a debit file"),
                    ("date", "a debit file is approved the day it is prepared (2026-03-01); it is 2026-03-02: "
                             "refuse this one and prepare the day's file")]
    with pytest.raises(ApplicationError, match="whoever asked for a debit file does not decide it"):
        ach_file_decide(file, approve=True, note="", actor=boss, on=date(2026, 3, 1))
    assert not Payment.objects.exists()
    exported = ach_file_decide(file, approve=True, note="", actor=other, on=date(2026, 3, 1))
    payment = Payment.objects.get()
    assert (payment.account, payment.amount.amount, payment.paid_on) == (account, D("186.13"), date(2026, 3, 1))
    assert exported.file.status == "approved" and exported.file.decided_by == other
    assert ach_export_again(file_id=file.pk).text == exported.text
    valid_by_achkit(exported.text)


def test_a_file_whose_debits_changed_since_it_was_prepared_is_not_approved(enrolled):
    account = enrolled[0]
    noticed(account)
    clerk, boss = _staff("clerk", "remittance.add_achfile"), _staff("boss", "remittance.approve_achfile")
    file = ach_file_prepare(on=date(2026, 3, 1), actor=clerk)
    # The customer paid at the counter in between: the debit would take money no longer owed.
    from billing.services.payments import PaymentIn, payments_post
    payments_post(payments=[PaymentIn(account.account_no, D("186.13"), date(2026, 3, 1), "CTR-1")], actor=None,
                  source="counter")
    with pytest.raises(ApplicationError, match=r"the debits due have changed since the file was prepared \(1 for "
                                               r"\$186.13 then, 0 for \$0.00 now"):
        ach_file_decide(file, approve=True, note="", actor=boss, on=date(2026, 3, 1))
    assert Payment.objects.count() == 1 and AchFile.objects.get().status == "pending"
    with pytest.raises(ApplicationError, match="a refusal needs a note saying why"):
        ach_file_decide(file, approve=False, note=" ", actor=boss, on=date(2026, 3, 1))
    ach_file_decide(file, approve=False, note="paid at the counter", actor=boss, on=date(2026, 3, 1))
    assert AchFile.objects.get().status == "refused" and not AutopayDebit.objects.exists()
    # Refused, it holds no place: the next file of the day is prepared (with nothing due, none).
    assert ach_file_prepare(on=date(2026, 3, 1), actor=clerk) is None


def test_the_command_line_file_is_approved_as_it_is_made_and_a_pending_one_is_not_reconciled(enrolled):
    from remittance.bank import deposits_reconcile

    noticed(enrolled[0])
    file = ach_file_prepare(on=date(2026, 3, 1), actor=None)
    line = next(x for x in deposits_reconcile(on=MONDAY, processor=None).lines if x.channel == "autopay")
    assert line.expected == 0  # prepared, not approved: nothing is expected at the bank
    ach_file_decide(file, approve=False, note="wrong day", actor=_staff("boss", "remittance.approve_achfile"),
                    on=date(2026, 3, 1))
    made = ach_export(on=date(2026, 3, 1)).file
    assert made.status == "approved" and made.decided_at is not None and made.modifier == "B"
    line = next(x for x in deposits_reconcile(on=MONDAY, processor=None).lines if x.channel == "autopay")
    assert line.expected == D("186.13")
