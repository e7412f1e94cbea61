"""A case's life besides the guard: payment in full closes it (however the payment arrives), the default
determination when no request comes, late requests and appeals accepted and flagged, the shut-off carried out
with its disconnect charge, restoration with its connect charge, emergencies logged apart, and the nightly
deadlines written the same whether the job ran every night or once."""

import io
from datetime import date, timedelta
from decimal import Decimal as D

import pytest
from django.core.management import call_command

from accounts.models import Account
from billing.models import Bill, PendingCharge
from billing.services.payments import payment_post
from core.workflow import status_history
from termination.models import CaseEvent, Interruption, TerminationCase, WorkOrder
from termination.services.nightly import nightly_deadlines
from tests.billing.steps import read, run

from .steps import delinquent_account, refused, served_case, show, term, terminated_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.31", "§ 45.32", "§ 45.35", "§ 45.28 A(3)")]


def case(number: str) -> TerminationCase:
    return TerminationCase.objects.get(number=number)


# --- Opening ------------------------------------------------------------------------------------------------

def test_opening_needs_an_amount_delinquent_and_one_case_at_a_time(mineola):
    account, bill = delinquent_account()
    message = refused("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-01")
    assert "nothing delinquent on 2026-03-01 under § 45.31 (a bill unpaid after its due date)" in message
    number = term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-02")
    opened = case(number)
    assert opened.amount_delinquent == D("186.13") and opened.section == "§ 45.31"
    assert [(b.bill_id, b.amount, b.delinquent_from) for b in opened.bills.all()] == [
        (bill.pk, D("186.13"), date(2026, 3, 2))]
    assert f"bill {bill.number} dated Feb 1, 2026" in opened.grounds_detail or bill.number in opened.grounds_detail
    assert f"already has case {number}" in refused("open", account.account_no, "--grounds", "nonpayment",
                                                   date_="2026-03-03")
    assert TerminationCase.objects.count() == 1


def test_a_violation_names_its_section(mineola):
    account, _ = delinquent_account()
    assert "a violation names the section violated" in refused("open", account.account_no, "--grounds",
                                                               "violation", date_="2026-03-02")
    number = term("open", account.account_no, "--grounds", "violation", "--section", "§ 45.45 B", date_="2026-03-02")
    assert case(number).section == "§ 45.45 B" and case(number).amount_delinquent == 0


def test_bulk_opening_from_the_delinquency_list(mineola):
    first, _ = delinquent_account()
    second, _ = delinquent_account(occupant=False)
    out = term("delinquent", date_="2026-03-05")
    assert first.account_no in out and second.account_no in out and "2 accounts delinquent" in out
    assert "2 cases opened" in term("open-delinquent", date_="2026-03-05")
    assert "0 cases opened" in term("open-delinquent", date_="2026-03-06")


# --- Notices ------------------------------------------------------------------------------------------------

def test_service_by_a_method_the_preset_does_not_allow_is_refused(mineola):
    account, _ = delinquent_account()
    number = term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20")
    message = refused("serve", number, "--to", "owner", "--method", "registered_mail", "--served-on", "2026-04-01",
                      "--hearing-on", "2026-04-20", date_="2026-04-01")
    assert "not a way of serving this notice under § 45.32; use personal" in message
    assert "is after 2026-04-01" in refused("serve", number, "--to", "owner", "--method", "personal",
                                            "--served-on", "2026-04-02", "--hearing-on", "2026-04-20",
                                            date_="2026-04-01")


def test_a_mailed_notice_counts_from_its_receipt(mineola):
    account, _ = delinquent_account(occupant=False)
    number = term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20")
    term("serve", number, "--to", "owner", "--method", "certified_mail", "--article-number", "7019 0700 0000 1234",
         "--served-on", "2026-04-01", "--hearing-on", "2026-04-20", date_="2026-04-01")
    assert show(number)["deadlines"]["request_by"] is None
    term("received", number, "--to", "owner", "--received-on", "2026-04-04", date_="2026-04-06")
    assert show(number)["deadlines"]["request_by"] == "2026-04-14"


def test_the_notice_pdf_is_rendered_and_stored(mineola, django_capture_on_commit_callbacks, tmp_path):
    account, _ = delinquent_account()
    with django_capture_on_commit_callbacks(execute=True):
        number = served_case(account)
    notices = list(case(number).notices.all())
    assert len(notices) == 2 and all(n.pdf.name.endswith(".pdf") for n in notices)
    data = notices[0].pdf.read()
    assert data.startswith(b"%PDF")
    out = tmp_path / "notice.pdf"
    term("pdf", number, "--notice", "owner", "--out", str(out), date_="2026-04-02")
    assert out.read_bytes().startswith(b"%PDF")


