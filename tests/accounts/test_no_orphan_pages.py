"""The office runs without a superuser: every admin page and every admin action is open to at least one shipped
role (``accounts.roles``), signed in as that role — never as a superuser. The few pages only a superuser opens are
listed here, each with why."""

import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client, RequestFactory
from django.urls import URLResolver, get_resolver, reverse

from accounts.roles import ROLE_PERMISSIONS, roles_install

pytestmark = pytest.mark.django_db

# Pages for the superuser alone, by app label or model label, with why.
SUPERUSER_ONLY = {
    "auth.user": "staff sign-ins and the groups they are in: who may do what is decided by the superuser",
    "auth.group": "the roles themselves (``accounts.roles`` installs them; a village adds its own)",
    "authtoken": "API keys for other programs, issued by the superuser",
    "axes": "sign-in lockouts, lifted by the superuser",
    "django_celery_beat": "the schedule of the nightly job and the other periodic tasks, set at installation",
}
# Admin pages with no object that are not pages of their own (the sign-in, the scripts).
NOT_PAGES = {"login", "logout", "password_change", "password_change_done", "jsi18n", "autocomplete", "index",
             "view_on_site"}
STANDARD = re.compile(r"_(add|change|delete|history|simple_history)$")


def exempt(label: str) -> bool:
    return label in SUPERUSER_ONLY or label.split(".")[0] in SUPERUSER_ONLY


def role_users() -> dict:
    roles_install()
    users = {}
    for name in ROLE_PERMISSIONS:
        user = get_user_model().objects.create_user(name.lower().replace(" ", "_"), password="x", is_staff=True)
        user.groups.add(Group.objects.get(name=name))
        users[name] = get_user_model().objects.get(pk=user.pk)
    return users


def list_pages() -> list[str]:
    """The admin's own pages that take no object: each model's list and the office's own pages (reports, the
    deposits reconciliation, the case board, the day sheet…)."""
    def walk(patterns, prefix=""):
        for p in patterns:
            if isinstance(p, URLResolver):
                yield from walk(p.url_patterns, prefix + str(p.pattern))
            else:
                yield prefix + str(p.pattern), p.name
    return sorted(name for route, name in walk(get_resolver().url_patterns)
                  if route.startswith("admin/") and name and "<" not in route and name not in NOT_PAGES
                  and not STANDARD.search(name) and not any(name.startswith(f"{app.split('.')[0]}_")
                                                            for app in SUPERUSER_ONLY))


def opens(response) -> bool:
    """The page answered the role: shown, or asking for what it needs (a page that takes a query answers 400
    naming it, or sends the role on to where to give it) — not refused, not sent to sign in."""
    if response.status_code == 302:
        return "/login/" not in response["Location"]
    if response.get("Content-Type", "").startswith("application/json"):  # the counter's look-up: found or not
        return response.status_code in (200, 404)
    return response.status_code in (200, 400)


@pytest.mark.long(30)
def test_every_admin_page_opens_for_some_shipped_role(mineola):
    users = role_users()
    clients = {}
    for name, user in users.items():
        clients[name] = Client()
        clients[name].force_login(user)
    orphans = []
    for name in list_pages():
        url = reverse(f"admin:{name}")
        answers = {role: client.get(url) for role, client in clients.items()}
        if not any(opens(response) for response in answers.values()):
            orphans.append(f"{name} ({', '.join(sorted({str(r.status_code) for r in answers.values()}))})")
    assert orphans == [], "pages no shipped role can open: " + ", ".join(orphans)


def test_every_registered_model_and_action_is_some_roles(mineola):
    users = role_users()
    request_for = {}
    for name, user in users.items():
        request = RequestFactory().get("/admin/")
        request.user = user
        request_for[name] = request
    orphans, orphan_actions = [], []
    for model, model_admin in admin.site._registry.items():
        label = model._meta.label_lower
        if exempt(label):
            continue
        seeing = [role for role, request in request_for.items() if model_admin.has_view_or_change_permission(request)]
        if not seeing:
            orphans.append(label)
            continue
        offered = {action for request in request_for.values() for action in model_admin.get_actions(request)}
        declared = {a if isinstance(a, str) else a.__name__ for a in (model_admin.actions or [])}
        orphan_actions += [f"{label}: {a}" for a in sorted(declared - offered)]
    assert orphans == [], "models no shipped role can see: " + ", ".join(sorted(orphans))
    assert orphan_actions == [], "actions no shipped role is offered: " + ", ".join(orphan_actions)
