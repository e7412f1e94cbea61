"""The Content-Security-Policy (django-csp): every page is served with it, scripts come only from the site, and no
template or page-building code holds what the policy forbids — an inline script without the request's nonce, an
inline event handler (onclick=…) or a javascript: link. The browser walks (tests/portal/test_accessibility_browser.py,
tests/waterbilling/test_admin_accessibility_browser.py) load every page and find no violation."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from tests.browser import csp_violations, csp_watch, needs_chromium

ROOT = Path(settings.BASE_DIR)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*\bnonce=)[^>]*>", re.IGNORECASE)
HANDLER = re.compile(r"""<[^>]*\son[a-z]+\s*=\s*["']""", re.IGNORECASE)
JAVASCRIPT_URL = re.compile(r"""(href|action|src)\s*=\s*["']\s*javascript:""", re.IGNORECASE)


def _sources():
    for path in sorted(ROOT.rglob("*")):
        parts = path.relative_to(ROOT).parts
        if parts[0] in (".venv", ".git", "tests", "node_modules", "staticfiles") or "static" in parts:
            continue
        if path.suffix in (".html", ".py") and path.is_file():
            yield path


def test_no_template_or_page_code_holds_what_the_policy_forbids():
    found = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        for rule, pattern in (("an inline script without the nonce", INLINE_SCRIPT),
                              ("an inline event handler", HANDLER), ("a javascript: link", JAVASCRIPT_URL)):
            found += [f"{path.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}: {rule}"
                      for m in pattern.finditer(text)]
    assert not found, "\n".join(found)


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/", "/admin/login/", "/pay/"])
def test_every_page_is_served_with_the_policy(client, url, mineola):
    response = client.get(url)
    policy = response.headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["script-src"].startswith("'self'") and "unsafe-inline" not in directives["script-src"]
    assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"


@pytest.mark.django_db
def test_a_signed_in_clerks_page_carries_it_too(admin_client, mineola):
    response = admin_client.get(reverse("admin:index"))
    assert response.status_code == 200 and "script-src 'self'" in response.headers["Content-Security-Policy"]


@pytest.mark.browser
@needs_chromium
def test_the_walks_watcher_sees_a_violation(browser):
    """What the browser walks rely on: a page breaking the policy is seen (here an inline script)."""
    page = browser.new_context().new_page()
    csp_watch(page)
    page.route("http://csp.test/", lambda route: route.fulfill(
        status=200, content_type="text/html", headers={"Content-Security-Policy": "script-src 'self'"},
        body="<title>t</title><script>document.title = 'ran'</script>"))
    page.goto("http://csp.test/")
    assert page.title() != "ran"
    assert any("script-src" in v for v in csp_violations(page))
