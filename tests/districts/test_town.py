"""A town of two water districts (tests/districts/town.toml; docs/ordinances/districts.md), the dollars worked by
hand. North bills by the installation's tables and a sewer rent of 40% of the water rent; South by its own due date
(30 days), penalty (5%, then 1% a month), rates ($25.00 including 12,000 gal, then $1.90 per 1,000) and a sewer rent
of $2.50 per 1,000 gal for one- and two-family homes, at most the winter quarter's use per day.

Every account reads 0 on 2025-12-31 and is billed on 2026-04-01 for the quarter to its reading of 2026-03-31 (90
days)."""

from datetime import date
from decimal import Decimal as D
from pathlib import Path

import pytest

from accounts.models import Premises
from billing.balances import balances
from billing.districts import days_by_district, gallons_by_days
from billing.models import Bill, LedgerEntry
from billing.services.districts import premises_district_set
from billing.services.penalties import penalties_assess_due
from core.errors import ApplicationError
from ordinance.install import preset_install
from tests.billing.steps import account_with_meter, pay, read, run

TOWN = Path(__file__).with_name("town.toml")
START, END = date(2025, 12, 31), date(2026, 3, 31)

pytestmark = pytest.mark.django_db


@pytest.fixture
def town(db):
    preset_install(path=TOWN)


def resident(district: str | None, gallons: int, *, moved: tuple[date, str] | None = None):
    account, meter = account_with_meter(start=START, value=0)
    if district:
        premises_district_set(premises=account.premises, district=district, effective_on=date(2020, 1, 1))
    if moved:
        premises_district_set(premises=account.premises, district=moved[1], effective_on=moved[0])
    read(meter, END, gallons)
    return account, meter


def lines(bill: Bill) -> list[tuple[str, str, D]]:
    return [(line.kind, line.description, line.amount.amount) for line in bill.lines.order_by("position")]


def entries(account, kind) -> D:
    return sum((e.amount.amount for e in LedgerEntry.objects.filter(account=account, kind=kind)), D(0))


def test_two_districts_billed_the_same_day_under_their_own_rates_due_dates_and_sewer_rents(town):
    north, _ = resident("north", 40_000)
    south, _ = resident("south", 40_000)
    run("run_billing", "--date", "2026-04-01")
    n, s = Bill.objects.get(account=north), Bill.objects.get(account=south)
    # North: $22.00 + 25,000 gal × $1.60/1,000 = $62.00; sewer 40% of $62.00 = $24.80; due in 14 days.
    assert lines(n) == [
        ("minimum", "Minimum charge, includes 15,000 gal", D("22.00")),
        ("consumption", "15,001–60,000 gal: 25,000 gal at $1.60 per 1,000", D("40.00")),
        ("sewer", "Sewer rent, 40% of the water rent $62.00", D("24.80"))]
    assert (n.total.amount, n.due_date, n.district_id) == (D("86.80"), date(2026, 4, 15), "north")
    # South: $25.00 + 28,000 gal × $1.90/1,000 = $78.20; sewer 40,000 gal × $2.50/1,000 = $100.00 (no winter bill
    # yet); due in 30 days.
    assert [amount for _, _, amount in lines(s)] == [D("25.00"), D("53.20"), D("100.00")]
    assert (s.total.amount, s.due_date, s.district_id) == (D("178.20"), date(2026, 5, 1), "south")
    # The water rents and the sewer rents are each their own entry on the ledger.
    assert (entries(north, "water"), entries(north, "sewer")) == (D("62.00"), D("24.80"))
    assert (entries(south, "water"), entries(south, "sewer")) == (D("78.20"), D("100.00"))
    # Never paid: North's 10% falls once on the 61st day (2026-06-01), on water and sewer: $8.68. South's 5% the
    # day after its due date (2026-05-02): $8.91, then 1% each month: $1.78 on 2026-06-02.
    penalties_assess_due(as_of=date(2026, 6, 2))
    assert list(LedgerEntry.objects.filter(account=north, kind="penalty").values_list("posted_on", "amount")) == [
        (date(2026, 6, 1), D("8.68"))]
    assert list(LedgerEntry.objects.filter(account=south, kind="penalty").order_by("posted_on").values_list(
        "posted_on", "amount")) == [(date(2026, 5, 2), D("8.91")), (date(2026, 6, 2), D("1.78"))]


