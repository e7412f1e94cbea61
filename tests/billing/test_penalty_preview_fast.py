"""The preview after a nightly assessment plans only the accounts whose plan can change, and says exactly
what planning every account says, and what ``assess_penalties`` then posts.

The Mineola worked example (docs/ordinances.md, § 45.29 E): 62,500 gal billed 2026-02-01, due 2026-03-01:
$186.13. Unpaid: 2026-03-02 penalty 5% = $9.31 (9.3065); 2026-04-02 +1% = $1.86 (1.8613).
"""

from datetime import date, timedelta
from decimal import Decimal
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.utils import timezone

from billing.models import AccountStanding, LedgerEntry, Payment, PenaltyWaiver
from billing.penalties import selectors as penalty_selectors
from billing.penalties import shortcuts as penalty_shortcuts
from billing.penalties.selectors import penalties_preview, penalty_candidates
from billing.penalties.shortcuts import penalty_candidates_since
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from billing.services.waivers import penalty_waiver_decide, penalty_waiver_request
from core.models import NightlyStep
from ordinance.models import Utility
from tests.billing.steps import account_with_meter, pay, read, run
from tests.ordinance_steps import section_set
from waterbilling.nightly import STEPS

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.29 E")]

NIGHT = date(2026, 4, 1)  # the nightly job's day: 2026-03-02's 5% is on the books
ANNIVERSARY = date(2026, 4, 2)  # the 1% of the second month falls on it
D = Decimal


@pytest.fixture(autouse=True)
def no_margin(monkeypatch):
    """Everything here happens within seconds: what is done before the nightly job counts as before it."""
    monkeypatch.setattr(penalty_shortcuts, "RECORDED_MARGIN", timedelta(0))


def billed(account_no: str):
    """$186.13 billed 2026-02-01, due 2026-03-01 (book 1)."""
    account, meter = account_with_meter(book=1, account_no=account_no)
    read(meter, date(2026, 1, 12), 1_062_500)
    return account


def village():
    """Three accounts billed $186.13: two unpaid, one paid on time."""
    unpaid, other, paid = billed("1-0001"), billed("1-0002"), billed("1-0003")
    run("run_billing", "--date", "2026-02-01")
    pay(paid, "186.13", "2026-02-20", "ON-TIME")
    return unpaid, other, paid


def nightly(day: date = NIGHT) -> None:
    call_command("nightly", "--date", day.isoformat(), stdout=open("/dev/null", "w"))
    assert NightlyStep.objects.get(run__run_on=day, name="penalties").status == NightlyStep.Status.DONE


def full_preview(on: date):
    """The preview planning every account with a bill past due, as without a nightly assessment."""
    with mock.patch.object(penalty_selectors, "penalty_candidates_split", return_value=None):
        return penalties_preview(as_of=on)


def late_charges() -> dict[int, tuple]:
    return {e.pk: (e.account.account_no, e.kind, e.posted_on, e.amount.amount, e.description)
            for e in LedgerEntry.objects.filter(kind__in=("penalty", "penalty_correction")).select_related("account")}


def rows_of(rows) -> list[tuple]:
    return [(r.account_no, r.day, r.amount, r.correction) for r in rows]


def same_as_full_plan_and_assessment(on: date) -> list:
    """The preview of ``on`` is the full plan's, row for row, and what ``assess_penalties --date on`` posts."""
    rows = penalties_preview(as_of=on)
    assert rows == full_preview(on)
    before = late_charges()
    run("assess_penalties", "--date", on.isoformat())
    posted = sorted(v for k, v in late_charges().items() if k not in before)
    assert posted == sorted((r.account_no, "penalty_correction" if r.correction else "penalty", r.day, r.amount,
                             r.description) for r in rows)
    assert penalties_preview(as_of=on) == []
    return rows


def test_the_nightly_step_is_the_one_the_shortcut_reads():
    assert (penalty_shortcuts.NIGHTLY_PENALTIES_STEP, "billing.services.nightly.nightly_penalties") in STEPS


def test_nothing_new_the_day_after_lists_only_the_anniversaries(mineola):
    unpaid, other, paid = village()
    nightly()
    assert LedgerEntry.objects.get(account=unpaid, kind="penalty").amount.amount == D("9.31")
    # The day of the nightly: nothing changed since, nothing to plan.
    assert penalty_candidates_since(as_of=NIGHT) == []
    assert penalties_preview(as_of=NIGHT) == [] == full_preview(NIGHT)
    # The next day: the accounts owing something with a late-charge day on it; the paid one is not planned.
    assert penalty_candidates(as_of=ANNIVERSARY) == sorted([unpaid.pk, other.pk, paid.pk])
    assert penalty_candidates_since(as_of=ANNIVERSARY) == sorted([unpaid.pk, other.pk])
    rows = same_as_full_plan_and_assessment(ANNIVERSARY)
    assert rows_of(rows) == [("1-0001", ANNIVERSARY, D("1.86"), False), ("1-0002", ANNIVERSARY, D("1.86"), False)]
    assert rows[0].description.endswith(f"(month 2) on bill {rows[0].bill_number}")


