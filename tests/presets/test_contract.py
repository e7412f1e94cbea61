"""The contract every preset file keeps, whatever its village: it installs (twice, changing nothing the
second time), each strategy it names is built through the ordinance registries, and an account billed
through a year by the real billing run gets bills whose totals are the sums of their lines, every line with
its citation, dated and due as the preset's calendar says, with the penalties its scheme makes owed — and
billing again generates nothing.

Parametrized over ``fixtures/presets/*.toml``: a new preset file is held to the contract as soon as it
exists. What each village's numbers come to is in its own worked examples; this test knows no village.
"""

import re
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.apps import apps

from billing.models import Bill, BillingException, BillingRun, BillLine, LedgerEntry, RateSchedule
from billing.ordinance import (
    CALENDARS,
    PENALTY_SCHEMES,
    BillingCalendar,
    PenaltyScheme,
    RateStructure,
    ordinance_on,
    rate_structure_for,
)
from billing.runs.lifecycle import billing_run_chunk_execute, billing_run_create
from billing.services.penalties import penalties_assess_due
from core.clock import today
from core.dates import add_months
from core.errors import ApplicationError
from core.money import fmt_amount
from meters.units import METER_SIZES
from ordinance.files import PRESET_DIR, preset_read
from ordinance.install import preset_install
from ordinance.models import Utility
from tests.billing.steps import account_with_meter, pay, read

PRESETS = sorted(path.stem for path in PRESET_DIR.glob("*.toml"))
# Gallons a month: enough over any minimum's allowance to reach the block and excess rates.
MONTHLY_GALLONS = 25_000

pytestmark = pytest.mark.django_db


def _uses_sample_rates(code: str) -> bool:
    return any(schedule.get("sample") for schedule in preset_read(code=code).data.get("rate_schedule", []))


def _install(code: str):
    # A preset whose rates are sample values bills only on a demo/training site (docs/ordinances.md).
    return preset_install(code=code, mark_demo_site=_uses_sample_rates(code))


def _counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def _billing_facts() -> tuple[int, ...]:
    return (Bill.objects.count(), BillLine.objects.count(), LedgerEntry.objects.count(),
            BillingException.objects.count())


@pytest.fixture(params=PRESETS)
def installed(request):
    _install(request.param)
    return request.param


def test_every_preset_file_is_held_to_the_contract():
    assert "mineola" in PRESETS


def test_installing_twice_changes_nothing(installed):
    before = _counts()
    again = _install(installed)
    assert (again.created, again.updated) == ([], [])
    assert _counts() == before


def test_every_strategy_is_built_through_the_registries(installed):
    data = preset_read(code=installed).data
    calendar = CALENDARS.build(data["calendar"]["scheme"], data["calendar"])
    penalties = PENALTY_SCHEMES.build(data["penalty"]["scheme"], data["penalty"])
    assert isinstance(calendar, BillingCalendar) and calendar.name == data["calendar"]["scheme"]
    assert isinstance(penalties, PenaltyScheme) and penalties.name == data["penalty"]["scheme"]
    # The installation's schedules; a town's districts may have their own (``[[district.rate_schedule]]``).
    schedules = list(RateSchedule.objects.filter(district="").order_by("effective_on"))
    assert len(schedules) == len(data.get("rate_schedule", [])) >= 1
    own = [schedule for district in data.get("district", []) for schedule in district.get("rate_schedule", [])]
    assert RateSchedule.objects.exclude(district="").count() == len(own)
    for row in schedules:
        assert isinstance(rate_structure_for(row.rules), RateStructure), row
    ordinance = ordinance_on(schedules[0].effective_on)
    assert ordinance.utility.preset == installed
    assert ordinance.rate_schedule == schedules[0] and isinstance(ordinance.rates, RateStructure)


def test_every_penalty_schemes_shortcuts_give_what_its_dates_and_amount_give(installed):
    """The fast paths ask a scheme its shortcuts (``billing.fast_paths``); each must answer as ``dates`` and
    ``amount`` do, for bills dated through a year and unpaid amounts of every kind."""
    scheme = ordinance_on(date(2026, 2, 1)).penalties
    samples = [{"water": Decimal(w), "sewer": Decimal(s), "fee": Decimal(f), "fine": Decimal(i),
                "penalty": Decimal(p), "interest": Decimal(n)}
               for w, s, f, i, p, n in (("0", "0", "0", "0", "0", "0"), ("186.13", "0", "0", "0", "0", "0"),
                                        ("0", "0", "25.00", "0", "9.31", "0"), ("0", "40.00", "0", "0", "0", "0"),
                                        ("100.00", "24.80", "10.00", "50.00", "5.00", "2.01"),
                                        ("0", "0", "0", "0", "12.00", "3.00"))]
    for month in range(1, 13):
        bill_date = date(2026, month, 1)
        due_date = bill_date + timedelta(days=30)
        through = bill_date + timedelta(days=400)
        dates = scheme.dates(bill_date=bill_date, due_date=due_date, through=through)
        in_order = scheme.dates_in_order(bill_date=bill_date, due_date=due_date, through=through)
        assert list(in_order) == sorted(dates, key=lambda due: due.on)
        for due in in_order:
            for unpaid in samples:
                principal = sum((unpaid[cat] for cat in scheme.charges_on), Decimal(0))
                total = sum(unpaid.values(), Decimal(0))
                extra = {"unpaid_interest": unpaid["interest"]} if due.with_interest else {}
                assert scheme.amount_of_unpaid(due, unpaid) == scheme.amount(
                    due, unpaid_principal=principal, unpaid_total=total, **extra), (due, unpaid)
                if scheme.owes_no_more_late_charges(unpaid):
                    assert all(scheme.amount_of_unpaid(later, unpaid) == 0 for later in in_order if later.on >= due.on)