def test_a_premises_in_no_district_bills_by_the_installations_tables(town):
    account, _ = resident(None, 40_000)
    run("run_billing", "--date", "2026-04-01")
    bill = Bill.objects.get(account=account)
    assert (bill.total.amount, bill.due_date, bill.district_id) == (D("62.00"), date(2026, 4, 15), None)


def test_a_premises_moved_mid_period_is_billed_by_the_days_in_each_district(town):
    # In North to 2026-02-14, in South from 2026-02-15: 45 of the 90 days in each; 45,000 gal, 22,500 in each.
    account, _ = resident("north", 45_000, moved=(date(2026, 2, 15), "south"))
    run("run_billing", "--date", "2026-04-01")
    bill = Bill.objects.get(account=account)
    # North's part: minimum $22.00 × 45/90 = $11.00 with 7,500 gal; 15,000 gal × $1.60 = $24.00 (its block ends at
    # 30,000 gal, pro rata); sewer 40% of $35.00 = $14.00. South's part: $25.00 × 45/90 = $12.50 with 6,000 gal;
    # 16,500 gal × $1.90 = $31.35; sewer 22,500 gal × $2.50 = $56.25. In all $149.10, due as South's bills are.
    assert [(kind, amount) for kind, _, amount in lines(bill)] == [
        ("minimum", D("11.00")), ("consumption", D("24.00")), ("sewer", D("14.00")),
        ("minimum", D("12.50")), ("consumption", D("31.35")), ("sewer", D("56.25"))]
    descriptions = [description for _, description, _ in lines(bill)]
    assert descriptions[0].startswith("North Water District: Minimum charge $22.00, pro rata 45/90 days")
    assert descriptions[3].startswith("South Water District: Minimum charge $25.00, pro rata 45/90 days")
    assert (bill.total.amount, bill.due_date, bill.district_id) == (D("149.10"), date(2026, 5, 1), "south")
    assert (entries(account, "water"), entries(account, "sewer")) == (D("78.85"), D("70.25"))


def test_the_winter_quarter_caps_the_sewer_rent_per_1000_gallons(town):
    account, meter = resident("south", 40_000)
    run("run_billing", "--date", "2026-04-01")
    # Summer: 60,000 gal in the 91 days to 2026-06-30. Water $25.00 + 48,000 × $1.90 = $116.20. Sewer at most the
    # winter bill's use per day: 40,000 gal × 91/90 = 40,444 gal (half-up) × $2.50/1,000 = $101.11.
    read(meter, date(2026, 6, 30), 100_000)
    run("run_billing", "--date", "2026-07-01")
    bill = Bill.objects.get(account=account, bill_date=date(2026, 7, 1))
    sewer = bill.lines.get(kind="sewer")
    assert (sewer.quantity, sewer.amount.amount) == (D("40444"), D("101.11"))
    assert sewer.description == ("Sewer rent, 40,444 gal at $2.50 per 1,000 gal (capped at winter use 40,000 gal "
                                 "in 90 days, for 91 days)")
    assert "§ 200-18 B" in sewer.citation
    assert bill.total.amount == D("217.31")


def test_the_winter_cap_leaves_a_smaller_summer_alone_and_other_classes_pay_no_sewer_rent(town):
    account, meter = resident("south", 40_000)
    shop, shop_meter = account_with_meter(start=START, value=0, category="other")
    premises_district_set(premises=shop.premises, district="south", effective_on=date(2020, 1, 1))
    read(shop_meter, END, 40_000)
    run("run_billing", "--date", "2026-04-01")
    read(meter, date(2026, 6, 30), 70_000)  # 30,000 gal: under the winter's 40,444
    run("run_billing", "--date", "2026-07-01")
    sewer = Bill.objects.get(account=account, bill_date=date(2026, 7, 1)).lines.get(kind="sewer")
    assert (sewer.quantity, sewer.amount.amount) == (D("30000"), D("75.00"))
    assert not Bill.objects.get(account=shop).lines.filter(kind="sewer").exists()


