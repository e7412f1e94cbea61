"""A preset judged by meaning, not only shape: misspelt keys, impossible values and blocks that could never bill are
refused before anything is installed, each refusal naming its table and key; ``preset_check --bills`` shows what the
rules bill beside the chapter; minimums per dwelling unit and late charges every 30 days bill as the chapter says."""

import copy
import io
import re
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command

from billing.models import Bill, LedgerEntry
from billing.registries import PENALTY_SCHEMES
from core.errors import ApplicationError
from ordinance.docs import DOC
from ordinance.files import PresetFile, preset_read, shipped_presets
from ordinance.install import check_data, preset_install
from ordinance.models import InstalledPreset, Section, Utility
from tests.billing.steps import account_with_meter, read, run

D = Decimal


def walk_through() -> dict:
    import tomllib

    return tomllib.loads(DOC.read_text().split("```toml\n")[-1].split("```")[0])


def _blocks(data):
    return data["rate_schedule"][0]["per_bill"]["other"]["blocks"]


def _minimum(data):
    return data["rate_schedule"][0]["per_bill"]["other"]["minimum"]


# (what the clerk got wrong, the refusal's words: each names its table and key)
MALFORMED = [
    (lambda d: _blocks(d)[0].update(up_to_gallon=_blocks(d)[0].pop("up_to_gallons")),
     "[rate_schedule #1.per_bill.other.blocks #1] up_to_gallon is not a key of this table; known keys: citation, "
     "per_1000, up_to_gallons (did you mean up_to_gallons?)"),
    (lambda d: d["penalty"].update(percnt=d["penalty"].pop("percent")),
     "[penalty] percnt is not a key of this table"),
    (lambda d: d["calendar"].update(monts=d["calendar"].pop("months")), "[calendar] monts is not a key"),
    (lambda d: d["calendar"]["due"].update(days_after_bill=30), "[calendar.due] days_after_bill is not a key"),
    (lambda d: d["termination"].update(apeal_window_days=14), "(did you mean appeal_window_days?)"),
    (lambda d: d["policy"].update(payment_ordr="principal_first"), "[policy] payment_ordr is not a key"),
    (lambda d: d["utility"].update(nmae="x"), "[utility] nmae is not a key"),
    (lambda d: d["rate_schedule"][0].update(efective_on="2025-01-01"), "[rate_schedule #1] efective_on is not a key"),
    (lambda d: _minimum(d).update(allowance=10000), "[rate_schedule #1.per_bill.other.minimum] allowance is not a key"),
    (lambda d: d["rate_schedule"][0]["per_bill"].update(one_two_famly=d["rate_schedule"][0]["per_bill"]["other"]),
     "[rate_schedule #1.per_bill] one_two_famly: is not an account category"),
    (lambda d: _blocks(d)[0].update(per_1000="-4.00"),
     "[rate_schedule #1.per_bill.other.blocks #1] per_1000 = '-4.00' is not a rate in dollars per 1,000 gallons"),
    (lambda d: _blocks(d)[1].update(per_1000="NaN"), "per_1000 = 'NaN' is not a number"),
    (lambda d: _blocks(d)[1].update(per_1000="Infinity"), "per_1000 = 'Infinity' is not a number"),
    (lambda d: _blocks(d)[1].update(per_1000="4000.00"), "per 1,000 gal is a typing slip"),
    (lambda d: _blocks(d)[1].update(per_1000=5.1), 'per_1000 = 5.1 is written without quotes; write it as text, "5.1"'),
    (lambda d: _minimum(d).update(amount="-40.00"), "[rate_schedule #1.per_bill.other.minimum] amount = '-40.00'"),
    (lambda d: _minimum(d).update(amount="40.005"), "amount = '40.005' has more than 2 decimal places"),
    (lambda d: _minimum(d).update(allowance_gallons=-10), "allowance_gallons = -10 is not a whole number of gallons"),
    (lambda d: d["penalty"].update(percent="-10"), "[penalty] percent = '-10' is not a percentage"),
    (lambda d: d["penalty"].update(percent="150"), "[penalty] percent = '150' is not a percentage"),
    (lambda d: d["calendar"].update(months=[1, 4, 7, 13]), "[calendar] months = a list item 4 (13) is not a whole"),
    (lambda d: _blocks(d).insert(0, {"up_to_gallons": 50000, "per_1000": "3.00", "citation": "x"}),
     "[rate_schedule #1.per_bill.other.blocks #2] up_to_gallons = 30,000 is not above the block before (50,000)"),
    (lambda d: _blocks(d).insert(0, {"up_to_gallons": 30000, "per_1000": "3.00", "citation": "x"}),
     "up_to_gallons = 30,000 is not above the block before (30,000)"),
    (lambda d: _blocks(d)[0].update(up_to_gallons=8000),
     "up_to_gallons = 8,000 is not above the minimum's allowance_gallons (10,000)"),
    (lambda d: _blocks(d)[1].update(up_to_gallons=90000), "the last block has no upper bound"),
    (lambda d: _blocks(d)[0].pop("up_to_gallons"), "has no up_to_gallons but is not the last block"),
    (lambda d: d["rate_schedule"].append({**copy.deepcopy(d["rate_schedule"][0]), "effective_on": "2024-06-01"}),
     "[rate_schedule #2] effective_on = 2024-06-01: the rate schedule versions must be written in order"),
    (lambda d: d["termination"].update(notice_min_days_before_hearing="fifteen"),
     "[termination] notice_min_days_before_hearing = 'fifteen' is not a whole number of days"),
    (lambda d: d["penalty"].update(scheme="first_than_monthly"),
     "[penalty] scheme = 'first_than_monthly' is not one of"),
    (lambda d: d["penalty"].update(every_days=30), "[penalty] every_days is not a key of this table"),  # one_time
]


