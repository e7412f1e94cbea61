"""Washingtonville § 169-23: water shut off and turned on for a vacancy ($25 each), and no deduction for a
vacancy shorter than three months; dollars worked by hand."""

from decimal import Decimal

import pytest
from django.core.management.base import CommandError

from billing.models import Adjustment
from tests.presets.quarterly import accounts, bill, cmd, install, lines, readings, statement

pytestmark = pytest.mark.django_db

ACCOUNTS = ["1-0001,1,one_two_family,Rose Kelly,\"3 Main St, Washingtonville, NY 10992\",,3 Main St,101-1-1,"
            "WV0001,5/8,gal,500000,2025-10-15"]
# Vacant from the installation read: the meter has not moved by the January reading.
READINGS = ["WV0001,2026-01-14,500000,actual"]


@pytest.fixture
def vacant(db, tmp_path):
    install("washingtonville")
    accounts(tmp_path, ACCOUNTS, on="2025-10-31")
    cmd("charge_fee", "1-0001", "vacancy_shut_off", "--date", "2025-10-15")
    readings(tmp_path, READINGS, on="2026-01-31")
    bill("2026-02-01")


@pytest.mark.citation("§ 169-23")
def test_the_shut_off_fee_and_the_minimum_are_billed(vacant):
    (february,) = statement("1-0001", "2026-02-01")["bills"]
    # No water passed: the quarterly minimum $35.00 (10,000 gal allowance unused), and the shut-off $25.00.
    assert lines(february) == [("minimum", "10000", "35.00", "35.00", "§§ 169-25, 169-26"),
                               ("fee", "1", "25.00", "25.00", "§ 169-23")]
    assert february["total"] == "60.00"


@pytest.mark.citation("§ 169-23")
def test_no_deduction_for_a_vacancy_under_three_months(vacant):
    # 2025-10-15 + 3 months = 2026-01-15: a vacancy ending 2026-01-14 is a day short.
    with pytest.raises(CommandError) as refused:
        cmd("vacancy_deduction", "1-0001", "--from", "2025-10-15", "--until", "2026-01-14", "--date", "2026-02-10")
    assert "less than 3 months" in str(refused.value) and "§ 169-23" in str(refused.value)
    assert "2026-01-15" in str(refused.value)
    assert not Adjustment.objects.exists()


@pytest.mark.citation("§ 169-23")
def test_a_vacancy_of_three_months_deducts_the_minimum_of_the_bill_it_covers(vacant):
    out = cmd("vacancy_deduction", "1-0001", "--from", "2025-10-15", "--until", "2026-01-20", "--date", "2026-02-10")
    assert "$35.00 credited" in out
    credit = Adjustment.objects.get()
    assert (credit.kind, credit.amount.amount) == ("credit", Decimal("35.00"))
    # $60.00 billed − $35.00 deducted: the shut-off fee is still owed.
    assert statement("1-0001", "2026-02-10")["balance"] == "25.00"