def test_a_late_payment_pays_the_water_rent_then_the_sewer_rent(town):
    account, _ = resident("north", 40_000)
    run("run_billing", "--date", "2026-04-01")
    # $70.00 on 2026-05-20, after the due date, before the penalty day: the water rent $62.00, then $8.00 of the
    # sewer rent; the 10% on 2026-06-01 is on the $16.80 of sewer rent unpaid: $1.68.
    pay(account, "70.00", "2026-05-20", "CHK-70")
    penalties_assess_due(as_of=date(2026, 6, 1))
    assert list(LedgerEntry.objects.filter(account=account, kind="penalty").values_list("amount", flat=True)) == [
        D("1.68")]
    (unpaid,) = balances([account.pk], through=date(2026, 6, 1))[account.pk].on_bills().values()
    assert (unpaid.unpaid["water"], unpaid.unpaid["sewer"], unpaid.unpaid["penalty"]) == (
        D("0.00"), D("16.80"), D("1.68"))


def test_a_move_into_a_billed_period_or_an_unknown_district_is_refused(town):
    account, _ = resident("north", 40_000)
    run("run_billing", "--date", "2026-04-01")
    premises = Premises.objects.get(pk=account.premises_id)
    with pytest.raises(ApplicationError, match="inside a period already billed"):
        premises_district_set(premises=premises, district="south", effective_on=date(2026, 3, 1))
    with pytest.raises(ApplicationError, match="known: north, south"):
        premises_district_set(premises=premises, district="east", effective_on=date(2026, 4, 2))


def test_the_days_and_gallons_of_a_period_split_by_district():
    history = [(date(2020, 1, 1), "north"), (date(2026, 2, 15), "south")]
    assert days_by_district(history, START, END) == [("north", 45), ("south", 45)]
    assert days_by_district(history, date(2026, 2, 14), END) == [("south", 45)]
    assert days_by_district([], START, END) == [("", 90)]
    assert gallons_by_days(10_001, [("north", 45), ("south", 45)]) == [5_001, 5_000]
    assert gallons_by_days(100, [("a", 1), ("b", 1), ("c", 1)]) == [34, 33, 33]


def test_each_district_books_in_its_own_fund_and_sewer_rents_in_the_sewer_fund(town):
    from office.journal import journal_entries

    resident("north", 40_000)
    resident("south", 40_000)
    run("run_billing", "--date", "2026-04-01")
    entries_of_day = {entry.district: entry for entry in journal_entries(start=date(2026, 4, 1),
                                                                          end=date(2026, 4, 1))}
    assert set(entries_of_day) == {"north", "south"}

    def lines_of(entry):
        return [(line.account.number, line.debit, line.credit) for line in entry.lines]

    assert lines_of(entries_of_day["north"]) == [
        ("SW1350", D("86.80"), D(0)), ("G391", D("24.80"), D(0)),
        ("SW12140", D(0), D("62.00")), ("SW1630", D(0), D("24.80")), ("G2120", D(0), D("24.80"))]
    assert lines_of(entries_of_day["south"]) == [
        ("SW2350", D("178.20"), D(0)), ("G391", D("100.00"), D(0)),
        ("SW22140", D(0), D("78.20")), ("SW2630", D(0), D("100.00")), ("G2120", D(0), D("100.00"))]
    for entry in entries_of_day.values():
        assert entry.debits == entry.credits
        assert entry.lines[0].entry_id == f"WB-20260401-billing-{entry.district}"


