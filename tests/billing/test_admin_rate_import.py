"""OWRS rate files in the admin: upload → check → preview a bill → activate; a refused file saves nothing;
a schedule downloads as OWRS and imports back; an account's rate facts edited as "name = value" lines.

The figures are worked by hand from the file below (RateParser's RESIDENTIAL_SINGLE class):
a 5/8" meter, 20,422 gal = 20,422 / 748.052 = 27.300241… ccf:
  tiers from 0, 15, 21, 26 ccf: 14 ccf × $2.87 = $40.18; 6 × $4.29 = $25.74; 5 × $6.44 = $32.20;
  2.300241… × $10.07 = $23.1634… → $23.16; service charge (5/8") $11.00;
  sewer tiers from 0, 11 ccf: 10 ccf × $2 = $20.00, 17.300241… ccf × $0 = $0.00;
  total 40.18 + 25.74 + 32.20 + 23.16 + 11.00 + 20.00 + 0.00 = $152.28.
27.3 ccf typed instead: 27.3 × 748.052 = 20,421.8196 → 20,422 gal (half-up), the same bill.
"""

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from billing.models import RateSchedule
from core.clock import today
from core.dates import first_of_next_month
from tests.accounts.test_admin import form_data
from tests.factories import AccountFactory

pytestmark = pytest.mark.django_db

OWRS = """\
metadata:
  effective_date: "2027-01-01"
  utility_name: Example Water District
  citation: Resolution 2026-14
rate_structure:
  RESIDENTIAL_SINGLE:
    - service_charge:
        depends_on: [meter_size]
        values: {'5/8"': 11, '1"': 22, '3"': 33}
    - tier_starts: [0, 15, 21, 26]
    - tier_prices: [2.87, 4.29, 6.44, 10.07]
    - commodity_charge: Tiered
    - sewer_tier_starts: [0, 11]
    - sewer_tier_prices: [2, 0]
    - sewer_charge: Tiered
    - bill: commodity_charge + service_charge + sewer_charge
  COMMERCIAL:
    - service_charge: 33
    - commodity_charge: 4.07*usage_ccf
    - bill: commodity_charge + service_charge
"""
CLASS_MAP = "RESIDENTIAL_SINGLE=one_two_family\nCOMMERCIAL=other\nCOMMERCIAL=nonprofit"
IMPORT_URL = "admin:billing_rateschedule_import_owrs"
LINES_20422_GAL = ["$40.18", "$25.74", "$32.20", "$23.16", "$11.00", "$20.00", "$0.00"]


@pytest.fixture
def office(client, mineola):
    client.force_login(get_user_model().objects.create_superuser("boss", "boss@example.org", "pw-for-tests-9"))
    return client


