import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from accounts import roles
from accounts.roles import ROLE_PERMISSIONS, roles_install
from billing.models import RateSchedule

pytestmark = pytest.mark.django_db

GROUPS = ["Clerk", "Supervisor", "Hearing officer", "Backflow inspector", "Field crew", "Treasurer", "Approver"]


def perms_of(group_name: str) -> set[str]:
    group = Group.objects.get(name=group_name)
    return {f"{p.content_type.app_label}.{p.codename}"
            for p in group.permissions.select_related("content_type")}


def staff_in(group_name: str, username: str = "clerk"):
    user = get_user_model().objects.create_user(username, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=group_name))
    return get_user_model().objects.get(pk=user.pk)  # fresh: no cached permissions


def test_install_creates_the_seven_groups():
    assert roles_install() == GROUPS
    assert sorted(Group.objects.values_list("name", flat=True)) == sorted(GROUPS)


def test_install_is_idempotent_and_restores_the_table():
    roles_install()
    before = {name: perms_of(name) for name in GROUPS}
    clerk = Group.objects.get(name="Clerk")
    clerk.permissions.add(Permission.objects.get(codename="delete_rateschedule"))

    assert roles_install() == GROUPS
    assert Group.objects.count() == len(GROUPS) == 7
    assert {name: perms_of(name) for name in GROUPS} == before


def test_every_permission_named_for_an_installed_model_exists():
    # A typo in the table would otherwise be skipped silently, as if its app were not installed yet.
    roles_install()
    for name, wanted in ROLE_PERMISSIONS.items():
        assert set(wanted) <= perms_of(name), (name, set(wanted) - perms_of(name))


def test_clerk_works_accounts_and_readings_but_not_rates_or_history():
    roles_install()
    clerk = perms_of("Clerk")
    for perm in ("accounts.view_account", "accounts.add_account", "accounts.change_account",
                 "accounts.change_customer", "accounts.add_premises", "accounts.change_ownership",
                 "meters.add_meter", "meters.change_installation", "meters.add_reading",
                 "meters.change_reading", "billing.add_payment", "billing.add_adjustment",
                 "billing.view_bill", "billing.view_billline",
                 "billing.view_ledgerentry", "billing.view_billingrun", "billing.add_billingrun",
                 "billing.view_billingexception", "billing.change_billingexception",
                 "billing.view_rateschedule", "billing.view_fee", "meters.view_historicalreading",
                 "accounts.view_historicalaccount"):
        assert perm in clerk, perm
    for perm in ("billing.change_rateschedule", "billing.delete_rateschedule", "billing.add_rateschedule",
                 "billing.change_fee", "billing.delete_fee", "ordinance.change_utility", "billing.change_bill",
                 "billing.delete_bill", "billing.delete_ledgerentry", "billing.add_ledgerentry",
                 "billing.delete_payment", "meters.delete_reading", "accounts.delete_account",
                 "meters.delete_historicalreading", "meters.change_historicalreading",
                 "accounts.delete_historicalaccount", "accounts.change_historicalaccount"):
        assert perm not in clerk, perm


def test_clerk_keeps_the_termination_file_but_neither_determines_nor_orders_a_shut_off():
    roles_install()
    clerk = perms_of("Clerk")
    for perm in ("termination.view_terminationcase", "termination.add_terminationcase",
                 "termination.change_terminationcase", "termination.view_notice", "termination.add_notice",
                 "termination.change_notice", "termination.view_caseevent", "termination.view_workorder",
                 "termination.view_interruption", "termination.add_interruption"):
        assert perm in clerk, perm
    for perm in ("termination.determine_terminationcase", "termination.order_terminationcase",
                 "termination.delete_terminationcase", "termination.change_caseevent",
                 "termination.delete_caseevent", "termination.add_workorder", "termination.change_workorder"):
        assert perm not in clerk, perm


def test_supervisor_adds_rates_voids_and_deletes_but_never_history():
    roles_install()
    supervisor = perms_of("Supervisor")
    assert perms_of("Clerk") <= supervisor
    for perm in ("billing.change_rateschedule", "billing.change_fee", "ordinance.change_utility",
                 "billing.change_bill", "meters.delete_reading", "termination.order_terminationcase"):
        assert perm in supervisor, perm
    for perm in ("accounts.delete_account", "meters.delete_historicalreading", "accounts.delete_historicalaccount",
                 "billing.delete_bill", "billing.delete_ledgerentry", "billing.delete_payment"):
        assert perm not in supervisor, perm