def _first_of_next_month(day: date) -> date:
    return day if day.day == 1 else add_months(day.replace(day=1), 1)


def _run(day: date) -> BillingRun:
    run = billing_run_create(run_on=day)
    for chunk_id in run.chunks.order_by("index").values_list("id", flat=True):
        billing_run_chunk_execute(chunk_id=chunk_id)
    run.refresh_from_db()
    assert run.status == BillingRun.Status.DONE, (day, run.error)
    return run


def test_one_account_billed_through_a_year(installed):
    ordinance = ordinance_on(today())
    calendar, scheme = ordinance.calendar, ordinance.penalties
    earliest = RateSchedule.objects.order_by("effective_on").values_list("effective_on", flat=True).first()
    first = _first_of_next_month(max(date(2025, 1, 1), earliest))
    year = [first + timedelta(days=n) for n in range((add_months(first, 12) - first).days)]
    assessed_on = add_months(first, 15)
    assert assessed_on <= today(), f"{installed}: its first rate schedule is too recent to bill a past year"
    billing_days = [day for day in year if calendar.due_books(day) or calendar.due_frequencies(day)]
    assert billing_days, f"{installed}: the calendar bills nobody in a year from {first}"
    books = sorted({book for day in billing_days for book in calendar.due_books(day)})
    book = books[0] if books else 1

    # One account for each frequency the calendar bills meters at, with the smallest meter billed so.
    size_of = {}
    for size in METER_SIZES:
        size_of.setdefault(calendar.frequency_for(size), size)
    installed_on = add_months(first, -1).replace(day=10)
    accounts = {}
    for frequency, size in size_of.items():
        account, meter = account_with_meter(book=book, size=size, start=installed_on, value=0,
                                            category="one_two_family")
        for month in range(13):
            read(meter, add_months(installed_on, month).replace(day=15), MONTHLY_GALLONS * (month + 1))
        accounts[account.pk] = (account, frequency)

    for day in billing_days:
        _run(day)
    assert not BillingException.objects.exists(), list(BillingException.objects.values_list("detail", flat=True))

    for account, frequency in accounts.values():
        bills = list(Bill.objects.filter(account=account).order_by("bill_date").prefetch_related("lines"))
        expected = [day for day in billing_days if calendar.is_due(book=book, frequency=frequency, on=day)]
        assert expected and [b.bill_date for b in bills] == expected, (frequency, size_of[frequency])
        for bill in bills:
            cycle = calendar.cycle(book=book, frequency=frequency, bill_date=bill.bill_date)
            assert bill.frequency == frequency
            assert bill.due_date == cycle.due_date
            assert cycle.read_window[0] <= bill.period_end <= cycle.read_window[1]
            lines = list(bill.lines.all())
            assert lines and bill.total.amount == sum((line.amount.amount for line in lines), Decimal("0"))
            assert all(line.citation.strip() for line in lines), [(line.description, line.citation) for line in lines]
            assert LedgerEntry.objects.get(bill=bill, kind=LedgerEntry.Kind.WATER).amount == bill.total

        # The first bill is paid in full on its due date; the others are left unpaid.
        paid = bills[0]
        pay(account, fmt_amount(paid.total.amount), paid.due_date.isoformat(), f"CONTRACT-{account.pk}")

    penalties_assess_due(as_of=assessed_on)
    for account, _ in accounts.values():
        bills = list(Bill.objects.filter(account=account).order_by("bill_date"))
        late = [LedgerEntry.Kind.PENALTY, LedgerEntry.Kind.INTEREST]
        assert not LedgerEntry.objects.filter(bill=bills[0], kind__in=late).exists()
        for bill in bills[1:]:
            # A bill with nothing to pay (gallons within an allowance already charged) owes no penalty.
            dues = scheme.dates(bill_date=bill.bill_date, due_date=bill.due_date, through=assessed_on) \
                if bill.total.amount else []
            dues = sorted(dues, key=lambda due: (due.on, due.kind))
            posted = list(LedgerEntry.objects.filter(bill=bill, kind__in=late).order_by("posted_on", "kind"))
            assert [(entry.posted_on, entry.kind) for entry in posted] == [(due.on, due.kind) for due in dues]
            assert all(entry.citation == due.citation != "" and entry.amount.amount > 0
                       for entry, due in zip(posted, dues, strict=True))

    # Billing again generates nothing.
    facts = _billing_facts()
    for day in billing_days:
        again = _run(day)
        assert again.bills_created == 0 and again.exceptions_count == 0
    result = penalties_assess_due(as_of=assessed_on)
    assert (result.posted, result.corrected) == (0, 0)
    assert _billing_facts() == facts