def test_each_district_levies_its_own_unpaid_rents_on_its_own_list(town):
    from reports.catalog import report_build

    north, _ = resident("north", 40_000)
    south, _ = resident("south", 40_000)
    run("run_billing", "--date", "2026-04-01")
    penalties_assess_due(as_of=date(2026, 7, 1))
    lists = {code: report_build(name="relevy", as_of=date(2026, 7, 1), district=code) for code in ("north", "south")}
    assert [(row.account_no, row.charges, row.late_charges) for row in lists["north"].rows] == [
        (north.account_no, D("86.80"), D("8.68"))]
    # South: 5% on 2026-05-02 ($8.91), 1% on 2026-06-02 and 2026-07-02 — the levy date is 2026-07-01: $1.78 once.
    assert [(row.account_no, row.charges, row.late_charges) for row in lists["south"].rows] == [
        (south.account_no, D("178.20"), D("10.69"))]
    assert "North Water District's levy" in lists["north"].lien.list_for
    assert "South Water District's levy" in lists["south"].lien.list_for
    whole = report_build(name="relevy", as_of=date(2026, 7, 1))
    assert whole.total == lists["north"].total + lists["south"].total
    with pytest.raises(ApplicationError, match="not a district of this installation"):
        report_build(name="relevy", as_of=date(2026, 7, 1), district="east")
    register = report_build(name="register", as_of=date(2026, 7, 1), bill_date=date(2026, 4, 1), district="south")
    assert [bill.account_no for bill in register.bills] == [south.account_no]


def test_the_bill_names_its_district_and_charges_late_by_its_districts_rule(town):
    from billing.documents.bill import bill_views

    resident("north", 40_000)
    resident("south", 40_000)
    run("run_billing", "--date", "2026-04-01")
    views = {view.number: view for view in bill_views(bill_ids=Bill.objects.values_list("pk", flat=True))}
    north, south = (views[Bill.objects.get(district_id=code).number] for code in ("north", "south"))
    assert north.utility_header.startswith("North Water District (Town Law art. 12; § 200-2)")
    assert south.utility_header.startswith("South Water District (Town Law art. 12; § 200-3)")
    assert (north.penalty_citation, north.late_on, north.late_total) == ("§ 200-6", "Jun 1, 2026", "$95.48")
    assert (south.penalty_citation, south.late_on, south.late_total) == ("§ 200-16", "May 2, 2026", "$187.11")


def test_the_account_file_puts_each_premises_in_its_district(town, tmp_path):
    from accounts.models import Account, PremisesDistrict
    from core.csvimport import ImportRejected
    from meters.account_imports import accounts_import

    header = ("account_no,book,category,owner_name,owner_address,occupant_name,service_address,sbl,meter_serial,"
              "meter_size,meter_unit,initial_reading,initial_read_date,units,district\n")
    good = tmp_path / "accounts.csv"
    good.write_text(header + "7-001,1,one_two_family,A Owner,1 Elm St,,1 Elm St,1-1-1,T1,5/8,gal,0,2025-12-31,2,north\n"
                    "7-002,1,one_two_family,B Owner,2 Elm St,,2 Elm St,1-1-2,T2,5/8,gal,0,2025-12-31,,south\n")
    accounts_import(file=str(good), as_of=date(2026, 1, 5), actor=None)
    placed = dict(PremisesDistrict.objects.values_list("premises__accounts__account_no", "district__code"))
    assert placed == {"7-001": "north", "7-002": "south"}
    assert Account.objects.get(account_no="7-001").units == 2
    bad = tmp_path / "bad.csv"
    bad.write_text(header + "7-003,1,one_two_family,C Owner,3 Elm St,,3 Elm St,1-1-3,T3,5/8,gal,0,2025-12-31,,east\n"
                   "7-001,1,one_two_family,A Owner,1 Elm St,,1 Elm St,1-1-1,T1,5/8,gal,0,2025-12-31,2,south\n")
    with pytest.raises(ImportRejected) as refused:
        accounts_import(file=str(bad), as_of=date(2026, 1, 5), actor=None)
    messages = {(e.line, e.field): e.message for e in refused.value.errors}
    assert "not a district of this installation (known: north, south)" in messages[(2, "district")]
    assert "by a dated change on the premises" in messages[(3, "district")]
    assert not Account.objects.filter(account_no="7-003").exists()