# --- Requests and the default determination -----------------------------------------------------------------

def test_the_default_determination_when_no_request_arrives(mineola):
    account, _ = delinquent_account()
    number = served_case(account)
    # Before the hearing date, no determination; by default only once the request window has closed.
    assert "the hearing is on 2026-04-16" in refused("determine", number, "--outcome", "terminate",
                                                     "--mailed-on", "2026-04-11", date_="2026-04-11")
    assert nightly_deadlines(as_of=date(2026, 4, 11))["request_windows_closed"] == 0
    assert nightly_deadlines(as_of=date(2026, 4, 12))["request_windows_closed"] == 1
    assert case(number).status == "no_request"
    term("determine", number, "--outcome", "terminate", "--mailed-on", "2026-04-16", date_="2026-04-16")
    decided = case(number)
    assert decided.status == "determined" and decided.by_default and decided.determined_on == date(2026, 4, 16)
    assert show(number)["deadlines"]["appeal_by"] == "2026-04-30"
    assert "by default" in show(number)["events"][-1]["what"]


def test_a_late_request_is_accepted_and_flagged(mineola):
    account, _ = delinquent_account()
    number = served_case(account)
    out = term("request", number, "--received-on", "2026-04-13", "--text", "I was in hospital", date_="2026-04-13")
    assert "late: flagged" in out
    late = case(number)
    assert late.status == "requested" and late.request_late and late.request_text == "I was in hospital"
    assert CaseEvent.objects.get(case=late, kind="requested").flagged
    # A late request is not a timely one: the officer may still determine by default after the hearing date.
    term("determine", number, "--outcome", "terminate", "--mailed-on", "2026-04-20", date_="2026-04-20")
    assert case(number).by_default


def test_a_late_appeal_is_accepted_flagged_and_holds_the_order(mineola):
    account, _ = delinquent_account()
    number = terminated_case(account)
    out = term("appeal", number, "--filed-on", "2026-05-06", "--grounds", "never got the letter", date_="2026-05-06")
    assert "late: flagged" in out and case(number).status == "appealed" and case(number).appeal_late
    assert "(4) the appeal filed on 2026-05-06 awaits" in refused("shutoff", number, date_="2026-05-07")


# --- Payment in full ----------------------------------------------------------------------------------------

def test_payment_in_full_closes_the_case_and_cancels_the_order(mineola, django_capture_on_commit_callbacks):
    account, _ = delinquent_account()
    number = terminated_case(account)
    term("shutoff", number, date_="2026-05-05")
    with django_capture_on_commit_callbacks(execute=True):
        payment_post(account_no=account.account_no, amount=D("100.00"), paid_on=date(2026, 5, 6), reference="P-1")
    assert case(number).status == "ordered"  # partly paid: the order stands
    with django_capture_on_commit_callbacks(execute=True):
        payment_post(account_no=account.account_no, amount=D("86.13"), paid_on=date(2026, 5, 7), reference="P-2")
    closed = case(number)
    assert closed.status == "paid" and closed.closed_on is not None
    assert WorkOrder.objects.get(case=closed).status == "cancelled"
    assert "Paid in full" in show(number)["events"][-1]["what"]
    assert [h.to_status for h in status_history(closed)][-1] == "paid"


def test_a_payment_imported_from_a_file_closes_the_case_too(mineola, django_capture_on_commit_callbacks, tmp_path):
    account, _ = delinquent_account()
    number = served_case(account)
    path = tmp_path / "payments.csv"
    path.write_text(f"account_no,amount,paid_on,reference\n{account.account_no},186.13,2026-04-05,LOCKBOX-1\n")
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_payments", str(path), "--date", "2026-04-06", stdout=io.StringIO())
    assert case(number).status == "paid"


# --- Shut-off and restoration -------------------------------------------------------------------------------