def test_termination_and_backflow_policy_of_every_preset(installed):
    """Each preset's due process and backflow enforcement load and hold together: every period and step cited;
    a nonpayment ground only where the chapter grants one (what it covers, from when), else the refusal naming the
    relevy; the late charge's base declared; the policy floor installed; the notices, fine and fee codes of
    backflow enforcement present in the fee schedule."""
    from backflow.models import ComplianceNotice
    from backflow.policy import backflow_policy, device_rule
    from billing.ledger.allocation import PRINCIPAL_CATEGORIES
    from billing.models import Fee
    from billing.sections import policy_from
    from ordinance.models import Utility
    from termination.policy import ALL_CATEGORIES, termination_policy

    data = preset_read(code=installed).data
    assert "charges_on" in data["penalty"] or data["penalty"]["scheme"] == "none"
    assert set(PENALTY_SCHEMES.build(data["penalty"]["scheme"], data["penalty"]).charges_on) <= set(
        PRINCIPAL_CATEGORIES)
    assert Utility.objects.get().list_floor == policy_from(data.get("policy", {})).list_floor >= 0
    fee_codes = set(Fee.objects.values_list("code", flat=True))

    policy = termination_policy()
    assert min(policy.notice_min_days, policy.request_days, policy.appeal_days, policy.appeal_notice_min_days) > 0
    for step in ("grounds", "notice", "request", "hearing", "appeal", "restore"):
        assert policy.cite(step), step
    assert {policy.disconnect_fee, policy.restore_fee} - {""} <= fee_codes
    if policy.nonpayment:
        assert policy.trigger.citation and policy.trigger.days > 0
        assert policy.trigger.covers and set(policy.trigger.covers) <= set(ALL_CATEGORIES)
    else:
        assert "relevy" in policy.no_nonpayment and "§ 11-1118" in policy.no_nonpayment
        assert "nonpayment" not in policy.cite("grounds")

    backflow = backflow_policy()
    assert backflow.preset == installed and backflow.citation
    for kind, rule in backflow.notices.items():
        assert rule.citation and rule.days >= 0 and kind in ComplianceNotice.Kind.values, kind
        assert set(rule.methods) <= set(ComplianceNotice.Method.values), kind
    if backflow.fine is not None:
        assert backflow.fine.fee_code in fee_codes and set(backflow.fine.on_kinds) <= set(backflow.notices)
    if backflow.demand is not None:
        assert backflow.demand.fee_code in fee_codes and "demand" in backflow.notices
    assert all(condition.citation for condition in device_rule().conditions())


@pytest.mark.parametrize(("change", "refusal"), [
    (lambda b: b.pop("citation"), "[backflow] needs citation"),
    (lambda b: b["notice"][0].update(counted_from="mailed"),
     "[backflow.notice #1] counted_from = 'mailed' is not one of served, received"),
    (lambda b: b["notice"][0].update(days="thirty"), "[backflow.notice #1] days = 'thirty' is not a whole number"),
    (lambda b: b["device_rule"].update(scheme="by_hand"),
     "[backflow.device_rule] scheme = 'by_hand' is not one of design_criteria, condition_list"),
    (lambda b: b["device_rule"]["condition"][0].update(allowed=["XYZ"]),
     "[backflow.device_rule.condition #1] allowed = a list item 1 ('XYZ') is not one of AG"),
    (lambda b: b["test_frequency"].pop("months"), "[backflow.test_frequency] needs months"),
    (lambda b: b["fine"].update(scheme="per_week"),
     "[backflow.fine] scheme = 'per_week' is not one of per_day_pipe, clerk_per_day"),
])
def test_a_backflow_table_that_breaks_the_contract_is_refused_at_install_and_installs_nothing(
        tmp_path, monkeypatch, change, refusal):
    """A sixth village needs only a file: its [backflow] table is checked when the preset is installed, each
    refusal naming the key, and nothing is installed."""
    from ordinance import install
    from ordinance.files import PresetFile

    data = preset_read(code="washingtonville").data
    change(data["backflow"])
    monkeypatch.setattr(install, "preset_read", lambda **_: PresetFile("sixth_village", "sixth_village.toml", data, ""))
    with pytest.raises(ApplicationError, match=re.escape(refusal)):
        install.preset_install(code="sixth_village")
    assert not Utility.objects.exists()
