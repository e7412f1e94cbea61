from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from accounts.models import Account
from accounts.roles import roles_install
from meters.models import Reading
from tests.factories import (
    AccountFactory,
    CustomerFactory,
    InstallationFactory,
    MeterFactory,
    PremisesFactory,
    ReadingFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def clerk():
    roles_install()
    user = get_user_model().objects.create_user("mclerk", password="x", is_staff=True)
    user.groups.add(Group.objects.get(name="Clerk"))
    return user


@pytest.fixture
def clerk_client(client, clerk):
    client.force_login(clerk)
    return client


@pytest.fixture
def account():
    acct = AccountFactory(
        account_no="4-00321", book=4,
        owner=CustomerFactory(name="Maria Ferreira", mailing_address="1200 Ocean Blvd\nBoca Raton, FL 33432"),
        occupant=CustomerFactory(name="Kevin Walsh"),
        premises=PremisesFactory(service_address="212 Willis Avenue", sbl="9-401-17"),
    )
    AccountFactory(account_no="5-00777", book=5, owner=CustomerFactory(name="Giuseppe Russo"),
                   premises=PremisesFactory(service_address="18 Emory Road", sbl="43-12-3"))
    return acct


def form_data(response) -> dict:
    """The POST data of an admin change form as it was rendered, inlines included."""
    data = {}

    def put(form):
        for name, field in form.fields.items():
            value = form[name].value()
            if isinstance(value, bool):
                if value:
                    data[form.add_prefix(name)] = "on"
                continue
            if isinstance(value, date):
                value = value.isoformat()
            data[form.add_prefix(name)] = "" if value is None else value
            del field

    put(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        for name, value in formset.management_form.initial.items():
            data[formset.management_form.add_prefix(name)] = value
        for form in formset.forms:
            put(form)
    return data


@pytest.mark.parametrize("query", ["Ferreira", "Kevin Walsh", "212 Willis", "9-401-17"])
def test_clerk_finds_an_account_by_owner_occupant_address_or_sbl(clerk_client, account, query):
    response = clerk_client.get(reverse("admin:accounts_account_changelist"), {"q": query})
    assert response.status_code == 200
    found = [a.account_no for a in response.context["cl"].result_list]
    assert found == ["4-00321"]


def test_clerk_opens_an_account_by_its_number(clerk_client, account):
    response = clerk_client.get(reverse("admin:accounts_account_changelist"), {"q": "4-00321"})
    assert response.status_code == 302
    assert response.url == reverse("admin:accounts_account_change", args=[account.pk])


def test_the_account_list_shows_who_and_where(clerk_client, account):
    content = clerk_client.get(reverse("admin:accounts_account_changelist")).content.decode()
    for text in ("4-00321", "Maria Ferreira", "212 Willis Avenue", "One- and two-family use", "Active"):
        assert text in content


def test_the_account_page_shows_meters_and_readings_newest_first(clerk_client, account):
    old_meter = MeterFactory(serial="N00012345", size="5/8")
    InstallationFactory(meter=old_meter, account=account, installed_on=date(2024, 1, 5),
                        removed_on=date(2025, 3, 14))
    new_meter = MeterFactory(serial="S00067890", size="3/4", unit="cf")
    InstallationFactory(meter=new_meter, account=account, installed_on=date(2025, 3, 14))
    ReadingFactory(meter=old_meter, read_on=date(2024, 1, 5), value=1000, source="install")
    ReadingFactory(meter=old_meter, read_on=date(2024, 8, 12), value=61000, source="import")
    ReadingFactory(meter=new_meter, read_on=date(2025, 3, 14), value=0, source="install")
    ReadingFactory(meter=new_meter, read_on=date(2026, 2, 11), value=8123, read_type="estimated",
                   source="estimate")
    # Read after the old meter left this account: it belongs to wherever the meter went next.
    ReadingFactory(meter=old_meter, read_on=date(2025, 9, 9), value=99999)

    content = clerk_client.get(reverse("admin:accounts_account_change", args=[account.pk])).content.decode()

    assert "N00012345" in content and "S00067890" in content
    assert "3/4&quot;" in content and "Cubic feet" in content
    table = content[content.index('class="account-readings"'):]
    dates = ["Feb 11, 2026", "Mar 14, 2025", "Aug 12, 2024", "Jan 5, 2024"]
    assert [table.index(d) for d in dates] == sorted(table.index(d) for d in dates)
    assert "Sep 9, 2025" not in table
    assert "8,123 cf" in table and "Estimated" in table
    assert "Maria Ferreira" in content and "Kevin Walsh" in content and "212 Willis Avenue" in content


def test_editing_an_account_is_recorded_with_user_and_old_and_new_values(clerk_client, clerk, account):
    url = reverse("admin:accounts_account_change", args=[account.pk]) + "?edit=1"
    data = form_data(clerk_client.get(url))
    data["status"] = Account.Status.SHUT_OFF
    response = clerk_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors

    latest = account.history.latest("history_date")
    assert latest.history_user == clerk
    assert latest.status == "shut_off"
    assert [c.field for c in latest.diff_against(latest.prev_record).changes] == ["status"]

    page = clerk_client.get(reverse("admin:accounts_account_history", args=[account.pk]))
    assert page.status_code == 200
    content = page.content.decode()
    assert "mclerk" in content
    assert "Status:" in content and "Active" in content and "Shut off" in content


def test_a_clerk_views_history_but_cannot_delete_it_or_the_account(clerk_client, clerk, account):
    assert clerk_client.get(reverse("admin:accounts_account_history", args=[account.pk])).status_code == 200
    clerk = get_user_model().objects.get(pk=clerk.pk)
    assert clerk.has_perm("accounts.view_historicalaccount")
    assert not clerk.has_perm("accounts.delete_historicalaccount")
    assert not clerk.has_perm("meters.delete_historicalreading")
    assert clerk_client.get(reverse("admin:accounts_account_delete", args=[account.pk])).status_code == 403
    assert clerk_client.post(reverse("admin:accounts_account_delete", args=[account.pk]),
                             {"post": "yes"}).status_code == 403
    assert Account.objects.filter(pk=account.pk).exists()
    assert account.history.exists()


def test_a_reading_entered_in_the_admin_records_who_entered_it(clerk_client, clerk):
    meter = MeterFactory(serial="B00000042")
    InstallationFactory(meter=meter, installed_on=date(2026, 1, 2))  # a meter takes readings while installed
    response = clerk_client.post(reverse("admin:meters_reading_add"), {
        "meter": meter.pk, "read_on": "2026-07-14", "value": "123456", "read_type": "actual",
        "source": "manual", "note": ""})
    assert response.status_code == 302
    reading = Reading.objects.get(meter=meter)
    assert reading.entered_by == clerk
    assert reading.history.get().history_user == clerk

    response = clerk_client.get(reverse("admin:meters_reading_changelist"), {"q": "B00000042"})
    assert list(response.context["cl"].result_list) == [reading]


def test_readings_are_searchable_by_account_number(clerk_client, account):
    meter = MeterFactory()
    InstallationFactory(meter=meter, account=account)
    reading = ReadingFactory(meter=meter, read_on=date(2026, 1, 12), value=5)
    response = clerk_client.get(reverse("admin:meters_reading_changelist"), {"q": "4-00321"})
    assert list(response.context["cl"].result_list) == [reading]


def test_the_meter_page_lists_installations_and_readings_newest_first(clerk_client, account):
    meter = MeterFactory(serial="I00000777", size="2")
    InstallationFactory(meter=meter, account=account, installed_on=date(2025, 6, 2))
    for day in (date(2025, 6, 2), date(2025, 8, 13), date(2025, 7, 14)):
        ReadingFactory(meter=meter, read_on=day, value=day.toordinal())
    response = clerk_client.get(reverse("admin:meters_meter_change", args=[meter.pk]))
    assert response.status_code == 200
    inlines = {i.formset.model.__name__: i.formset for i in response.context["inline_admin_formsets"]}
    assert [f.instance.read_on for f in inlines["Reading"].forms] == [date(2025, 8, 13), date(2025, 7, 14),
                                                                      date(2025, 6, 2)]
    assert [f.instance.account for f in inlines["Installation"].forms] == [account]


def test_the_admin_is_headed_with_the_utility_name(admin_client, mineola):
    content = admin_client.get(reverse("admin:index")).content.decode()
    assert "Village of Mineola Water Department" in content


def test_without_a_preset_the_admin_says_waterbilling(admin_client):
    assert "waterbilling" in admin_client.get(reverse("admin:index")).content.decode()


def test_every_accounts_and_meters_model_is_in_the_admin(admin_client, account):
    for name in ("accounts_account", "accounts_customer", "accounts_premises", "accounts_ownership",
                 "accounts_portallink", "meters_meter", "meters_installation", "meters_reading"):
        assert admin_client.get(reverse(f"admin:{name}_changelist")).status_code == 200, name
    for name, obj in (("accounts_customer", account.owner), ("accounts_premises", account.premises)):
        assert admin_client.get(reverse(f"admin:{name}_history", args=[obj.pk])).status_code == 200


def test_account_page_shows_balance_bills_and_payments(admin_client, mineola):
    from tests.billing.steps import account_with_meter, pay, read, run

    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    pay(account, "100.00", "2026-02-20", "CHK-77")
    html = admin_client.get(reverse("admin:accounts_account_change", args=[account.pk])).content.decode()
    assert "$86.13" in html and "$186.13" in html and "62,500" in html
    assert "Payment CHK-77" in html and "−$100.00" in html


def test_an_account_number_with_a_control_character_is_refused(clerk_client, account):
    # The number is typed once, when the account is added; it is read-only after that.
    url = reverse("admin:accounts_account_add")
    data = form_data(clerk_client.get(url))
    data.update({"account_no": "4-00\n999", "book": "4", "category": "one_two_family", "status": "active",
                 "premises": str(account.premises.pk), "owner": str(account.owner.pk)})
    response = clerk_client.post(url, data)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {
        "account_no": ["contains a control character (U+000A, a line break) at character 5; type the value again "
                       "without it"]}
    assert not Account.objects.filter(account_no__startswith="4-00\n").exists()
