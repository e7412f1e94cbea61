"""Fees that are more than a number, worked by hand from docs/ordinances.md (Old Westbury, Washingtonville)."""

from datetime import date, datetime
from decimal import Decimal

import pytest

from billing.appointments import Appointment
from billing.fees import fee_in_force, fee_quote, fee_rule
from billing.models import PendingCharge
from billing.services.charges import charge_create
from core.errors import ApplicationError
from tests.factories import AccountFactory

ON = date(2026, 3, 2)


def tap_at(at, *, noticed=None, permit=(date(2026, 3, 1), date(2026, 3, 16))):
    noticed = noticed or datetime(2026, 3, 2, 9, 0)
    return Appointment(at=at, noticed_at=noticed, permit_from=permit[0], permit_until=permit[1])


@pytest.mark.citation("Ch. 210, tap fee schedule")
@pytest.mark.parametrize("size, dollars", [
    ("3/4", "350.00"),     # $350 only
    ("1", "850.00"),       # 350 + 500
    ("1 1/2", "1150.00"),  # 350 + 800
    ("2", "1350.00"),      # 350 + 1,000
    ("4", "1850.00"),      # 350 + 1,500
    ("6", "3850.00"),      # 350 + 3,500
    ("8", "4850.00"),      # 350 + 4,500
])
def test_tap_fee_is_350_plus_the_size_schedule(old_westbury_fees, size, dollars):
    assert fee_quote(fee_in_force(code="tap", on=ON), size=size) == Decimal(dollars)


@pytest.mark.citation("Ch. 210, tap fee schedule")
@pytest.mark.parametrize("size", ["3", "10", "5/8"])
def test_a_size_the_schedule_does_not_list_is_refused_the_board_must_set_it(old_westbury_fees, size):
    with pytest.raises(ApplicationError) as exc:
        fee_quote(fee_in_force(code="tap", on=ON), size=size)
    assert "the Board must set it" in str(exc.value)
    assert f'{size}"' in str(exc.value)
    assert exc.value.errors[0].field == "size"


@pytest.mark.citation("Ch. 210, tap rules")
def test_a_tap_within_the_hours_with_notice_and_a_permit_is_charged_with_its_appointment(old_westbury_fees):
    account = AccountFactory()
    charge = charge_create(account=account, code="tap", size="1 1/2", as_of=ON, actor=None,
                           appointment=tap_at(datetime(2026, 3, 10, 10, 0)))  # a Tuesday, 169 h notice
    assert charge.amount.amount == Decimal("1150.00")
    assert charge.description == 'Tap or service line connection, 1 1/2"'
    assert "Appointment 2026-03-10 10:00" in charge.note


@pytest.mark.citation("Ch. 210, tap rules")
@pytest.mark.parametrize("appointment, field, words", [
    (tap_at(datetime(2026, 3, 14, 10, 0)), "at", "Saturday"),
    (tap_at(datetime(2026, 3, 10, 15, 1)), "at", "15:01 is outside"),
    (tap_at(datetime(2026, 3, 10, 8, 59)), "at", "08:59 is outside"),
    # New York holidays: Lincoln's Birthday (Thursday 2026-02-12) is one, though not a federal holiday.
    (tap_at(datetime(2026, 2, 12, 10, 0), noticed=datetime(2026, 2, 9, 9, 0),
            permit=(date(2026, 2, 9), date(2026, 2, 20))), "at", "Lincoln"),
    (tap_at(datetime(2026, 3, 3, 9, 0), noticed=datetime(2026, 3, 2, 10, 0)), "noticed_at",
     "24 hours' notice (§ 210-17)"),
    (tap_at(datetime(2026, 3, 10, 10, 0), permit=(date(2026, 3, 1), date(2026, 3, 17))), "permit_until",
     "no permit extends beyond 15 days"),
], ids=["saturday", "after-3pm", "before-9am", "ny-holiday", "23h-notice", "16-day-permit"])
def test_a_tap_outside_the_rules_is_refused_naming_the_rule_and_nothing_is_charged(old_westbury_fees, appointment,
                                                                                  field, words):
    account = AccountFactory()
    with pytest.raises(ApplicationError) as exc:
        charge_create(account=account, code="tap", size="1", as_of=ON, actor=None, appointment=appointment)
    assert any(e.field == field and words in e.message for e in exc.value.errors), exc.value.errors
    assert not PendingCharge.objects.exists()