def test_a_day_between_anniversaries_plans_nobody(mineola):
    village()
    nightly()
    assert penalty_candidates_since(as_of=date(2026, 4, 1) + timedelta(days=-1)) is None  # before the night
    assert penalty_candidates_since(as_of=date(2026, 4, 1)) == []
    nightly(ANNIVERSARY)
    assert penalty_candidates_since(as_of=date(2026, 4, 20)) == []
    assert same_as_full_plan_and_assessment(date(2026, 4, 20)) == []


def test_a_payment_dated_before_the_due_date_recorded_after_the_nightly(mineola):
    unpaid, other, _ = village()
    nightly()
    # Paid $100.00 on 2026-02-20, recorded only now: the penalty is 5% of $86.13 = $4.31 (4.3065), corrected
    # at once by -$5.00; 2026-04-02's is 1% of $86.13 = $0.86 (0.8613).
    pay(unpaid, "100.00", "2026-02-20", "LATE-FILE")
    assert unpaid.pk in penalty_candidates_since(as_of=NIGHT)
    assert same_as_full_plan_and_assessment(NIGHT) == []
    rows = same_as_full_plan_and_assessment(ANNIVERSARY)
    assert rows_of(rows) == [("1-0001", ANNIVERSARY, D("0.86"), False), ("1-0002", ANNIVERSARY, D("1.86"), False)]
    net = sum((e.amount.amount for e in LedgerEntry.objects.filter(
        account=unpaid, kind__in=("penalty", "penalty_correction"), posted_on=date(2026, 3, 2))), D("0"))
    assert net == D("4.31")


def test_a_returned_check_that_paid_before_the_due_date(mineola):
    unpaid, other, paid = village()
    clerk = get_user_model().objects.create_user("clerk", is_staff=True)
    payment_post(account_no=unpaid.account_no, amount=D("186.13"), paid_on=date(2026, 2, 20), reference="CHK-1001",
                 tender="check", check_number="1001")
    nightly()
    assert not LedgerEntry.objects.filter(account=unpaid, kind="penalty").exists()
    # The check comes back after the night, reversed as of 2026-03-10: the books are as if it was never paid,
    # so 2026-03-02's 5% of $186.13 = $9.31 is owed, and it is not the kind of penalty a reversal corrects.
    payment_reverse(payment=Payment.objects.get(reference="CHK-1001"), reversed_on=date(2026, 3, 10),
                    reason="returned", note="NSF", actor=clerk)
    assert penalty_candidates_since(as_of=NIGHT) == [unpaid.pk]
    rows = same_as_full_plan_and_assessment(NIGHT)
    assert rows_of(rows) == [("1-0001", date(2026, 3, 2), D("9.31"), False)]
    rows = same_as_full_plan_and_assessment(ANNIVERSARY)
    assert rows_of(rows) == [("1-0001", ANNIVERSARY, D("1.86"), False), ("1-0002", ANNIVERSARY, D("1.86"), False)]


def test_waivers_approved_after_the_nightly(mineola):
    unpaid, other, _ = village()
    supervisor = get_user_model().objects.create_user("supervisor", is_staff=True)
    supervisor.groups.add(Group.objects.get(name="Supervisor"))
    clerk = get_user_model().objects.create_user("clerk", is_staff=True)
    clerk.groups.add(Group.objects.get(name="Clerk"))
    section_set("penalty", waiver_approval_above="5.00")
    nightly()
    first = LedgerEntry.objects.get(account=unpaid, kind="penalty", posted_on=date(2026, 3, 2))
    waiver = penalty_waiver_request(entry=first, reason="bank error", actor=clerk, as_of=NIGHT)
    assert waiver.status == PenaltyWaiver.Status.PENDING  # $9.31 is above the $5.00 limit
    penalty_waiver_decide(waiver=waiver, approve=True, note="the bank's letter", actor=get_user_model().objects.get(
        pk=supervisor.pk))
    assert LedgerEntry.objects.get(account=unpaid, kind="penalty_correction").amount.amount == D("-9.31")
    # Another account's waiver approved by another path, its books not yet reconciled: the plan corrects it.
    second = LedgerEntry.objects.get(account=other, kind="penalty", posted_on=date(2026, 3, 2))
    PenaltyWaiver.objects.create(entry=second, account=other, bill=second.bill, amount=second.amount,
                                 reason="meter misread", status="approved", decided_at="2026-04-01T15:00Z")
    assert penalty_candidates_since(as_of=NIGHT) == sorted([unpaid.pk, other.pk])
    rows = same_as_full_plan_and_assessment(NIGHT)
    assert rows_of(rows) == [("1-0002", date(2026, 3, 2), D("-9.31"), True)]
    assert rows[0].description.endswith("waived: meter misread")
    # The principal is unpaid as before: 1% of $186.13 = $1.86 on each.
    rows = same_as_full_plan_and_assessment(ANNIVERSARY)
    assert rows_of(rows) == [("1-0001", ANNIVERSARY, D("1.86"), False), ("1-0002", ANNIVERSARY, D("1.86"), False)]