def test_no_role_may_delete_history_bills_ledger_or_payments():
    roles_install()
    for name in GROUPS:
        for perm in perms_of(name):
            app_model = perm.split(".")[1]
            assert not app_model.startswith("delete_historical"), (name, perm)
            assert app_model not in ("delete_bill", "delete_billline", "delete_ledgerentry",
                                     "delete_payment"), (name, perm)


BACKFLOW_MODELS = ("assessment", "device", "devicetest", "compliancenotice", "tester")


def test_hearing_officer_only_looks_but_determines():
    roles_install()
    officer = perms_of("Hearing officer")
    assert {"accounts.view_account", "accounts.view_customer", "billing.view_bill",
            "billing.view_ledgerentry", "termination.view_terminationcase", "termination.view_notice",
            "termination.view_caseevent", "termination.view_workorder", "termination.view_casebill"} <= officer
    # The hearing officer's one write: the hearing file, the determination and the Commission's decision.
    assert {p for p in officer if not p.split(".")[1].startswith("view_")} == {"termination.determine_terminationcase"}
    assert "termination.order_terminationcase" not in officer
    assert not any(p.startswith("backflow.") for p in officer)


def test_backflow_inspector_keeps_the_backflow_registry_and_only_looks_at_accounts():
    roles_install()
    inspector = perms_of("Backflow inspector")
    assert {"accounts.view_account", "accounts.view_premises", "accounts.view_customer",
            "backflow.view_noticecharge"} <= inspector
    # Exactly these writes: assess premises, register devices and testers, record, accept and reject tests,
    # serve notices, shorten a window and record compliance; record a reverse-flow follow-up done (opened by the
    # meter's flag, never by hand). Never a fine to the bill, never a delete.
    writes = {p for p in inspector if not p.split(".")[1].startswith("view_")}
    assert writes == {f"backflow.{action}_{model}" for action in ("add", "change") for model in BACKFLOW_MODELS} | {
        "backflow.change_reverseflow"}
    assert {f"backflow.view_{model}" for model in BACKFLOW_MODELS} <= inspector
    assert not {p for p in inspector if p.startswith(("billing.", "meters.", "termination."))}
    assert "backflow.charge_compliancenotice" not in inspector


def test_clerk_keeps_the_backflow_registry_and_charges_its_fines():
    roles_install()
    clerk = perms_of("Clerk")
    assert perms_of("Backflow inspector") <= clerk
    assert "backflow.charge_compliancenotice" in clerk and "backflow.charge_compliancenotice" in perms_of("Supervisor")
    assert not any(p.split(".")[1].startswith("delete_") for p in clerk if p.startswith("backflow."))


def test_permissions_of_apps_not_installed_yet_are_skipped(monkeypatch):
    table = dict(ROLE_PERMISSIONS)
    table["Hearing officer"] = [*table["Hearing officer"], "reports.view_report", "reports.change_report"]
    monkeypatch.setattr(roles, "ROLE_PERMISSIONS", table)
    roles_install()
    assert "accounts.view_account" in perms_of("Hearing officer")
    assert not any(p.startswith("reports.") for p in perms_of("Hearing officer"))


def test_clerk_opens_accounts_in_admin_but_cannot_touch_rate_schedules(client):
    roles_install()
    client.force_login(staff_in("Clerk"))
    assert client.get(reverse("admin:accounts_account_changelist")).status_code == 200
    if not admin.site.is_registered(RateSchedule):
        pytest.skip("the rate schedule admin is not registered")
    schedule = RateSchedule.objects.create(effective_on="2024-06-01", citation="§ 45.28 A(1)", rules={})
    change_url = reverse("admin:billing_rateschedule_change", args=[schedule.pk])
    page = client.get(change_url)
    assert page.status_code in (200, 403)
    assert b'name="_save"' not in page.content, "a clerk only looks at a rate schedule"
    assert client.post(change_url, {"citation": "changed"}).status_code == 403
    assert client.get(reverse("admin:billing_rateschedule_add")).status_code == 403
    assert client.get(reverse("admin:billing_rateschedule_delete", args=[schedule.pk])).status_code == 403
    schedule.refresh_from_db()
    assert schedule.citation == "§ 45.28 A(1)"