@pytest.mark.citation("Ch. 210, tap rules")
def test_a_tap_at_exactly_nine_and_three_with_exactly_24_hours_notice_is_allowed(old_westbury_fees):
    account = AccountFactory()
    for hour in (9, 15):
        charge_create(account=account, code="tap", size="3/4", as_of=ON, actor=None,
                      appointment=tap_at(datetime(2026, 3, 3, hour, 0), noticed=datetime(2026, 3, 2, hour, 0)))
    assert PendingCharge.objects.count() == 2


@pytest.mark.citation("Ch. 210, tap rules")
def test_a_tap_charged_without_its_appointment_is_refused(old_westbury_fees):
    with pytest.raises(ApplicationError, match="charged with its appointment"):
        charge_create(account=AccountFactory(), code="tap", size="1", as_of=ON, actor=None)
    assert not PendingCharge.objects.exists()


@pytest.mark.citation("§ 210-30 A")
@pytest.mark.parametrize("error, charged", [
    (Decimal("1.5"), True), (Decimal("-1.5"), True), (Decimal("0"), True),
    (Decimal("1.51"), False), (Decimal("-2"), False)])
def test_old_westbury_meter_test_is_25_only_if_accurate(old_westbury_fees, error, charged):
    rule = fee_rule(fee_in_force(code="meter_test", on=ON))
    assert rule.amount == Decimal("25.00")
    outcome = rule.outcome(error)
    assert outcome.charged is charged
    assert outcome.credit_overbilled is False
    assert "§ 210-30 A" in outcome.words


@pytest.mark.citation("§ 169-22")
@pytest.mark.parametrize("error, charged", [
    (Decimal("3.0"), True), (Decimal("2.99"), True), (Decimal("-10"), True),
    (Decimal("3.001"), False), (Decimal("5"), False)])
def test_washingtonville_meter_test_is_20_unless_over_3_percent_fast(washingtonville_fees, error, charged):
    rule = fee_rule(fee_in_force(code="meter_test", on=ON))
    assert rule.amount == Decimal("20.00")
    outcome = rule.outcome(error)
    assert outcome.charged is charged
    assert outcome.credit_overbilled is (not charged)


@pytest.mark.citation("§ 169-4")
def test_the_hydrant_deposit_is_never_charged(washingtonville_fees):
    with pytest.raises(ApplicationError, match="refundable deposit held for the customer, not a charge"):
        charge_create(account=AccountFactory(), code="hydrant_deposit", as_of=ON, actor=None)
    assert not PendingCharge.objects.exists()


@pytest.mark.citation("Ch. 210, tap rules")
def test_the_charge_fee_command_takes_the_taps_appointment(old_westbury_fees):
    import io

    from django.core.management import CommandError, call_command

    account = AccountFactory()
    out = io.StringIO()
    call_command("charge_fee", account.account_no, "tap", "--size", "1 1/2", "--at", "2026-03-10T10:00",
                 "--noticed-at", "2026-03-09T09:00", "--permit-from", "2026-03-01", "--permit-until", "2026-03-16",
                 "--date", "2026-03-02", stdout=out)
    assert "Charged $1,150.00" in out.getvalue()
    with pytest.raises(CommandError, match="Saturday"):
        call_command("charge_fee", account.account_no, "tap", "--size", "1", "--at", "2026-03-14T10:00",
                     "--noticed-at", "2026-03-09T09:00", "--permit-from", "2026-03-01",
                     "--permit-until", "2026-03-16", "--date", "2026-03-02", stdout=io.StringIO())
    assert PendingCharge.objects.count() == 1
