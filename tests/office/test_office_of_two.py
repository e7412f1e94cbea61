"""An office of two people runs every step: a clerk and one supervisor (and, where the village names one, an approver
— the mayor or the treasurer, who decides and never prepares). Every two-person decision names who may decide it;
whoever asked may withdraw their own request, which frees what it held; nothing dead-ends.

The accounts are Mineola's worked bill: $186.13 billed 2026-02-01, due Sunday March 1 (§ 45.29 D)."""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing.models import LedgerEntry, Payment, PenaltyWaiver
from billing.services.payments import payment_post
from billing.services.waivers import penalty_waiver_decide, penalty_waiver_request
from core.approval import approval_deciders, approval_who, approval_withdraw
from core.errors import ApplicationError
from office.models import DayClose, DayReopen, Refund
from office.services import day_close, day_reopen_decide, day_reopen_request, refund_decide, refund_request
from remittance.autopay import ach_file_decide, ach_file_prepare
from remittance.models import AchFile
from tests.billing.steps import run
from tests.office.conftest import staff
from tests.remittance.conftest import bank, enrolled  # noqa: F401  (fixtures)
from tests.remittance.test_autopay import noticed
from tests.termination.steps import delinquent_account

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: two people")]
D = Decimal
MAR1, MAR2, MAR3 = date(2026, 3, 1), date(2026, 3, 2), date(2026, 3, 3)


def office_staff() -> list:
    return list(get_user_model().objects.filter(is_staff=True).order_by("username"))


def test_a_whole_month_with_a_clerk_and_one_supervisor(enrolled):  # noqa: F811 (the fixture imported)
    """February's bills to the March close with two staff users and nobody else: the autopay file the supervisor
    prepared and could not approve is withdrawn and prepared by the clerk, a waiver above the limit, a refund and a
    reopened day are each asked by one and decided by the other."""
    from tests.ordinance_steps import section_set

    clerk, boss = staff("clara", "Clerk"), staff("sam", "Supervisor")
    assert office_staff() == [clerk, boss]
    autopay = enrolled[0]
    noticed(autopay)
    late, _ = delinquent_account(occupant=False)
    overpaid, _ = delinquent_account(occupant=False)

    # The debit file: the supervisor prepared it, so nobody in the office can approve it ...
    file = ach_file_prepare(on=MAR1, actor=boss)
    assert approval_deciders(file) == []
    assert "Nobody but who asked can decide this debit file yet: whoever asked may withdraw it" in approval_who(file)
    with pytest.raises(ApplicationError, match="whoever asked for a debit file does not decide it"):
        ach_file_decide(file, approve=True, note="", actor=boss, on=MAR1)
    with pytest.raises(ApplicationError, match="only whoever asked for a debit file withdraws it"):
        approval_withdraw(file, actor=clerk)
    # ... so the supervisor withdraws it (nothing posted), the clerk prepares the day's file, the supervisor approves.
    approval_withdraw(file, actor=boss, note="prepared it myself: the clerk prepares")
    file.refresh_from_db()
    assert (file.status, file.decided_by, file.decision_note) == (
        "withdrawn", boss, "prepared it myself: the clerk prepares")
    assert not Payment.objects.exists()
    again = ach_file_prepare(on=MAR1, actor=clerk)
    assert approval_deciders(again) == [boss]
    assert approval_who(again) == ("Asked by Clara. Decided by another supervisor or an approver who did not ask for "
                                   "it: Sam (Supervisor). Whoever asked may withdraw it.")
    ach_file_decide(again, approve=True, note="", actor=boss, on=MAR1)
    assert Payment.objects.get(account=autopay).amount.amount == D("186.13")

    # A penalty waived above the office's limit: the clerk asks, the supervisor approves.
    section_set("penalty", waiver_approval_above="1.00")
    run("assess_penalties", "--date", "2026-03-05")
    charge = LedgerEntry.objects.filter(account=late, kind="penalty").earliest("posted_on")
    waiver = penalty_waiver_request(entry=charge, reason="in hospital", actor=clerk, as_of=date(2026, 3, 5))
    assert waiver.status == PenaltyWaiver.Status.PENDING and approval_deciders(waiver) == [boss]
    assert penalty_waiver_decide(waiver=waiver, approve=True, note="letter seen", actor=boss).status == "approved"

    # A credit refunded: the clerk asks, the supervisor approves.
    payment_post(account_no=overpaid.account_no, amount=D("250.00"), paid_on=date(2026, 2, 20), reference="CASH-250",
                 tender=Payment.Tender.CASH)
    refund = refund_request(account=overpaid, amount=D("63.87"), reason="moved away", as_of=MAR2, actor=clerk)
    assert refund_decide(refund=refund, approve=True, note="", as_of=MAR3, actor=boss).status == "approved"

    # The day closed by the clerk, reopened at the clerk's request by the supervisor, closed again.
    day_close(on=MAR2, counted_cash=D("0"), counted_checks=D("0"), note="", actor=clerk)
    reopen = day_reopen_request(close=DayClose.objects.get(day=MAR2), reason="a check found in the drawer",
                                actor=clerk)
    day_reopen_decide(reopen=reopen, approve=True, note="seen", actor=boss)
    assert day_close(on=MAR2, counted_cash=D("0"), counted_checks=D("0"), note="", actor=clerk).is_closed

    # The supervisor's own request has no decider in an office of two: withdrawn, never stuck.
    payment_post(account_no=late.account_no, amount=D("400.00"), paid_on=MAR2, reference="CASH-400",
                 tender=Payment.Tender.CASH)
    mine = refund_request(account=late, amount=D("1.00"), reason="asked at the window", as_of=MAR3, actor=boss)
    assert approval_deciders(mine) == []
    approval_withdraw(mine, actor=boss)
    assert Refund.objects.get(pk=mine.pk).status == "withdrawn"
    # Withdrawn, it holds nothing: the account's one waiting refund may be asked again.
    assert refund_request(account=late, amount=D("1.00"), reason="asked again", as_of=MAR3, actor=clerk).status == \
        "pending"
    assert office_staff() == [clerk, boss]
    assert set(DayReopen.objects.values_list("status", flat=True)) == {"approved"}