def _install_refused(monkeypatch, data) -> str:
    from ordinance import install

    monkeypatch.setattr(install, "preset_read", lambda **_: PresetFile("springfield", "springfield.toml", data, ""))
    with pytest.raises(ApplicationError) as refused:
        preset_install(path="springfield.toml")
    assert not Utility.objects.exists() and not Section.objects.exists() and not InstalledPreset.objects.exists()
    return str(refused.value)


def test_the_walk_through_preset_is_sound():
    assert check_data(PresetFile("springfield", "springfield.toml", walk_through(), "")) == []


@pytest.mark.django_db
@pytest.mark.parametrize(("change", "refusal"), MALFORMED, ids=[f"bad{n}" for n in range(len(MALFORMED))])
def test_a_malformed_preset_is_refused_naming_table_and_key_and_nothing_is_installed(monkeypatch, change, refusal):
    data = walk_through()
    change(data)
    refusals = check_data(PresetFile("springfield", "springfield.toml", data, ""))
    assert any(refusal in r for r in refusals), refusals
    assert refusal in _install_refused(monkeypatch, data)


def test_every_refusal_is_listed_at_once():
    data = walk_through()
    chosen = [bad for bad in MALFORMED if bad[1].startswith(("[rate_schedule #1.per_bill.other.blocks #1] up_to_gallon",
                                                             "[penalty] percnt", "[policy]", "[termination]"))]
    for change, _ in chosen:
        change(data)
    refusals = check_data(PresetFile("springfield", "springfield.toml", data, ""))
    # The misspelt percent is also a required key missing: five refusals of four mistakes, every one listed.
    assert len(chosen) == 4 and len(refusals) == 5, refusals
    assert any("[penalty] needs percent" in r for r in refusals)
    for _, refusal in chosen:
        assert any(refusal in r for r in refusals), (refusal, refusals)


def _ladder(out: str, title: str) -> dict[int, str]:
    """gallons → the bill's total, of the table whose title starts with ``title``."""
    section = out.split("\n" + title, 1)[1].split("\n\n", 1)[0]
    return {int(g.replace(",", "")): total for g, total in re.findall(r"^\s*([\d,]+) gal\s+(\$[\d,.]+)\s", section,
                                                                       re.M)}


def _bills(code: str) -> str:
    out = io.StringIO()
    call_command("preset_check", code, "--bills", stdout=out)
    return out.getvalue()


