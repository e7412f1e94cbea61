"""What a late charge is charged on: the section's own words, declared by each preset (``[penalty] charges_on``).

One bill of each preset carries water $100.00, a fee $40.00 and a fine $60.00 (dollars worked by hand):

* Mineola § 45.29 E "any water charge or bill": 5% of water and fees = 5% × $140.00 = $7.00; never of the fine.
* Washingtonville § 169-26: interest of 2% of the water rents = 2% × $100.00 = $2.00.
* South Farmingdale § 4.2 "water and service charges": 10% × $140.00 = $14.00.
* Lansing § 141-17 "the delinquent water rent": 15% × $100.00 = $15.00 (not $30.00 of the whole bill).
* Old Westbury: no late charge at all.
"""

import tomllib
from datetime import date, timedelta
from decimal import Decimal

import pytest

from accounts.models import Account
from billing.ledger.allocation import Entry
from billing.ordinance import PENALTY_SCHEMES
from billing.penalties.rules import BillTerms, penalties_owed
from billing.services.charges import charge_add
from core.errors import ApplicationError
from ordinance.files import PRESET_DIR
from ordinance.install import jsonable as _jsonable
from tests.presets.quarterly import accounts, bill, cmd, install, readings, statement

D = Decimal
BILL_DATE, DUE = date(2026, 2, 1), date(2026, 3, 3)
KEY = (BILL_DATE, 1)


def scheme_of(preset: str):
    data = _jsonable(tomllib.loads((PRESET_DIR / f"{preset}.toml").read_text()))
    return PENALTY_SCHEMES.build(data["penalty"]["scheme"], data["penalty"])


def first_charge(preset: str, *, paid: str | None = None):
    entries = [Entry(kind="water", posted_on=BILL_DATE, amount=D("100.00"), bill_key=KEY, entry_id=1),
               Entry(kind="fee", posted_on=BILL_DATE, amount=D("40.00"), bill_key=KEY, entry_id=2),
               Entry(kind="fine", posted_on=BILL_DATE, amount=D("60.00"), bill_key=KEY, entry_id=3)]
    if paid:
        entries.append(Entry(kind="payment", posted_on=BILL_DATE + timedelta(days=5), amount=-D(paid), entry_id=4))
    owed = penalties_owed(entries=entries, bills=[BillTerms(key=KEY, bill_date=BILL_DATE, due_date=DUE)],
                          scheme=scheme_of(preset), through=date(2026, 12, 31))
    return [(p.due.kind, str(p.amount)) for p in owed][:1]


@pytest.mark.parametrize("preset,charges_on,first", [
    pytest.param("mineola", ("water", "fee"), [("penalty", "7.00")], marks=pytest.mark.citation("§ 45.29 E")),
    pytest.param("washingtonville", ("water",), [("interest", "2.00")], marks=pytest.mark.citation("§ 169-26")),
    pytest.param("south_farmingdale", ("water", "fee"), [("penalty", "14.00")], marks=pytest.mark.citation("§ 4.2")),
    pytest.param("lansing", ("water",), [("penalty", "15.00")], marks=pytest.mark.citation("§ 141-17")),
    pytest.param("old_westbury", (), [], marks=pytest.mark.citation("Ch. 210")),
])
def test_each_preset_charges_only_what_its_section_names(preset, charges_on, first):
    assert scheme_of(preset).charges_on == charges_on
    assert first_charge(preset) == first


@pytest.mark.citation("§ 141-17")
def test_a_part_payment_pays_the_water_rent_first_and_only_the_rest_of_it_draws_the_fifteen_percent():
    # $50.00 paid before the due date pays $50.00 of the water rent (principal in the order water, fine, fee): the
    # $50.00 of water rent left unpaid draws 15% = $7.50 (Lansing); Mineola's 5% is of the unpaid water + fee =
    # 5% x ($50.00 + $40.00) = $4.50. Before water rents came first the same payment went to the fee and the fine
    # and Lansing charged 15% of the whole $100.00 rent.
    assert first_charge("lansing", paid="50.00") == [("penalty", "7.50")]
    assert first_charge("mineola", paid="50.00") == [("penalty", "4.50")]


@pytest.mark.citation("§ 141-17")
def test_a_scheme_must_declare_what_it_charges_on():
    with pytest.raises(ApplicationError, match=r"\[penalty\] charges_on: name the charges"):
        PENALTY_SCHEMES.build("one_time", {"percent": "15", "citation": "§ 141-17"})
    with pytest.raises(ApplicationError, match="charges_on: penalty is not a charge a late charge is computed on"):
        PENALTY_SCHEMES.build("one_time", {"percent": "15", "citation": "§ 141-17", "charges_on": ["penalty"]})


@pytest.mark.django_db
@pytest.mark.citation("§ 141-17")
@pytest.mark.citation("§ 141-11 B")
def test_lansing_end_to_end_a_backflow_fine_and_a_fee_on_the_bill_draw_no_penalty(tmp_path):
    """The bill of 2026-02-01: water $137.10 (Lansing's worked example), the § 141-10 D filing fee $50.00 and a
    § 141-11 B fine of $100.00 charged on 2026-01-20. On 2026-03-04 the penalty is 15% of $137.10 = $20.565 →
    $20.57, not 15% of $287.10 = $43.07."""
    install("lansing")
    accounts(tmp_path, ['1-0001,1,one_two_family,Owner 1,"1 Ridge Rd, Lansing, NY 14882",,1 Ridge Rd,37-1-1,'
                        'LA001,5/8,gal,1000000,2025-10-15'], on="2025-10-31")
    readings(tmp_path, ["LA001,2026-01-14,1030000,actual"], on="2026-01-15")
    cmd("charge_fee", "1-0001", "certification_filing", "--date", "2026-01-20")
    charge_add(account=Account.objects.get(account_no="1-0001"), code="backflow_fine", as_of=date(2026, 1, 20),
               actor=None, amount=D("100.00"), kind="fine")
    bill("2026-02-01")
    cmd("assess_penalties", "--date", "2026-03-04", "--no-progress")
    (first,) = statement("1-0001", "2026-03-04")["bills"]
    assert first["total"] == "287.10"
    assert [(c["kind"], c["date"], c["amount"]) for c in statement("1-0001", "2026-03-04")["charges"]] == [
        ("penalty", "2026-03-04", "20.57")]
    assert statement("1-0001", "2026-03-04")["balance"] == "307.67"