def _staff(client, username: str, group: str):
    user = get_user_model().objects.create_user(username, is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client.force_login(user)
    return client


def _carried(response) -> dict:
    """What step 2 carries to the next POST (the hidden fields), as the browser sends it."""
    carried = response.context["carried"]
    return {name: carried[name].value() or "" for name in carried.fields}


def _check(client, *, text=OWRS, effective_on="2027-01-01", citation="", class_map=CLASS_MAP, upload=True):
    data = {"effective_on": effective_on, "citation": citation, "class_map": class_map, "_check": "1"}
    if upload:
        data["owrs_file"] = SimpleUploadedFile("rates.owrs", text.encode(), content_type="application/yaml")
    else:
        data["owrs_text"] = text
    return client.post(reverse(IMPORT_URL), data)


def _preview(client, checked, **wanted):
    return client.post(reverse(IMPORT_URL), {**_carried(checked), "_preview": "1", "category": "one_two_family",
                                             "meter_size": "5/8", "frequency": "", "gallons": "", "ccf": "",
                                             "cust_class": "", **wanted})


def _errors(response) -> list[str]:
    return [message for errors in response.context["form"].errors.values() for message in errors]


def test_the_list_offers_the_import_and_the_form_proposes_the_first_of_next_month(office):
    listed = office.get(reverse("admin:billing_rateschedule_changelist")).content.decode()
    assert reverse(IMPORT_URL) in listed and "Import an OWRS rate file" in listed

    page = office.get(reverse(IMPORT_URL))
    assert page.status_code == 200
    assert page.context["form"]["effective_on"].value() == first_of_next_month(today())
    html = page.content.decode()
    for category in ("one_two_family", "other", "nonprofit", "@monthly", "@semiannual", "@quarterly"):
        assert category in html


def test_upload_check_preview_and_activate(office):
    before = RateSchedule.objects.count()
    checked = _check(office)
    assert checked.status_code == 200 and checked.context["step"] == 2
    prepared = checked.context["prepared"]
    assert prepared.classes == ["RESIDENTIAL_SINGLE", "COMMERCIAL"]
    assert prepared.citation == "Resolution 2026-14"  # the file's metadata.citation, none typed
    html = checked.content.decode()
    assert "RESIDENTIAL_SINGLE" in html and "COMMERCIAL" in html
    # Which category bills by which class, per frequency the installed (Mineola) calendar bills.
    assert checked.context["frequencies"] == ["semiannual", "monthly"]
    assert [(row["category"], row["classes"]) for row in checked.context["mapping"]] == [
        ("One- and two-family use", ["RESIDENTIAL_SINGLE", "RESIDENTIAL_SINGLE"]),
        ("All other uses", ["COMMERCIAL", "COMMERCIAL"]),
        ("Nonprofit organization", ["COMMERCIAL", "COMMERCIAL"])]
    assert RateSchedule.objects.count() == before  # checking writes nothing

    by_gallons = _preview(office, checked, gallons="20422")
    preview = by_gallons.context["preview"]
    assert "refusal" not in preview, preview.get("refusal")
    assert [line["amount"] for line in preview["lines"]] == LINES_20422_GAL
    assert preview["total"] == "$152.28" and preview["frequency"] == "semiannual"
    assert preview["lines"][4]["citation"] == "Resolution 2026-14"
    assert "$152.28" in by_gallons.content.decode()

    by_ccf = _preview(office, checked, ccf="27.3").context["preview"]
    assert by_ccf["gallons"] == "20,422" and "27.3 ccf = 20,422 gallons" in by_ccf["usage_note"]
    assert [line["amount"] for line in by_ccf["lines"]] == LINES_20422_GAL and by_ccf["total"] == "$152.28"

    # All other uses, 2" (a monthly meter): $33.00 + 27.300241… ccf × $4.07 = 33.00 + 111.11 = $144.11.
    other = _preview(office, checked, category="other", meter_size="2", gallons="20422").context["preview"]
    assert other["frequency"] == "monthly"
    assert [line["amount"] for line in other["lines"]] == ["$111.11", "$33.00"] and other["total"] == "$144.11"
    assert RateSchedule.objects.count() == before

    activated = office.post(reverse(IMPORT_URL), {**_carried(checked), "_activate": "1"})
    schedule = RateSchedule.objects.get(effective_on=date(2027, 1, 1))
    assert activated.status_code == 302
    assert activated.url == reverse("admin:billing_rateschedule_change", args=[schedule.pk])
    assert [str(m) for m in get_messages(activated.wsgi_request)] == [
        "Rate schedule effective 2027-01-01 added; bills dated 2027-01-01 and later are rated by it."]
    assert schedule.rules["structure"] == "owrs" and schedule.citation == "Resolution 2026-14"
    assert not schedule.is_sample
    assert schedule.rules["class_map"] == {"RESIDENTIAL_SINGLE": "one_two_family", "COMMERCIAL": "other, nonprofit"}
    assert RateSchedule.objects.count() == before + 1


def test_a_preview_the_rates_cannot_bill_says_why(office):
    checked = _check(office)
    refused = _preview(office, checked, meter_size="3/4", gallons="1000").context["preview"]
    assert "service_charge" in refused["refusal"] and '3/4"' in refused["refusal"]
    assert "lines" not in refused
    no_usage = _preview(office, checked)
    assert no_usage.context["preview"] is None
    assert no_usage.context["preview_form"].errors["gallons"] == ["give the usage in gallons (or in ccf)"]


def test_a_malformed_file_names_its_line_and_saves_nothing(office):
    before = RateSchedule.objects.count()
    broken = OWRS.replace("    - tier_prices: [2.87, 4.29, 6.44, 10.07]\n",
                          "    - tier_prices: [2.87, 4.29, 6.44, 10.07\n")
    response = _check(office, text=broken)
    assert response.status_code == 200 and response.context["step"] == 1
    errors = response.context["form"].errors["owrs_text"]
    assert len(errors) == 1 and errors[0].startswith("line ")
    # The uploaded file's text comes back in the box, to be corrected there.
    assert response.context["form"]["owrs_text"].value() == broken
    assert RateSchedule.objects.count() == before


def test_a_file_that_is_not_text_is_refused_on_the_file(office):
    data = {"effective_on": "2027-01-01", "citation": "", "class_map": CLASS_MAP, "_check": "1",
            "owrs_file": SimpleUploadedFile("rates.xlsx", b"PK\x03\x04\xff\xfe\x00")}
    response = office.post(reverse(IMPORT_URL), data)
    assert response.context["form"].errors["owrs_file"] == [
        "the file is not UTF-8 text; save it as UTF-8 and upload it again"]
    empty = _check(office, text="", upload=False)
    assert empty.context["form"].errors["owrs_file"] == ["choose an OWRS file, or paste its text below"]


def test_back_to_the_form_keeps_what_was_given(office):
    checked = _check(office, citation="Resolution 2026-15")
    back = office.post(reverse(IMPORT_URL), {**_carried(checked), "_edit": "1"})
    form = back.context["form"]
    assert back.context["step"] == 1 and not form.errors
    assert form["owrs_text"].value() == OWRS and form["citation"].value() == "Resolution 2026-15"
    assert form["class_map"].value() == CLASS_MAP and form["effective_on"].value() == "2027-01-01"


def test_tier_lists_of_different_lengths_are_refused_naming_both(office):
    response = _check(office, text=OWRS.replace("[2.87, 4.29, 6.44, 10.07]", "[2.87, 4.29, 6.44]"), upload=False)
    (error,) = response.context["form"].errors["owrs_text"]
    assert error.startswith("line ") and "tier_starts" in error and "tier_prices" in error
    assert RateSchedule.objects.filter(rules__structure="owrs").count() == 0


def test_a_date_taken_and_a_bad_class_map_are_refused_on_their_fields(office):
    existing = RateSchedule.objects.order_by("effective_on").first()
    taken = _check(office, effective_on=existing.effective_on.isoformat())
    (error,) = taken.context["form"].errors["effective_on"]
    assert str(existing.effective_on) in error and "already" in error

    bad_map = _check(office, class_map="RESIDENTIAL_SINGLE=one_two_family\nCOMMERCIAL=industrial")
    assert any("industrial" in e and "not a category" in e for e in bad_map.context["form"].errors["class_map"])
    unknown_class = _check(office, class_map=CLASS_MAP + "\nIRRIGATION=other@monthly")
    assert any("IRRIGATION" in e for e in unknown_class.context["form"].errors["class_map"])
    no_map = _check(office, class_map="")  # the file carries no map of its own
    assert no_map.context["form"].errors["class_map"]
    assert RateSchedule.objects.filter(rules__structure="owrs").count() == 0


def test_activating_checks_the_text_again(office):
    checked = _check(office)
    tampered = {**_carried(checked), "owrs_text": OWRS.replace("bill: commodity_charge + service_charge\n",
                                                              "bill: commodity_charge + service_fee\n"),
                "_activate": "1"}
    response = office.post(reverse(IMPORT_URL), tampered)
    assert response.status_code == 200 and response.context["step"] == 1
    assert any("service_fee" in e for e in _errors(response))
    assert not RateSchedule.objects.filter(effective_on=date(2027, 1, 1)).exists()


def test_download_gives_the_file_and_it_imports_back(office):
    _check_and_activate(office)
    schedule = RateSchedule.objects.get(effective_on=date(2027, 1, 1))
    response = office.get(reverse("admin:billing_rateschedule_export_owrs", args=[schedule.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/yaml; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="rates-2027-01-01.owrs"'
    text = response.content.decode()
    assert "RESIDENTIAL_SINGLE" in text and "tier_prices" in text
    page = office.get(reverse("admin:billing_rateschedule_change", args=[schedule.pk])).content.decode()
    assert reverse("admin:billing_rateschedule_export_owrs", args=[schedule.pk]) in page
    assert "Download as OWRS" in page

    # Back in with no class map typed: the file carries its own.
    again = _check(office, text=text, effective_on="2027-07-01", class_map="")
    assert again.context["step"] == 2, again.context["form"].errors
    assert again.context["prepared"].class_map == schedule.rules["class_map"]
    preview = _preview(office, again, gallons="20422").context["preview"]
    assert [line["amount"] for line in preview["lines"]] == LINES_20422_GAL and preview["total"] == "$152.28"
    office.post(reverse(IMPORT_URL), {**_carried(again), "_activate": "1"})
    second = RateSchedule.objects.get(effective_on=date(2027, 7, 1))
    assert second.rules["class_map"] == schedule.rules["class_map"] and second.citation == schedule.citation
    assert second.rules["owrs"]["classes"] == schedule.rules["owrs"]["classes"]
    # Downloaded again, the file is the same but for its date.
    text_again = office.get(reverse("admin:billing_rateschedule_export_owrs", args=[second.pk])).content.decode()
    assert text_again != text
    assert text_again.replace("2027-07-01", "2027-01-01") == text


def test_the_presets_schedule_downloads_as_owrs(office):
    mineola = RateSchedule.objects.get(is_sample=True)
    response = office.get(reverse("admin:billing_rateschedule_export_owrs", args=[mineola.pk]))
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="rates-{mineola.effective_on}.owrs"'
    assert "rate_structure" in response.content.decode()


def _check_and_activate(client):
    checked = _check(client)
    client.post(reverse(IMPORT_URL), {**_carried(checked), "_activate": "1"})


def test_a_supervisor_imports_a_clerk_only_reads_and_downloads(client, mineola):
    schedule = RateSchedule.objects.get(is_sample=True)
    _staff(client, "supervisor", "Supervisor")
    assert client.get(reverse(IMPORT_URL)).status_code == 200
    assert "Import an OWRS rate file" in client.get(reverse("admin:billing_rateschedule_changelist")).content.decode()
    checked = _check(client)
    assert checked.context["step"] == 2

    _staff(client, "clerk", "Clerk")
    assert client.get(reverse(IMPORT_URL)).status_code == 403
    assert client.post(reverse(IMPORT_URL), {**_carried(checked), "_activate": "1"}).status_code == 403
    assert "Import an OWRS rate file" not in client.get(
        reverse("admin:billing_rateschedule_changelist")).content.decode()
    download = client.get(reverse("admin:billing_rateschedule_export_owrs", args=[schedule.pk]))
    assert download.status_code == 200
    assert not RateSchedule.objects.filter(rules__structure="owrs").exists()


IRRIGATION = """\
rate_structure:
  RESIDENTIAL_SINGLE:
    - service_charge: 11
    - commodity_charge: 2.87*usage_ccf
    - bill: commodity_charge + service_charge
  IRRIGATION:
    - service_charge:
        depends_on: [meter_size]
        values: {'5/8"': 11, '1"': 22, '3"': 33}
    - et_factor: 0.7
    - outdoor: et_factor * irrigable_area * et_amount * 0.62 * (1/748)
    - budget: outdoor
    - tier_starts: [0, outdoor]
    - tier_prices:
        depends_on: [water_type]
        values: {POTABLE: [4.07, 10.03], RECYCLED: [3.66, 6.33]}
    - commodity_charge: Budget
    - bill: commodity_charge + service_charge
"""


def test_a_class_reading_account_facts_says_who_lacks_them_and_previews_with_them(office):
    AccountFactory(category="other")
    AccountFactory(category="nonprofit")
    AccountFactory(category="other", rate_fields={"water_type": "RECYCLED", "irrigable_area": "4500",
                                                  "et_amount": "4.8"})
    AccountFactory(category="one_two_family")
    checked = _check(office, text=IRRIGATION, citation="Local Law 3 of 2026",
                     class_map="RESIDENTIAL_SINGLE=one_two_family\nIRRIGATION=other, nonprofit")
    assert checked.context["step"] == 2, checked.context["form"].errors
    assert checked.context["needs"] == [{"owrs_class": "RESIDENTIAL_SINGLE", "fields": []},
                                        {"owrs_class": "IRRIGATION",
                                         "fields": ["et_amount", "irrigable_area", "water_type"]}]
    html = " ".join(checked.content.decode().split())
    assert ("2 accounts billed by IRRIGATION lack irrigable_area (irrigable area, square feet): their bills are "
            "refused until it is entered") in html

    # 41 ccf = 30,670.132 → 30,670 gal = 40.99982… ccf; the budget 0.7 × 4,500 × 4.8 × 0.62 / 748 = 12.53… ccf
    # starts tier 2 at 13 ccf (rounded up): 12 ccf × $3.66 = $43.92; 28.99982… ccf × $6.33 = $183.5689 → $183.57;
    # 1" service $22.00; total $249.49 (RateParser's own figure).
    facts = {"fact_water_type": "RECYCLED", "fact_irrigable_area": "4500", "fact_et_amount": "4.8"}
    preview = _preview(office, checked, category="other", meter_size="1", ccf="41", **facts).context["preview"]
    assert preview["gallons"] == "30,670"
    assert [line["amount"] for line in preview["lines"]] == ["$43.92", "$183.57", "$22.00"]
    assert preview["total"] == "$249.49"
    lacking = _preview(office, checked, category="other", meter_size="1", ccf="41").context["preview"]
    assert any(name in lacking["refusal"] for name in ("water_type", "irrigable_area", "et_amount"))


# --- an account's rate facts -------------------------------------------------------------------------------

def test_rate_facts_round_trip_on_the_account_page(office):
    account = AccountFactory(rate_fields={"water_type": "POTABLE", "et_amount": 4.8, "hhsize": 3})
    url = reverse("admin:accounts_account_change", args=[account.pk]) + "?edit=1"
    page = office.get(url)
    assert page.context["adminform"].form["rate_fields"].value() == "et_amount = 4.8\nhhsize = 3\nwater_type = POTABLE"
    assert "Rate facts (general rate structures)" in page.content.decode()

    data = form_data(page)
    data["rate_fields"] = "water_type = RECYCLED\n\nhhsize = 4\n irrigable_area = 4500 \net_amount = .75\n"
    saved = office.post(url, data)
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    account.refresh_from_db()
    assert account.rate_fields == {"water_type": "RECYCLED", "hhsize": "4", "irrigable_area": "4500",
                                   "et_amount": "0.75"}
    again = office.get(url).context["adminform"].form["rate_fields"].value()
    assert again == "et_amount = 0.75\nhhsize = 4\nirrigable_area = 4500\nwater_type = RECYCLED"


def test_an_unknown_rate_fact_is_refused_naming_its_line(office):
    account = AccountFactory(rate_fields={})
    url = reverse("admin:accounts_account_change", args=[account.pk]) + "?edit=1"
    page = office.get(url)
    fieldsets = {name: options for name, options in page.context["adminform"].model_admin.get_fieldsets(
        page.wsgi_request, account)}
    assert fieldsets["Rate facts (general rate structures)"]["classes"] == ("collapse",)  # empty: folded
    data = form_data(page)
    data["rate_fields"] = "hhsize = 3\nhousehold = 4"
    refused = office.post(url, data)
    assert refused.status_code == 200
    (error,) = refused.context["adminform"].form.errors["rate_fields"]
    assert error.startswith("line 2: household is not a rate field an account carries; the fields are: ")
    for name in ("water_type", "hhsize", "irrigable_area", "et_amount", "cust_class"):
        assert name in error
    bad = office.post(url, {**data, "rate_fields": "hhsize 3"})
    assert bad.context["adminform"].form.errors["rate_fields"] == [
        "line 1: 'hhsize 3' is not 'name = value' (e.g. hhsize = 3)"]
    account.refresh_from_db()
    assert account.rate_fields == {}