# Each figure worked by hand from spec/ORDINANCES.md's rates (the sample schedules where the text has none).
LADDERS = {
    "mineola": ("One- and two-family use, one semiannual bill",
                # $45.00 with 20,000; 20,001–50,000 at $3.10; above at $3.85 (§ 45.28 A(1)).
                {0: "$45.00", 20_000: "$45.00", 21_000: "$48.10", 50_000: "$138.00", 51_000: "$141.85",
                 100_000: "$330.50"}),
    "washingtonville": ("All other uses, one quarterly bill",
                        {0: "$35.00", 10_000: "$35.00", 11_000: "$41.25", 20_000: "$97.50"}),
    "south_farmingdale": ("All other uses, one quarterly bill",
                          {0: "$28.00", 12_000: "$28.00", 13_000: "$30.40", 24_000: "$56.80"}),
    "lansing": ("All other uses, one quarterly bill", {0: "$30.00", 9_000: "$30.00", 10_000: "$35.10",
                                                       20_000: "$86.10"}),
    "old_westbury": ("All other uses, one quarterly bill", {0: "$40.00", 15_000: "$40.00", 16_000: "$44.50",
                                                            30_000: "$107.50"}),
    # The Smithtown Water District's sample schedule (the installation's): $22.00 with 15,000; $1.60 to 60,000; $2.10.
    "smithtown": ("All other uses, one quarterly bill", {0: "$22.00", 15_000: "$22.00", 16_000: "$23.60",
                                                         60_000: "$94.00", 61_000: "$96.10"}),
}
LATE = {
    "mineola": "11 charges, $15.00 in the year",  # 5% then 1% a month for ten months on $100.00 (§ 45.29 E)
    "washingtonville": "12 charges, $27.00 in the year",  # 2% a month × 11 + 5% on Feb 1 (§ 169-26)
    "south_farmingdale": "1 charge, $10.00 in the year",  # 10% once (§ 4.2)
    "lansing": "1 charge, $15.00 in the year",  # 15% once (§ 141-17)
    "old_westbury": "0 charges, $0.00 in the year",  # no late penalty in the text
    "smithtown": "1 charge, $10.00 in the year",  # 10% once after 60 days (Ch. 312)
}


@pytest.mark.parametrize("code", shipped_presets())
def test_preset_check_bills_prints_the_worked_figures(code):
    out = _bills(code)
    title, figures = LADDERS[code]
    ladder = _ladder(out, title)
    assert {g: ladder.get(g) for g in figures} == figures
    assert LATE[code] in out


def test_the_ladder_names_each_lines_citation():
    out = _bills("mineola")
    assert "20,001–50,000 gal: 30,000 gal at $3.10 per 1,000" in out and "§ 45.28 A(1)" in out
    assert re.search(r"^2024-07-02\s+Late payment penalty: 5% \(first month\)\s+\$5\.00\s+§ 45\.29 E$", out, re.M)