def test_an_approver_decides_what_a_supervisor_asked_and_prepares_nothing(enrolled):  # noqa: F811
    boss, mayor = staff("sam", "Supervisor"), staff("mayor", "Approver")
    noticed(enrolled[0])
    file = ach_file_prepare(on=MAR1, actor=boss)
    assert approval_deciders(file) == [mayor]
    assert "Mayor (Approver)" in approval_who(file)
    assert not mayor.has_perm("remittance.add_achfile") and not mayor.has_perm("office.add_refund")
    assert not mayor.has_perm("billing.add_penaltywaiver") and not mayor.has_perm("office.add_dayreopen")
    ach_file_decide(file, approve=True, note="signed", actor=mayor, on=MAR1)
    assert AchFile.objects.get(pk=file.pk).decided_by == mayor


def test_withdrawing_is_the_askers_own_and_only_while_it_waits(mineola):
    clerk, boss = staff("clara", "Clerk"), staff("sam", "Supervisor")
    account, _ = delinquent_account(occupant=False)
    payment_post(account_no=account.account_no, amount=D("250.00"), paid_on=date(2026, 2, 20), reference="C-1",
                 tender=Payment.Tender.CASH)
    refund = refund_request(account=account, amount=D("10.00"), reason="asked", as_of=MAR2, actor=clerk)
    with pytest.raises(ApplicationError) as refused:
        approval_withdraw(refund, actor=boss)
    assert [e.message for e in refused.value.errors] == [
        "only whoever asked for a refund withdraws it; a supervisor or an approver refuses it with a note"]
    refund_decide(refund=refund, approve=False, note="no", as_of=MAR2, actor=boss)
    with pytest.raises(ApplicationError) as decided:
        approval_withdraw(refund, actor=clerk)
    assert [e.message for e in decided.value.errors] == ["the refund is already decided: refused"]


def test_the_request_page_names_who_decides_and_the_asker_withdraws_from_it(client, mineola):
    clerk, boss = staff("clara", "Clerk"), staff("sam", "Supervisor")
    account, _ = delinquent_account(occupant=False)
    payment_post(account_no=account.account_no, amount=D("250.00"), paid_on=date(2026, 2, 20), reference="C-1",
                 tender=Payment.Tender.CASH)
    refund = refund_request(account=account, amount=D("10.00"), reason="asked", as_of=MAR2, actor=clerk)
    page = reverse("admin:office_refund_change", args=[refund.pk])
    client.force_login(boss)
    html = client.get(page).content.decode()
    assert "Decided by another supervisor or an approver who did not ask for it: Sam (Supervisor)." in html
    assert "Withdraw my request" not in html  # not theirs
    assert client.get(reverse("admin:office_refund_withdraw", args=[refund.pk])).status_code == 200
    refused = client.post(reverse("admin:office_refund_withdraw", args=[refund.pk]), {"note": ""})
    assert refused.status_code == 400 and "only whoever asked for a refund withdraws it" in refused.content.decode()
    client.force_login(clerk)
    html = client.get(page).content.decode()
    assert "Withdraw my request" in html
    done = client.post(reverse("admin:office_refund_withdraw", args=[refund.pk]), {"note": "keyed twice"},
                       follow=True)
    assert "is withdrawn: nobody will decide it" in done.content.decode()
    refund.refresh_from_db()
    assert (refund.status, refund.decision_note, refund.decided_by) == ("withdrawn", "keyed twice", clerk)