def test_a_legacy_sewer_balance_comes_over_as_a_sewer_rent_paid_after_the_water(town, tmp_path):
    import io

    from django.core.management import call_command

    account, _ = account_with_meter(start=START, value=0, account_no="9-0001")
    premises_district_set(premises=account.premises, district="north", effective_on=date(2020, 1, 1))
    opening = tmp_path / "open.csv"
    opening.write_text("account_no,bill_no,bill_date,due_date,kind,amount,description\n"
                       "9-0001,L-9,2026-02-01,2026-03-01,water,50.00,Water\n"
                       "9-0001,L-9,2026-02-01,2026-03-01,sewer,20.00,Sewer rent\n")
    call_command("convert", "post", str(opening), "--cutover", "2026-03-15", stdout=io.StringIO())
    assert (entries(account, "water"), entries(account, "sewer")) == (D("50.00"), D("20.00"))
    pay(account, "55.00", "2026-03-20", "CHK-55")
    (bill,) = balances([account.pk], through=date(2026, 3, 20))[account.pk].on_bills().values()
    assert (bill.unpaid["water"], bill.unpaid["sewer"]) == (D("0.00"), D("15.00"))


def test_the_clerk_puts_a_premises_in_a_district_and_a_move_into_a_billed_period_is_refused_on_the_page(town, client):
    from accounts.models import PremisesDistrict
    from accounts.roles import roles_install
    from ordinance.models import District
    from tests.factories import clerk_user

    roles_install()
    account, _ = resident("north", 40_000)
    run("run_billing", "--date", "2026-04-01")
    client.force_login(clerk_user())
    assert client.get("/admin/accounts/premisesdistrict/").status_code == 200
    south = District.objects.get(code="south")
    refused = client.post("/admin/accounts/premisesdistrict/add/", {
        "premises": account.premises_id, "district": south.pk, "effective_on": "2026-03-01", "note": ""})
    assert refused.status_code == 200 and "inside a period already billed" in refused.content.decode()
    moved = client.post("/admin/accounts/premisesdistrict/add/", {
        "premises": account.premises_id, "district": south.pk, "effective_on": "2026-04-02",
        "note": "Town Board resolution 2026-41"})
    assert moved.status_code == 302
    row = PremisesDistrict.objects.get(premises=account.premises, effective_on=date(2026, 4, 2))
    assert (row.district.code, row.note, row.history.get().history_user.username) == (
        "south", "Town Board resolution 2026-41", "clerk")
    # Recorded is recorded: the page shows it, an edit is refused (a later row corrects a wrong one).
    assert client.get(f"/admin/accounts/premisesdistrict/{row.pk}/change/").status_code == 200
    edit = client.post(f"/admin/accounts/premisesdistrict/{row.pk}/change/", {
        "premises": account.premises_id, "district": south.pk, "effective_on": "2026-05-01", "note": ""})
    assert edit.status_code == 403
    assert PremisesDistrict.objects.get(pk=row.pk).effective_on == date(2026, 4, 2)


def test_the_parallel_run_compares_water_and_sewer_and_adds_up_by_district(town, tmp_path):
    from conversion.parallel import parallel_run

    north, _ = resident("north", 40_000)
    south, _ = resident("south", 40_000)
    legacy = tmp_path / "legacy.csv"
    legacy.write_text("account_no,bill_date,kind,amount\n"
                      f"{north.account_no},2026-04-01,water,62.00\n{north.account_no},2026-04-01,sewer,24.80\n"
                      f"{south.account_no},2026-04-01,water,78.20\n{south.account_no},2026-04-01,sewer,95.00\n")
    result = parallel_run(legacy=str(legacy), run_on=date(2026, 4, 1), today=date(2026, 4, 1))
    assert result.by_district() == [
        {"district": "north", "accounts": 1, "identical": 1, "legacy_total": "86.80", "our_total": "86.80",
         "difference": "0.00"},
        {"district": "south", "accounts": 1, "identical": 0, "legacy_total": "173.20", "our_total": "178.20",
         "difference": "5.00"}]
    (different,) = result.not_identical
    assert [(k.kind, k.difference) for k in different.kinds if k.difference] == [("sewer", D("5.00"))]