def test_without_a_nightly_assessment_every_candidate_is_planned(mineola):
    village()
    run("assess_penalties", "--date", NIGHT.isoformat())  # assessed by hand: no nightly recorded
    assert penalty_candidates_since(as_of=ANNIVERSARY) is None
    rows = same_as_full_plan_and_assessment(ANNIVERSARY)
    assert rows_of(rows) == [("1-0001", ANNIVERSARY, D("1.86"), False), ("1-0002", ANNIVERSARY, D("1.86"), False)]


def test_a_utility_changed_after_the_nightly_plans_every_candidate(mineola):
    village()
    nightly()
    assert penalty_candidates_since(as_of=ANNIVERSARY) is not None
    utility = Utility.objects.get()
    utility.save()  # the office edited the ordinance settings
    assert penalty_candidates_since(as_of=ANNIVERSARY) is None
    assert same_as_full_plan_and_assessment(ANNIVERSARY) != []


def test_a_fact_recorded_just_before_the_nightly_started_counts_as_after_it(mineola, monkeypatch):
    unpaid, *_ = village()
    pay(unpaid, "186.13", "2026-02-20", "JUST-BEFORE")
    nightly()
    assert unpaid.pk not in penalty_candidates_since(as_of=NIGHT)
    monkeypatch.setattr(penalty_shortcuts, "RECORDED_MARGIN", timedelta(minutes=5))
    Utility.objects.update(updated_at=timezone.now() - timedelta(hours=1))  # installed long before
    assert unpaid.pk in penalty_candidates_since(as_of=NIGHT)


def test_the_night_of_the_due_date_then_the_first_penalty(mineola):
    village()
    nightly(date(2026, 3, 1))  # the bills are due that day: not yet past due, nothing assessed on them
    assert penalty_candidates(as_of=date(2026, 3, 1)) == []
    rows = same_as_full_plan_and_assessment(date(2026, 3, 2))
    # 5% of $186.13 = $9.31 on each unpaid bill, the day after its due date.
    assert rows_of(rows) == [("1-0001", date(2026, 3, 2), D("9.31"), False), ("1-0002", date(2026, 3, 2), D("9.31"),
                                                                             False)]


def test_accounts_unchanged_since_the_night_are_carried_forward_from_their_books_not_replayed(mineola):
    """An account paid in part before its due date and one unpaid, nothing recorded since the night: their
    charges after it are worked out from what their books leave open at its end, month after month, and are
    the full plan's and the assessment's to the cent."""
    unpaid, other, paid = village()
    pay(other, "100.00", "2026-02-25", "PART")  # 86.13 unpaid: 5% = 4.31 on 2026-03-02, then 1% = 0.86
    nightly()
    assert LedgerEntry.objects.get(account=other, kind="penalty").amount.amount == D("4.31")
    planned = []
    real_plan = penalty_selectors.penalties_plan

    def plan(*, through):
        planned.extend(through)
        return real_plan(through=through)

    with mock.patch.object(penalty_selectors, "penalties_plan", side_effect=plan):
        rows = penalties_preview(as_of=date(2026, 5, 2))
    assert planned == []  # neither account is replayed
    assert rows == full_preview(date(2026, 5, 2))
    # Each month's 1% on the principal still unpaid: 186.13 → 1.86, 86.13 → 0.86.
    assert rows_of(rows) == [("1-0001", ANNIVERSARY, D("1.86"), False), ("1-0001", date(2026, 5, 2), D("1.86"), False),
                             ("1-0002", ANNIVERSARY, D("0.86"), False), ("1-0002", date(2026, 5, 2), D("0.86"), False)]
    same_as_full_plan_and_assessment(date(2026, 5, 2))


def test_a_stale_standing_is_not_trusted_for_the_carried_accounts(mineola):
    """The books kept at the end of the night are worked out again when something was posted since."""
    unpaid, other, paid = village()
    nightly()
    AccountStanding.objects.update(state={"credit": "0.00", "bills": []}, last_entry_id=0)
    assert rows_of(penalties_preview(as_of=ANNIVERSARY)) == [("1-0001", ANNIVERSARY, D("1.86"), False),
                                                            ("1-0002", ANNIVERSARY, D("1.86"), False)]
