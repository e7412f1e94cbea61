"""The admin pages staff use all day, checked by axe-core at WCAG 2.1 A and AA like the portal: every page of the
project's own admin that takes no argument (lists, add forms, the counter, the run start, reports, the back
office, field work), and the pages of an account, a bill, a payment, a billing run and a termination case — each
with its Content-Security-Policy header and no violation of it."""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls.resolvers import URLResolver

from billing.models import Bill, BillingRun, Payment
from billing.services.payments import payment_post
from termination.models import TerminationCase
from tests.browser import DESK, axe_violations, csp_violations, csp_watch, needs_chromium
from tests.portal.conftest import PASSWORD
from tests.termination.steps import delinquent_account, served_case

pytestmark = [pytest.mark.browser, needs_chromium]

OUR_APPS = ("accounts", "meters", "billing", "termination", "backflow", "remittance", "arrears", "office",
            "fieldwork", "core")
NOT_PAGES = ("export.csv", "lookup/", "check-register/", "autocomplete/", "jsi18n/", "logout/", "login/")


def _routes(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)


def admin_pages() -> list[str]:
    """The admin's pages without an argument: the project's own apps' and its own top-level pages."""
    pages = []
    for route in _routes(admin.site.urls[0]):
        if "<" in route or "(" in route or route.endswith(NOT_PAGES):
            continue
        app = route.split("/", 1)[0]
        if "/" not in route.rstrip("/") or app in OUR_APPS:
            pages.append("/admin/" + route)
    return pages


@pytest.mark.long(230)
def test_the_admins_pages_pass_axe_at_wcag_21_aa(live_server, mineola, browser, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    account, bill = delinquent_account()
    number = served_case(account)
    payment_post(account_no=account.account_no, amount=Decimal("10.00"), paid_on=date(2026, 4, 2),
                 reference="CHK-1")
    objects = {"accounts/account": account, "billing/bill": Bill.objects.get(), "billing/payment": Payment.objects.get(),
               "termination/terminationcase": TerminationCase.objects.get(number=number)}
    run = BillingRun.objects.first()
    if run:
        objects["billing/billingrun"] = run
    pages = admin_pages() + [f"/admin/{model}/{obj.pk}/change/" for model, obj in objects.items()]
    assert len(pages) > 80

    get_user_model().objects.create_superuser("boss", "boss@example.org", PASSWORD)
    page = browser.new_context(viewport=DESK).new_page()
    csp_watch(page)
    page.goto(live_server.url + "/admin/login/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    found, refused = {}, []
    for path in pages:
        response = page.goto(live_server.url + path)
        if response.status == 403:  # the add page of a record only a service makes (a bill, a ledger entry)
            refused.append(path)
            continue
        assert response.status == 200, path
        assert "script-src 'self'" in response.headers.get("content-security-policy", ""), path
        problems = {f"csp {n}": (1, f"Content-Security-Policy: {v}") for n, v in enumerate(csp_violations(page))}
        for problem in axe_violations(page):  # one line per rule: how many elements, and the first
            rule = problem.split(" —", 1)[0]
            problems[rule] = (problems.get(rule, (0, problem))[0] + 1, problems.get(rule, (0, problem))[1])
        if problems:
            found[path] = [f"{count} × {first}" for count, first in problems.values()]
    assert len(refused) < len(pages) / 3
    assert not found, "\n".join(f"{path}:\n  " + "\n  ".join(problems) for path, problems in found.items())
