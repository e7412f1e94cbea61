"""Washingtonville's hydrant deposit (§ 169-4), meter tests (§ 169-22, § 210-30 A), a failed meter's
estimate and a change-out billed in one period; dollars worked by hand."""

from datetime import date
from decimal import Decimal

import pytest
from django.test import Client

from accounts.models import Account
from billing.models import Adjustment, Bill, Deposit, LedgerEntry, PendingCharge
from billing.selectors import account_amounts_due, account_deposits
from billing.services.deposits import deposit_receive, deposit_refund
from billing.services.meter_tests import meter_test_settle
from core.errors import ApplicationError
from meters.models import Installation, Reading
from meters.services import meter_test_request, meter_test_result_record
from tests.billing.steps import account_with_meter, read, run, statement


def bill_february(account, meter, *, gallons=40_000):
    """Installed 2025-10-10 at 0, read 2026-01-15: the bill dated 2026-02-01 (quarterly, one book)."""
    read(meter, "2026-01-15", gallons)
    run("run_billing", "--date", "2026-02-01")
    return Bill.objects.get(account=account, bill_date=date(2026, 2, 1))


def wv_account():
    return account_with_meter(category=Account.Category.OTHER, start=date(2025, 10, 10), value=0)


@pytest.mark.citation("§ 169-4")
def test_the_hydrant_deposit_is_held_apart_draws_no_penalty_and_is_refunded_without_interest(washingtonville_fees):
    account, meter = wv_account()
    bill = bill_february(account, meter)
    # $35.00 minimum with 10,000 gal + 30,000 gal × $6.25/1,000 = $187.50 → $222.50, due 2026-03-03.
    assert bill.total.amount == Decimal("222.50")
    deposit = deposit_receive(account=account, received_on=date(2026, 2, 5), actor=None, reference="CC-1001")
    assert deposit.amount.amount == Decimal("250.00") and deposit.citation == "§ 169-4"
    # The deposit is not a payment: the bill is still unpaid and the one-time 5% falls on its $222.50 only.
    run("assess_penalties", "--date", "2026-03-04")
    penalty = LedgerEntry.objects.get(account=account, kind="penalty")
    assert penalty.amount.amount == Decimal("11.13")  # 5% × 222.50 = 11.125, half-up
    data = statement(account.account_no, "2026-03-05")
    assert data["balance"] == "233.63"  # 222.50 + 11.13; the deposit held does not reduce it
    assert [c for c in data["charges"] if c["kind"] == "deposit"] == [
        {"kind": "deposit", "date": "2026-02-05", "amount": "-250.00", "citation": "§ 169-4",
         "description": "Deposit, temporary metered service from a fire hydrant: held, refundable", "bill": None}]
    assert account_amounts_due(account_ids=[account.id], as_of=date(2026, 3, 5))[account.id].amount == \
        Decimal("233.63")

    with pytest.raises(ApplicationError) as exc:
        deposit_refund(deposit=deposit, refunded_on=date(2026, 2, 1), note="", actor=None)
    assert {e.field for e in exc.value.errors} == {"refunded_on", "note"}
    assert Deposit.objects.get().refunded_on is None

    deposit_refund(deposit=deposit, refunded_on=date(2026, 4, 1), note="Hydrant meter returned undamaged", actor=None)
    rows = list(LedgerEntry.objects.filter(account=account, kind__in=["deposit", "deposit_refund"])
                .order_by("posted_on").values_list("kind", "amount", "source"))
    assert rows == [("deposit", Decimal("-250.00"), f"deposit:{deposit.pk}"),
                    ("deposit_refund", Decimal("250.00"), f"deposit:{deposit.pk}")]
    after = statement(account.account_no, "2026-04-02")
    assert after["balance"] == "233.63"  # refunded without interest; the bill and its penalty still owed
    assert [(c["kind"], c["amount"]) for c in after["charges"] if c["kind"].startswith("deposit")] == [
        ("deposit", "-250.00"), ("deposit_refund", "250.00")]
    assert account_deposits(account=account, as_of=date(2026, 4, 2))[0]["status"] == "refunded"
    assert account_deposits(account=account, as_of=date(2026, 3, 31))[0]["status"] == "held"
    with pytest.raises(ApplicationError, match="was refunded on 2026-04-01"):
        deposit_refund(deposit=deposit, refunded_on=date(2026, 4, 2), note="again", actor=None)


@pytest.mark.citation("§ 169-4")
def test_the_portal_shows_the_deposit_apart_from_the_balance(washingtonville_fees):
    from django.contrib.auth import get_user_model
    from django.urls import reverse

    from accounts.models import PortalLink

    account, _ = wv_account()
    deposit_receive(account=account, received_on=date(2026, 2, 5), actor=None)
    user = get_user_model().objects.create_user("owner", password="x-long-password-1")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user)
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id}))
    assert page.status_code == 200
    text = page.content.decode()
    assert "Deposits" in text and "Held now: $250.00" in text and ">Held<" in text
    assert "Penalties, fees and adjustments" not in text  # the deposit is not listed as a charge