def test_a_districts_table_is_amended_from_its_day_and_a_district_added_later(town, tmp_path):
    from ordinance.models import District
    from ordinance.selectors import section, section_params

    amended = TOWN.read_text().replace('first_percent = "5"', 'first_percent = "6"') + (
        '\n[[district]]\ncode = "east"\nname = "East Water District"\ncitation = "Town Law art. 12; § 200-20"\n')
    path = tmp_path / "town.toml"
    path.write_text(amended)
    report = preset_install(path=path, effective_on=date(2026, 7, 1))
    assert "[district.south.penalty] in force from 2026-07-01" in report.created
    assert "district east" in report.created
    assert section_params("penalty", date(2026, 6, 30), district="south")["first_percent"] == "5"
    assert section_params("penalty", date(2026, 7, 1), district="south")["first_percent"] == "6"
    # North has no penalty of its own: the installation's, whatever the day.
    assert section("penalty", date(2026, 7, 1), district="north").citation == "§ 200-6"
    assert District.objects.get(code="east").name == "East Water District"
    assert section("penalty", date(2026, 7, 1), district="east").citation == "§ 200-6"


def test_a_preset_whose_district_breaks_the_rules_is_refused_naming_the_district_table_and_key(tmp_path):
    from ordinance.install import preset_check

    broken = TOWN.read_text().replace('per_1000 = "2.50"', 'per_1000 = "-2.50"').replace(
        'first_percent = "5"', 'first_percnt = "5"') + '\n[[district]]\ncode = "north"\nname = "Again"\ncitation = "x"\n'
    path = tmp_path / "broken.toml"
    path.write_text(broken)
    refusals = preset_check(path=path)
    assert any("district.south" in r and "first_percnt" in r and "did you mean first_percent" in r for r in refusals)
    assert any("district.south" in r and "per_1000" in r for r in refusals), refusals
    assert any("code = 'north' names two districts" in r for r in refusals)


def test_the_walk_throughs_second_district_is_a_sound_preset():
    import tomllib

    from ordinance.docs import DOC
    from ordinance.files import PresetFile
    from ordinance.install import check_data

    text = DOC.read_text()
    springfield = tomllib.loads(text.split("```toml\n")[-1].split("```")[0])
    snippet = text.split("8. **A town: a second district.**")[1].split("```")[1]
    district = tomllib.loads("\n".join(line[3:] for line in snippet.splitlines()))
    data = {**springfield, **district}
    assert data["district"][0]["code"] == "east"
    assert check_data(PresetFile("springfield", "springfield.toml", data, "")) == []


def test_the_customer_sees_the_bill_of_their_district_under_its_rules(town, client):
    from accounts.models import PortalLink
    from tests.portal.conftest import customer

    resident("north", 40_000)
    account, _ = resident("south", 40_000)
    run("run_billing", "--date", "2026-04-01")
    user = customer("south@example.org")
    PortalLink.objects.create(user=user, account=account)
    client.force_login(user)
    page = client.get(f"/portal/bills/{Bill.objects.get(account=account).public_id}/").content.decode()
    assert "South Water District" in page and "§ 200-3" in page
    # South's penalty: 5% the day after its 30-day due date, $178.20 → $187.11 if paid after May 1, 2026.
    assert "$187.11" in page and "§ 200-16" in page