def test_carried_out_the_account_is_shut_off_and_the_disconnect_charge_goes_on_the_next_bill(mineola):
    account, _ = delinquent_account()
    number = terminated_case(account)
    assert "no shut-off order issued" in refused("carried-out", number, date_="2026-05-05")
    term("shutoff", number, date_="2026-05-05")
    term("carried-out", number, date_="2026-05-06")
    account.refresh_from_db()
    assert account.status == Account.Status.SHUT_OFF and case(number).status == "shut_off"
    charge = PendingCharge.objects.get(account=account, code="disconnect")
    assert charge.amount.amount == D("50.00") and charge.citation == "§ 45.28 A(3)"
    assert "disconnect charge (termination of service) $50.00 charged (§ 45.28 A(3))" in show(number)["events"][-1]["what"]
    # Restoring needs everything owed paid, the disconnect charge waiting for the next bill included.
    message = refused("restore", number, date_="2026-05-07")
    assert "$236.13 is still owed on 2026-05-07 ($50.00 of it charged for the next bill)" in message
    payment_post(account_no=account.account_no, amount=D("236.13"), paid_on=date(2026, 5, 8), reference="P-9")
    term("restore", number, date_="2026-05-08")
    account.refresh_from_db()
    assert account.status == Account.Status.ACTIVE and case(number).status == "restored"
    connect = PendingCharge.objects.get(account=account, code="connect")
    assert connect.amount.amount == D("50.00")
    assert [o.kind for o in WorkOrder.objects.filter(case__number=number, status="done").order_by("id")] == [
        "shut_off", "restore"]


def test_the_disconnect_and_connect_charges_are_lines_of_the_bill_after_restoration_once(mineola):
    """A shut-off account is not billed; the bill after restoration carries both charges, once."""
    account, _ = delinquent_account()
    meter = account.installations.get().meter
    number = terminated_case(account)
    term("shutoff", number, date_="2026-05-05")
    term("carried-out", number, date_="2026-05-06")
    payment_post(account_no=account.account_no, amount=D("236.13"), paid_on=date(2026, 5, 8), reference="P-9")
    term("restore", number, date_="2026-05-08")
    read(meter, date(2026, 7, 12), 1_072_500)
    run("run_billing", "--date", "2026-08-01")
    run("run_billing", "--date", "2026-08-01")
    august = Bill.objects.get(account=account, bill_date=date(2026, 8, 1))
    fees = [(line.description, line.citation, line.amount.amount) for line in august.lines.filter(kind="fee")]
    assert fees == [("Disconnect charge (termination of service)", "§ 45.28 A(3)", D("50.00")),
                    ("Connect charge (initiation of service)", "§ 45.28 A(3)", D("50.00"))]


# --- Emergencies --------------------------------------------------------------------------------------------

def test_an_emergency_interruption_is_logged_apart_from_any_case(mineola):
    account, _ = delinquent_account()
    out = term("emergency", account.account_no, "--kind", "repairs", "--reason", "main break on Elm St",
               date_="2026-04-02")
    assert "repairs" in out and "§ 45.31" in out
    logged = Interruption.objects.get()
    assert logged.citation == "§ 45.31" and logged.account == account
    assert not TerminationCase.objects.exists() and not WorkOrder.objects.exists()
    assert "use emergency, repairs, shortage" in refused("emergency", account.account_no, "--kind", "nonpayment",
                                                         "--reason", "x", date_="2026-04-02")


# --- The nightly deadlines ----------------------------------------------------------------------------------

def _timeline(number):
    return [(e.on, e.kind, e.what) for e in CaseEvent.objects.filter(case__number=number).order_by("on", "kind")]


def test_the_nightly_deadlines_write_the_same_timeline_nightly_or_in_one_catch_up(mineola):
    timelines, statuses = [], []
    for catch_up in (False, True):
        account, _ = delinquent_account()
        number = served_case(account)
        if catch_up:
            nightly_deadlines(as_of=date(2026, 4, 30))
        else:
            for offset in range(30):
                nightly_deadlines(as_of=date(2026, 4, 1) + timedelta(days=offset))
        statuses.append(case(number).status)
        names = (account.owner.name, account.occupant.name)
        timelines.append([(on, kind, what.replace(names[0], "OWNER").replace(names[1], "OCCUPANT"))
                          for on, kind, what in _timeline(number)])
        TerminationCase.objects.filter(number=number).update(status="dismissed")  # one active case per account
    assert statuses == ["no_request", "no_request"]
    assert timelines[0] == timelines[1]
    assert ("2026-04-12", "request_window_closed") in [(on.isoformat(), kind) for on, kind, _ in timelines[0]]


def test_the_appeal_window_closing_makes_the_termination_final(mineola):
    account, _ = delinquent_account()
    number = terminated_case(account)
    assert nightly_deadlines(as_of=date(2026, 5, 4))["appeal_windows_closed"] == 0
    assert nightly_deadlines(as_of=date(2026, 5, 5))["appeal_windows_closed"] == 1
    assert case(number).status == "final"
    board = term("board", date_="2026-05-05")
    assert "Termination final (1)" in board and number in board