@pytest.mark.citation("§ 169-22")
def test_a_meter_registering_exactly_3_percent_fast_is_charged_20_on_the_next_bill(washingtonville_fees):
    account, meter = wv_account()
    bill_february(account, meter)
    test = meter_test_request(meter=meter, requested_on=date(2026, 2, 3), actor=None)
    meter_test_result_record(test=test, tested_on=date(2026, 2, 10), actual_gallons=Decimal("100"),
                             registered_gallons=Decimal("103"), actor=None)
    settled = meter_test_settle(test=test, as_of=date(2026, 2, 10), actor=None)
    assert settled.charge.amount.amount == Decimal("20.00") and settled.charge.citation == "§ 169-22"
    assert settled.credits == []
    assert "registers 3% more than passes, not over 3%" in settled.words
    # The charge goes on the next bill (2026-05-01) as a fee line.
    read(meter, "2026-04-15", 50_000)
    run("run_billing", "--date", "2026-05-01")
    may = Bill.objects.get(account=account, bill_date=date(2026, 5, 1))
    assert [(line.kind, line.amount.amount) for line in may.lines.all()][-1] == ("fee", Decimal("20.00"))
    # $35.00 (10,000 gal allowance covers the 10,000 gal) + $20.00 test fee.
    assert may.total.amount == Decimal("55.00")
    with pytest.raises(ApplicationError, match="settled on 2026-02-10"):
        meter_test_settle(test=test, as_of=date(2026, 2, 11), actor=None)
    assert PendingCharge.objects.count() == 1


@pytest.mark.citation("§ 169-22")
def test_a_meter_over_3_percent_fast_costs_nothing_and_the_overbilled_water_is_credited(washingtonville_fees):
    account, meter = wv_account()
    bill = bill_february(account, meter)
    test = meter_test_request(meter=meter, requested_on=date(2026, 2, 3), actor=None)
    meter_test_result_record(test=test, tested_on=date(2026, 2, 10), actual_gallons=Decimal("100"),
                             registered_gallons=Decimal("105"), actor=None)
    settled = meter_test_settle(test=test, as_of=date(2026, 2, 10), actor=None)
    assert settled.charge is None
    # 40,000 gal registered 5% fast: 40,000 × 100/105 = 38,095.24 → 38,095 gal passed. Rated again:
    # $35.00 + 28,095 × $6.25/1,000 = $175.59 (175.59375) → $210.59; billed $222.50 → credit $11.91.
    credit = Adjustment.objects.get()
    assert (credit.kind, credit.amount.amount, credit.bill_id) == ("credit", Decimal("11.91"), bill.pk)
    assert "1,905 gal overbilled" in credit.description and "§ 169-22" in credit.description
    assert statement(account.account_no, "2026-02-11")["balance"] == "210.59"
    test.refresh_from_db()
    assert test.settled_on == date(2026, 2, 10) and "no charge for the test" in test.outcome
    assert not PendingCharge.objects.exists()


@pytest.mark.citation("§ 210-30 A")
def test_old_westbury_meter_test_charged_25_when_accurate_and_nothing_when_not(old_westbury_fees):
    account, meter = account_with_meter(category=Account.Category.OTHER, start=date(2025, 10, 10), value=0)
    accurate = meter_test_request(meter=meter, requested_on=date(2026, 2, 3), actor=None)
    meter_test_result_record(test=accurate, tested_on=date(2026, 2, 4), actual_gallons=Decimal("100"),
                             registered_gallons=Decimal("101.5"), actor=None)
    assert meter_test_settle(test=accurate, as_of=date(2026, 2, 4), actor=None).charge.amount.amount == \
        Decimal("25.00")
    inaccurate = meter_test_request(meter=meter, requested_on=date(2026, 2, 5), actor=None)
    meter_test_result_record(test=inaccurate, tested_on=date(2026, 2, 6), actual_gallons=Decimal("100"),
                             registered_gallons=Decimal("97.9"), actor=None)
    settled = meter_test_settle(test=inaccurate, as_of=date(2026, 2, 6), actor=None)
    assert settled.charge is None and settled.credits == []
    assert "inaccurate" in settled.words
    assert PendingCharge.objects.count() == 1 and not Adjustment.objects.exists()


def test_an_untested_meter_test_is_not_settled_and_changes_nothing(washingtonville_fees):
    account, meter = wv_account()
    test = meter_test_request(meter=meter, requested_on=date(2026, 2, 3), actor=None)
    with pytest.raises(ApplicationError, match="not been tested"):
        meter_test_settle(test=test, as_of=date(2026, 2, 4), actor=None)
    test.refresh_from_db()
    assert test.settled_on is None and not PendingCharge.objects.exists()


@pytest.mark.citation("§ 169-22")
def test_a_change_out_bills_the_old_meters_final_read_and_the_new_meters_first_in_one_period(washingtonville_fees):
    from tests.factories import InstallationFactory, MeterFactory

    account, old = wv_account()
    bill_february(account, old, gallons=20_000)
    Installation.objects.filter(meter=old).update(removed_on=date(2026, 3, 15))
    read(old, "2026-03-15", 26_000, read_type="final")
    new = MeterFactory()
    InstallationFactory(meter=new, account=account, installed_on=date(2026, 3, 15))
    Reading.objects.create(meter=new, read_on=date(2026, 3, 15), value=0, source="install")
    read(new, "2026-04-20", 9_000)
    run("run_billing", "--date", "2026-05-01")
    may = Bill.objects.get(account=account, bill_date=date(2026, 5, 1))
    # Old meter 20,000 → 26,000 (6,000 gal) + new meter 0 → 9,000 (9,000 gal) = 15,000 gal:
    # $35.00 with 10,000 gal + 5,000 × $6.25/1,000 = $31.25 → $66.25.
    assert may.gallons == 15_000
    assert may.total.amount == Decimal("66.25")
    assert (may.period_start, may.period_end) == (date(2026, 1, 15), date(2026, 4, 20))
    assert may.end_reading.meter_id == new.pk