@pytest.mark.django_db
def test_the_utility_page_shows_what_the_installed_rules_bill(client):
    from tests.factories import clerk_user

    call_command("setup_utility", "lansing", stdout=io.StringIO())
    client.force_login(clerk_user())
    page = client.get(f"/admin/ordinance/utility/{Utility.objects.get().pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "what the installed rules bill" in text.lower()
    assert "<caption>All other uses, one quarterly bill" in text and "<td class='numeric'>$35.10</td>" in text
    assert "Penalty for past-due water rent: 15%" in text


@pytest.mark.django_db
def test_a_three_unit_building_pays_the_minimum_for_each_unit(tmp_path):
    path = tmp_path / "springfield.toml"
    path.write_text(DOC.read_text().split("```toml\n")[-1].split("```")[0])
    call_command("setup_utility", "--file", str(path), "--date", "2025-01-02", stdout=io.StringIO())
    building, meter = account_with_meter(book=1, category="other", start=date(2024, 12, 15), value=100_000, units=3)
    house, house_meter = account_with_meter(book=1, category="other", start=date(2024, 12, 15), value=100_000)
    read(meter, date(2025, 3, 20), 120_000)
    read(house_meter, date(2025, 3, 20), 120_000)
    read(meter, date(2025, 6, 20), 160_000)
    read(house_meter, date(2025, 6, 20), 160_000)
    run("run_billing", "--date", "2025-04-01")
    run("run_billing", "--date", "2025-07-01")
    april, july = Bill.objects.filter(account=building).order_by("bill_date")
    # 20,000 gal: the minimum of 3 units × $40.00 = $120.00 includes 3 × 10,000 = 30,000 gal (§ 99-11 A).
    assert april.total.amount == D("120.00")
    minimum = april.lines.get(kind="minimum")
    assert minimum.description == "Minimum charge, 3 units × $40.00, includes 30,000 gal"
    assert (minimum.amount.amount, minimum.rate, minimum.citation) == (D("120.00"), D("120.00"), "§ 99-11 A")
    # The paper bill's line reads as the whole charge, never "flat 40.00" beside $120.00.
    from billing.documents.bill import line_views

    assert line_views([minimum])[0].quantity_rate == "flat 120.00"
    # 40,000 gal: $120.00, and 10,000 gal above the 30,000 (past the first block's bound) at $5.50: $55.00.
    assert july.total.amount == D("175.00")
    # One unit, 20,000 gal: $40.00 with 10,000, 10,000 at $4.00 → $80.00; 40,000: 40 + 80 + 10,000 at $5.50 → $175.00.
    house_april, house_july = Bill.objects.filter(account=house).order_by("bill_date")
    assert (house_april.total.amount, house_july.total.amount) == (D("80.00"), D("175.00"))


def test_a_late_charge_every_30_days_or_portion_thereof_through_a_year():
    scheme = PENALTY_SCHEMES.build("first_then_monthly", {
        "first_percent": "1.5", "monthly_percent": "1.5", "every_days": 30, "charges_on": ["water"],
        "citation": "§ 99-12"})
    dues = scheme.dates(bill_date=date(2025, 1, 1), due_date=date(2025, 1, 31), through=date(2025, 12, 31))
    # The first the day after the due date, then every 30 days; Dec 28 begins a period the year ends inside of,
    # and "or portion thereof" charges it whole.
    assert [d.on for d in dues] == [date(2025, 2, 1), date(2025, 3, 3), date(2025, 4, 2), date(2025, 5, 2),
                                    date(2025, 6, 1), date(2025, 7, 1), date(2025, 7, 31), date(2025, 8, 30),
                                    date(2025, 9, 29), date(2025, 10, 29), date(2025, 11, 28), date(2025, 12, 28)]
    assert dues[0].description == "Late payment penalty: 1.5% (first 30-day period)"
    assert dues[11].description == "Late payment penalty: 1.5% (30-day period 12)"


@pytest.mark.django_db
def test_a_30_day_late_charge_is_assessed_through_a_year_on_a_bill_never_paid(tmp_path):
    data = DOC.read_text().split("```toml\n")[-1].split("```")[0]
    data = data.replace('scheme = "one_time"\ncitation = "§ 99-12"\npercent = "10"\n',
                        'scheme = "first_then_monthly"\ncitation = "§ 99-12"\nfirst_percent = "1.5"\n'
                        'monthly_percent = "1.5"\nevery_days = 30\n').replace("days_after_due = 1\n", "")
    path = tmp_path / "springfield.toml"
    path.write_text(data)
    call_command("setup_utility", "--file", str(path), "--date", "2025-01-02", stdout=io.StringIO())
    account, meter = account_with_meter(book=1, category="other", start=date(2024, 12, 15), value=100_000)
    read(meter, date(2024, 12, 20), 115_000)
    run("run_billing", "--date", "2025-01-01")
    bill = Bill.objects.get(account=account)
    assert (bill.total.amount, bill.due_date) == (D("60.00"), date(2025, 1, 31))
    run("assess_penalties", "--date", "2025-12-31")
    charges = list(LedgerEntry.objects.filter(bill=bill, kind="penalty").order_by("posted_on"))
    # 12 charges of 1.5% of $60.00 = $0.90: $10.80 by year end.
    assert len(charges) == 12 and {c.amount.amount for c in charges} == {D("0.90")}
    assert sum(c.amount.amount for c in charges) == D("10.80")
    assert charges[-1].posted_on == date(2025, 12, 28)
    assert "Penalty for late payment: 1.5% (30-day period 12)" in charges[-1].description


def test_the_shipped_presets_are_read_whole():
    for code in shipped_presets():
        assert check_data(preset_read(code=code)) == [], code


def test_a_per_unit_minimum_and_a_30_day_period_read_in_spanish():
    from django.utils import translation

    from billing.documents.words import charge_words, line_words

    with translation.override("es"):
        assert line_words("Minimum charge, 3 units × $40.00, includes 30,000 gal") == \
            "Cargo mínimo, 3 unidades × $40.00, incluye 30,000 gal"
        said = charge_words("penalty", "Penalty for late payment: 1.5% (30-day period 12) on bill 202501-1-0002")
        assert "1.5% (período de 30 días n.º 12)" in said and "202501-1-0002" in said
        assert "(primer período de 30 días)" in charge_words("penalty", "Late payment penalty: 1.5% (first 30-day "
                                                                        "period)")


def test_preset_check_bills_prints_each_districts_own_figures():
    # St. James Water District's own sample schedule: $25.00 with 12,000 gal, then $1.90 per 1,000 (Ch. 312).
    ladder = _ladder(_bills("smithtown"), "St. James Water District (st_james): All other uses, one quarterly bill")
    assert {g: ladder.get(g) for g in (0, 12_000, 13_000, 24_000)} == {
        0: "$25.00", 12_000: "$25.00", 13_000: "$26.90", 24_000: "$47.80"}
    assert "Smithtown Water District (smithtown): billed by the installation's tables above" in _bills("smithtown")
