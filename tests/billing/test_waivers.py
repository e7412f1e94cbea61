"""Waiving a penalty: a fact the books read, decided by a clerk up to the office's limit and by a supervisor
above it.

The Mineola worked example (docs/ordinances.md, § 45.29 E): 62,500 gal billed 2026-02-01, due 2026-03-01:
$186.13. Unpaid: 2026-03-02 penalty 5% = $9.31 (9.3065); 2026-04-02 +1% = $1.86; 2026-05-02 +1% = $1.86 →
balance on 2026-05-10 $199.16. The office's limit (``[penalty] waiver_approval_above``) is $25.00.
"""

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from billing.ledger.allocation import Entry
from billing.models import Bill, LedgerEntry, PenaltyWaiver
from billing.ordinance import ordinance_on, waiver_approval_above
from billing.penalties.rules import BillTerms, MonthlyInterestFebruaryPenalty, penalties_owed
from billing.selectors import bill_summaries
from billing.services.waivers import penalty_waiver_decide, penalty_waiver_request
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter, pay, read, run, statement

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.29 E")]

FIRST_PENALTY_DAY = date(2026, 3, 2)


def staff(group: str, username: str):
    user = get_user_model().objects.create_user(username, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return get_user_model().objects.get(pk=user.pk)


@pytest.fixture
def clerk(mineola):
    return staff("Clerk", "clerk")


@pytest.fixture
def supervisor(mineola):
    return staff("Supervisor", "supervisor")


def assess(on: date) -> str:
    return run("assess_penalties", "--date", on.isoformat())


def billed_account():
    """$186.13 billed 2026-02-01, due 2026-03-01."""
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    return account, meter


def first_penalty(account) -> LedgerEntry:
    return LedgerEntry.objects.get(account=account, kind="penalty", posted_on=FIRST_PENALTY_DAY)


def balance(account, on="2026-05-10") -> str:
    return statement(account.account_no, on)["balance"]


def limit(amount: str) -> None:
    from tests.ordinance_steps import section_set

    section_set("penalty", waiver_approval_above=amount)


def ledger(account) -> list[tuple]:
    """The account's entries, the bill's number (a sequence) left out."""
    return sorted((e.kind, e.posted_on, e.amount.amount, e.description.replace(e.bill.number, "<bill>"))
                  for e in LedgerEntry.objects.filter(account=account).select_related("bill"))


def test_every_preset_says_the_office_limit(mineola):
    assert ordinance_on(date(2026, 3, 5)).waiver_approval_above == Decimal("25.00")


def test_a_limit_that_is_not_an_amount_is_refused_naming_the_setting():
    assert waiver_approval_above({}) == Decimal("25.00")
    for bad in ("lots", "-1", "NaN"):
        with pytest.raises(ApplicationError, match="waiver_approval_above") as refused:
            waiver_approval_above({"waiver_approval_above": bad})
        assert refused.value.errors[0].field == "waiver_approval_above"


def test_unpaid_the_worked_example_comes_to_199_16(mineola):
    account, _ = billed_account()
    assess(date(2026, 5, 10))
    assert balance(account) == "199.16"


def test_waiving_the_first_penalty_under_the_limit_takes_it_off_at_once(clerk):
    account, _ = billed_account()
    assess(date(2026, 3, 5))
    entry = first_penalty(account)
    assert entry.amount.amount == Decimal("9.31")

    waiver = penalty_waiver_request(entry=entry, reason="first late payment in 20 years", actor=clerk,
                                    as_of=date(2026, 3, 5))

    assert waiver.status == PenaltyWaiver.Status.APPROVED and waiver.decided_by == clerk
    assert waiver.amount.amount == Decimal("9.31") and waiver.decided_at is not None
    correction = LedgerEntry.objects.get(account=account, kind="penalty_correction")
    assert (correction.posted_on, correction.amount.amount, correction.corrects_id) == (
        FIRST_PENALTY_DAY, Decimal("-9.31"), entry.pk)
    assert correction.description.endswith("waived: first late payment in 20 years")
    assert balance(account, "2026-03-05") == "186.13"
    # Later penalties are 1% of the unpaid principal as before: 186.13 + 1.86 + 1.86.
    assess(date(2026, 5, 10))
    assert balance(account) == "189.85"
    charges = statement(account.account_no, "2026-05-10")["charges"]
    assert [(c["date"], c["amount"]) for c in charges] == [("2026-04-02", "1.86"), ("2026-05-02", "1.86")]
    assert "0 posted" in assess(date(2026, 5, 10))
    assert LedgerEntry.objects.filter(account=account, kind="penalty", posted_on=FIRST_PENALTY_DAY).count() == 1


@pytest.mark.parametrize("daily", [True, False], ids=["assessed daily", "assessed once"])
def test_assessing_daily_or_once_after_a_waiver_gives_identical_ledgers(clerk, daily):
    """Each way of assessing gives the same ledger, the one written out below (the waiver's service owns its
    transaction, so each way runs in a test of its own)."""
    account, _ = billed_account()
    days = [date(2026, 3, 1) + timedelta(days=n) for n in range(5)] if daily else [date(2026, 3, 5)]
    for day in days:
        assess(day)
    penalty_waiver_request(entry=first_penalty(account), reason="bank error", actor=clerk, as_of=date(2026, 3, 5))
    days = [date(2026, 3, 6) + timedelta(days=n) for n in range(66)] if daily else [date(2026, 5, 10)]
    for day in days:
        assess(day)
    assert days[-1] == date(2026, 5, 10)
    assert balance(account) == "189.85"
    kinds = [(kind, day, amount) for kind, day, amount, _ in ledger(account) if kind != "water"]
    assert kinds == [("penalty", date(2026, 3, 2), Decimal("9.31")), ("penalty", date(2026, 4, 2), Decimal("1.86")),
                     ("penalty", date(2026, 5, 2), Decimal("1.86")),
                     ("penalty_correction", date(2026, 3, 2), Decimal("-9.31"))]


def test_a_late_payment_after_the_waiver_never_brings_the_penalty_back(clerk):
    account, _ = billed_account()
    assess(date(2026, 3, 5))
    penalty_waiver_request(entry=first_penalty(account), reason="bank error", actor=clerk, as_of=date(2026, 3, 5))
    assess(date(2026, 5, 10))
    # A part payment dated before the first penalty day, recorded now: the penalties are recomputed on what
    # was unpaid, and the waived one stays at nothing. 86.13 unpaid: 1% = 0.86 on 4/2 and 5/2.
    pay(account, "100.00", "2026-03-01", "CHK-0301")
    assert balance(account) == "87.85"
    charges = statement(account.account_no, "2026-05-10")["charges"]
    assert [(c["date"], c["amount"]) for c in charges] == [("2026-04-02", "0.86"), ("2026-05-02", "0.86")]
    assert "0 posted" in assess(date(2026, 5, 10))


def test_above_the_limit_the_waiver_waits_for_a_supervisor_and_changes_nothing_until_approved(clerk, supervisor):
    limit("5.00")
    account, _ = billed_account()
    assess(date(2026, 3, 5))
    waiver = penalty_waiver_request(entry=first_penalty(account), reason="hospital stay", actor=clerk,
                                    as_of=date(2026, 3, 5))
    assert waiver.status == PenaltyWaiver.Status.PENDING and waiver.decided_by is None
    assess(date(2026, 5, 10))
    assert balance(account) == "199.16"
    assert not LedgerEntry.objects.filter(kind="penalty_correction").exists()

    with pytest.raises(ApplicationError, match="only a supervisor"):
        penalty_waiver_decide(waiver=waiver, approve=True, note="", actor=clerk)
    approved = penalty_waiver_decide(waiver=waiver, approve=True, note="letter from the hospital", actor=supervisor)

    assert approved.status == PenaltyWaiver.Status.APPROVED and approved.decided_by == supervisor
    assert balance(account) == "189.85"
    assert "0 posted" in assess(date(2026, 5, 10))
    assert balance(account) == "189.85"
    with pytest.raises(ApplicationError, match="already decided"):
        penalty_waiver_decide(waiver=waiver, approve=False, note="changed my mind", actor=supervisor)


def test_a_refused_waiver_changes_nothing_and_a_new_one_may_be_asked_for(clerk, supervisor):
    limit("5.00")
    account, _ = billed_account()
    assess(date(2026, 5, 10))
    waiver = penalty_waiver_request(entry=first_penalty(account), reason="hospital stay", actor=clerk,
                                    as_of=date(2026, 5, 10))
    with pytest.raises(ApplicationError, match="needs a note"):
        penalty_waiver_decide(waiver=waiver, approve=False, note=" ", actor=supervisor)
    refused = penalty_waiver_decide(waiver=waiver, approve=False, note="no proof given", actor=supervisor)
    assert refused.status == PenaltyWaiver.Status.REFUSED and refused.decision_note == "no proof given"
    assert balance(account) == "199.16"
    assess(date(2026, 5, 10))
    assert balance(account) == "199.16"
    again = penalty_waiver_request(entry=first_penalty(account), reason="hospital letter now on file", actor=clerk,
                                   as_of=date(2026, 5, 10))
    assert again.status == PenaltyWaiver.Status.PENDING


def test_the_requester_cannot_approve_their_own_waiver(supervisor):
    limit("5.00")
    account, _ = billed_account()
    assess(date(2026, 3, 5))
    waiver = penalty_waiver_request(entry=first_penalty(account), reason="hospital stay", actor=supervisor,
                                    as_of=date(2026, 3, 5))
    assert waiver.status == PenaltyWaiver.Status.PENDING
    with pytest.raises(ApplicationError, match="does not decide it") as refused:
        penalty_waiver_decide(waiver=waiver, approve=True, note="", actor=supervisor)
    assert refused.value.errors[0].field == "actor"
    # Every reason at once (core.approval): the same person, and a refusal without a note.
    with pytest.raises(ApplicationError) as both:
        penalty_waiver_decide(waiver=waiver, approve=False, note=" ", actor=supervisor)
    assert [e.field for e in both.value.errors] == ["actor", "note"]
    waiver.refresh_from_db()
    assert waiver.status == PenaltyWaiver.Status.PENDING


def test_a_second_live_waiver_of_one_charge_is_refused(clerk):
    limit("5.00")
    account, _ = billed_account()
    assess(date(2026, 3, 5))
    penalty_waiver_request(entry=first_penalty(account), reason="hospital stay", actor=clerk, as_of=date(2026, 3, 5))
    with pytest.raises(ApplicationError, match="already has a waiver"):
        penalty_waiver_request(entry=first_penalty(account), reason="again", actor=clerk, as_of=date(2026, 3, 5))
    assert PenaltyWaiver.objects.count() == 1


def test_a_charge_already_corrected_to_zero_is_not_waived(clerk):
    account, _ = billed_account()
    assess(date(2026, 3, 5))
    pay(account, "186.13", "2026-02-27", "CHK-0227")  # on time, recorded late: the penalty is corrected to nothing
    with pytest.raises(ApplicationError, match="already corrected to \\$0.00") as refused:
        penalty_waiver_request(entry=first_penalty(account), reason="paid on time", actor=clerk,
                               as_of=date(2026, 3, 5))
    assert refused.value.errors[0].field == "entry"
    assert not PenaltyWaiver.objects.exists()


def test_a_waived_charge_is_not_waived_twice(clerk):
    account, _ = billed_account()
    assess(date(2026, 3, 5))
    penalty_waiver_request(entry=first_penalty(account), reason="bank error", actor=clerk, as_of=date(2026, 3, 5))
    with pytest.raises(ApplicationError):
        penalty_waiver_request(entry=first_penalty(account), reason="bank error", actor=clerk, as_of=date(2026, 3, 5))


def test_only_a_penalty_or_interest_charge_is_waived_and_a_reason_is_required(clerk):
    account, _ = billed_account()
    assess(date(2026, 3, 5))
    water = LedgerEntry.objects.get(account=account, kind="water")
    with pytest.raises(ApplicationError, match="not a penalty or interest charge") as refused:
        penalty_waiver_request(entry=water, reason="disputed", actor=clerk, as_of=date(2026, 3, 5))
    assert refused.value.errors[0].field == "entry"
    with pytest.raises(ApplicationError, match="needs a reason") as refused:
        penalty_waiver_request(entry=first_penalty(account), reason="  ", actor=clerk, as_of=date(2026, 3, 5))
    assert refused.value.errors[0].field == "reason"
    assert not PenaltyWaiver.objects.exists()
    assert balance(account, "2026-03-05") == "195.44"  # 186.13 + 9.31


def test_the_next_bill_does_not_bring_back_a_waived_penalty(clerk):
    """The August bill's money box counts the penalties since the February bill: 1.86 on each of 4/2, 5/2, 6/2
    and 7/2 = 7.44, not the waived 9.31."""
    account, meter = billed_account()
    assess(date(2026, 3, 5))
    penalty_waiver_request(entry=first_penalty(account), reason="bank error", actor=clerk, as_of=date(2026, 3, 5))
    read(meter, date(2026, 7, 12), 1_062_500)
    run("run_billing", "--date", "2026-08-01")
    august = Bill.objects.get(account=account, bill_date=date(2026, 8, 1))
    assert bill_summaries(bills=[august])[august.pk].penalties == Decimal("7.44")


def test_the_supervisor_group_decides_waivers_and_the_clerk_asks(clerk, supervisor):
    assert clerk.has_perm("billing.add_penaltywaiver") and not clerk.has_perm("billing.change_penaltywaiver")
    assert supervisor.has_perm("billing.change_penaltywaiver")


@pytest.mark.citation("§ 169-26")
def test_a_waived_interest_charge_is_not_accumulated_interest_for_the_february_penalty():
    """Washingtonville § 169-26, pure: $100.00 billed 2025-11-01, due 2025-12-01; 2% interest on 2025-12-02 and
    2026-01-02 ($2.00 each), and on 2026-02-01 5% of the unpaid rents and interest: 5% × 104.00 = $5.20. With
    the December interest waived it is owed as nothing, so February's penalty is 5% × 102.00 = $5.10."""
    scheme = MonthlyInterestFebruaryPenalty({"citation": "§ 169-26", "interest_percent": "2", "penalty_percent": "5",
                                             "penalty_month": 2, "penalty_day": 1, "charges_on": ["water"]})
    key = (date(2025, 11, 1), 1)
    terms = [BillTerms(key=key, bill_date=date(2025, 11, 1), due_date=date(2025, 12, 1))]
    entries = [Entry(kind="water", posted_on=date(2025, 11, 1), amount=Decimal("100.00"), bill_key=key)]

    def owed(waived=()):
        return [(p.due.on, p.due.kind, p.amount) for p in penalties_owed(
            entries=entries, bills=terms, scheme=scheme, through=date(2026, 2, 1), waived=waived)]

    assert owed() == [(date(2025, 12, 2), "interest", Decimal("2.00")), (date(2026, 1, 2), "interest", Decimal("2.00")),
                      (date(2026, 2, 1), "penalty", Decimal("5.20"))]
    assert owed({(1, date(2025, 12, 2), "interest")}) == [(date(2026, 1, 2), "interest", Decimal("2.00")),
                                                          (date(2026, 2, 1), "penalty", Decimal("5.10"))]