def test_preset_check_bills_as_json_gives_each_districts_tables():
    import io
    import json

    from django.core.management import call_command

    out = io.StringIO()
    call_command("preset_check", str(TOWN), "--bills", "--json", stdout=out)
    tables = {table["title"]: table for table in json.loads(out.getvalue())["bills"]}
    north = tables["North Water District (north): All other uses, one quarterly bill — in force from 2024-01-01 "
                   "(§ 200-4)"]
    # 15,000 gal: the $22.00 minimum, and the sewer rent of 40% of it: $8.80.
    assert ["15,000 gal", "$30.80", "Minimum charge, includes 15,000 gal", "$22.00", "§ 200-4 A"] in north["rows"]
    assert ["", "", "Sewer rent, 40% of the water rent $22.00", "$8.80", "§ 200-9"] in north["rows"]


def test_the_old_systems_control_report_is_held_to_the_file_district_by_district(town, tmp_path):
    import io

    from django.core.management import call_command
    from django.core.management.base import CommandError

    north, _ = resident("north", 0)
    south, _ = resident("south", 0)
    opening = tmp_path / "open.csv"
    opening.write_text("account_no,bill_no,bill_date,due_date,kind,amount,description\n"
                       f"{north.account_no},L-1,2026-02-01,2026-03-01,water,50.00,Water\n"
                       f"{north.account_no},L-1,2026-02-01,2026-03-01,sewer,20.00,Sewer rent\n"
                       f"{south.account_no},L-2,2026-02-01,2026-03-01,water,80.00,Water\n")
    control = tmp_path / "control.csv"
    control.write_text("total,value,district\nowed,150.00,\nowed,70.00,north\nsewer,20.00,north\n"
                       "accounts,1,south\nowed,80.00,south\n")
    out = io.StringIO()
    call_command("convert", "check", str(opening), "--control", str(control), stdout=out)
    control.write_text("total,value,district\nowed,150.00,\nowed,75.00,north\nowed,1.00,east\n")
    said = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(opening), "--control", str(control), stdout=said, stderr=said)
    assert "'east' is not a district of this installation" in said.getvalue()
    control.write_text("total,value,district\nowed,150.00,\nowed,75.00,north\n")
    said = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "check", str(opening), "--control", str(control), stdout=said, stderr=said)
    assert "the control report says $75.00 for district north; the file holds $70.00" in said.getvalue()


def test_a_districts_own_fee_is_charged_in_it_and_the_installations_elsewhere(town):
    from billing.fees import fees_in_force
    from billing.services.charges import charge_create

    north, _ = resident("north", 40_000)
    south, _ = resident("south", 40_000)
    assert charge_create(account=north, code="service_charge", as_of=date(2026, 3, 2),
                         actor=None).amount.amount == D("50.00")
    charged = charge_create(account=south, code="service_charge", as_of=date(2026, 3, 2), actor=None)
    assert (charged.amount.amount, charged.citation) == (D("75.00"), "§ 200-19")
    assert [(fee.code, fee.amount.amount) for fee in fees_in_force(on=date(2026, 3, 2), district="south")] == [
        ("service_charge", D("75.00"))]


def test_the_deposits_reconciliation_names_what_each_districts_fund_is_owed_of_the_day(town):
    import io
    import json

    from django.core.management import call_command

    north, _ = resident("north", 40_000)
    south, _ = resident("south", 40_000)
    run("run_billing", "--date", "2026-04-01")
    pay(north, "86.80", "2026-04-10", "CHK-N")
    pay(south, "100.00", "2026-04-10", "CHK-S1")
    pay(south, "78.20", "2026-04-10", "CHK-S2")
    out = io.StringIO()
    call_command("reconcile_deposits", "--date", "2026-04-10", "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["by_district"] == [
        {"district": "North Water District", "payments": 1, "total": "86.80"},
        {"district": "South Water District", "payments": 2, "total": "178.20"}]


def test_another_preset_cannot_replace_a_town_whose_premises_are_in_its_districts(town):
    resident("north", 40_000)
    with pytest.raises(ApplicationError, match="districts have premises in them"):
        preset_install(code="mineola")
