"""The portal at WCAG 2.1 AA (ADA Title II): axe-core, run in Debian's chromium, finds no violation at the A and AA
levels on any portal page, including each form showing its errors; the pages work at a 375-px phone's width and
at 200% zoom without scrolling sideways; each is served with its Content-Security-Policy and breaks none of it.

Every page a customer or a backflow tester can reach is visited: the welcome, sign-in, sign-up and password reset
pages, paying a bill without signing in, the accounts, an account with a termination case, a bill, the case and
its written hearing request, paying online, autopay, and the tester's pages.
"""

from datetime import date

import pytest

from accounts.models import PortalLink
from core import clock
from tests.browser import DESK, axe_violations, csp_violations, csp_watch, needs_chromium
from tests.remittance.conftest import standin  # noqa: F401 - the payment processor's stand-in, a fixture
from tests.termination.steps import delinquent_account, served_case

from .conftest import PASSWORD, customer
from .test_tester_portal import login_tester

pytestmark = [pytest.mark.browser, needs_chromium]

PHONE_375 = {"width": 375, "height": 740}
ZOOM_200 = {"width": 640, "height": 450}  # a 1280 × 900 screen at 200% zoom: half the CSS pixels


@pytest.fixture
def portal(live_server, mineola, settings, tmp_path, monkeypatch, standin):  # noqa: F811
    """Dora's account with the worked example's termination case served (the request window open on
    2026-04-10), Dora a signed-up customer, and Pat a backflow tester."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SITE_URL = live_server.url
    monkeypatch.setattr(clock, "today", lambda: date(2026, 4, 10))
    account, bill = delinquent_account()
    number = served_case(account)
    PortalLink.objects.create(user=customer("dora@example.org"), account=account)
    login_tester("pat@example.org", "NY-4471")
    return {"url": live_server.url, "account": account, "bill": bill, "number": number}


class Walk:
    """A browser tab that checks every page it reaches with axe, and at the two narrow widths."""

    def __init__(self, browser, base: str):
        self.page = browser.new_context(viewport=DESK).new_page()
        csp_watch(self.page)
        self.base = base
        self.found: dict[str, list[str]] = {}

    def check(self, name: str) -> None:
        page = self.page
        page.wait_for_load_state()
        problems = axe_violations(page) + [f"Content-Security-Policy: {v}" for v in csp_violations(page)]
        for size in (PHONE_375, ZOOM_200):
            page.set_viewport_size(size)
            wide = page.evaluate("document.documentElement.scrollWidth")
            if wide > size["width"]:
                problems.append(f"scrolls sideways at {size['width']} px ({wide} px wide)")
            # A table that needs scrolling inside its box at this width: the customer cannot see it whole.
            clipped = page.evaluate("[...document.querySelectorAll('.table-wrap')].filter("
                                    "w => w.scrollWidth > w.clientWidth + 1).map(w => w.getAttribute("
                                    "'aria-labelledby'))")
            if clipped and size is PHONE_375:
                problems.append(f"tables clipped at {size['width']} px: {clipped}")
            if size is PHONE_375:  # axe at the phone's width too (a scroll box must take the keyboard's focus)
                problems += [f"at 375 px: {v}" for v in axe_violations(page)]
        page.set_viewport_size(DESK)
        if problems:
            self.found[f"{name} ({page.url.removeprefix(self.base)})"] = problems

    def go(self, name: str, path: str) -> None:
        response = self.page.goto(self.base + path)
        assert "script-src 'self'" in response.headers.get("content-security-policy", ""), path
        self.check(name)

    def submit(self, name: str, button: str) -> None:
        self.page.get_by_role("button", name=button).click()
        self.check(name)


@pytest.mark.long(40)
def test_every_portal_page_passes_axe_at_wcag_21_aa(portal, browser):
    walk = Walk(browser, portal["url"])
    account, number = portal["account"], portal["number"]
    page = walk.page

    walk.go("welcome", "/portal/")
    walk.go("sign-up", "/portal/signup/")
    walk.submit("sign-up, its error shown", "Sign up")
    page.get_by_label("Email").fill("new@example.org")
    walk.submit("sign-up sent", "Sign up")
    walk.go("password reset", "/portal/password-reset/")
    page.get_by_label("Email").fill("dora@example.org")
    walk.submit("password reset sent", "Send the link")
    walk.go("pay without signing in", "/pay/")
    walk.submit("pay without signing in, its errors shown", "Find my account")
    page.get_by_label("Account number").fill(account.account_no)
    page.get_by_label("Amount of your latest bill").fill("186.13")
    walk.submit("pay an account found", "Find my account")
    walk.go("sign-in", "/portal/login/")
    page.get_by_label("Email").fill("dora@example.org")
    page.get_by_label("Password").fill("wrong password")
    walk.submit("sign-in, its error shown", "Sign in")
    page.get_by_label("Email").fill("dora@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    walk.submit("your accounts", "Sign in")
    walk.go("link an account", "/portal/link/")
    walk.submit("link an account, its errors shown", "Link account")
    walk.go("an account with a termination case", f"/portal/accounts/{account.public_id}/")
    walk.go("how we contact you", f"/portal/accounts/{account.public_id}/notifications/")
    page.get_by_label("Text message", exact=True).check()
    walk.submit("how we contact you, its errors shown", "Save")
    walk.go("a bill", f"/portal/bills/{portal['bill'].public_id}/")
    walk.go("a termination case", f"/portal/cases/{number}/")
    walk.submit("the hearing request, its error shown", "Request a hearing")
    page.get_by_label("Your written request").fill("I dispute the amount: I paid by check in March.")
    walk.submit("the hearing requested", "Request a hearing")
    walk.go("pay online", f"/pay/account/{account.public_id}/")
    walk.go("autopay", f"/pay/autopay/{account.public_id}/")
    page.get_by_role("button", name="Sign out").click()

    page.goto(portal["url"] + "/portal/login/")
    page.get_by_label("Email").fill("pat@example.org")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    walk.go("a tester's devices", "/portal/tester/")
    walk.go("a test report", "/portal/tester/submit/")
    walk.submit("a test report, its errors shown", "Submit the test")

    assert not walk.found, "\n".join(f"{page}:\n  " + "\n  ".join(problems) for page, problems in walk.found.items())


def test_axe_reports_what_it_should(browser):
    """The check above is not vacuous: axe run the same way names a picture without alternative text, an unlabelled
    field and grey text on white."""
    page = browser.new_page()
    page.set_content('<html lang="en"><head><title>t</title></head><body><main><img src="x.png">'
                     '<input type="text"><p style="color:#aaa">faint</p></main></body></html>')
    found = " ".join(axe_violations(page))
    assert "image-alt" in found and "label" in found and "color-contrast" in found


FOCUSED = """() => { const e = document.activeElement, s = getComputedStyle(e);
  return {tag: e.tagName.toLowerCase(), id: e.id, text: (e.innerText || e.value || '').trim().slice(0, 80),
          outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2}; }"""
TABBABLE = """() => [...document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, [tabindex]')]
  .filter(e => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length).length"""


def test_a_customer_walks_the_portal_by_keyboard_alone(portal, browser):
    """Skip link first; focus always visible; an error takes focus, says what is wrong and leads to its field;
    every link and control of a page is reached by Tab, and Tab leaves none of them stuck."""
    from playwright.sync_api import expect

    page = browser.new_context(viewport=DESK).new_page()
    keys = page.keyboard
    focused = lambda: page.evaluate(FOCUSED)  # noqa: E731

    def tab_to(text: str, limit: int = 60) -> dict:
        for _ in range(limit):
            keys.press("Tab")
            now = focused()
            assert now["outline"], f"no visible focus on {now}"
            if text in now["text"]:
                return now
        raise AssertionError(f"Tab never reached {text!r}")

    page.goto(portal["url"] + "/portal/")
    keys.press("Tab")
    assert focused()["text"] == "Skip to main content" and focused()["outline"]
    keys.press("Enter")
    assert focused()["id"] == "main"
    tab_to("Sign in")
    keys.press("Enter")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert focused()["id"] == "id_username"  # the form's first field, ready to type
    keys.type("dora@example.org")
    keys.press("Tab")
    keys.type("not the password")
    keys.press("Enter")
    # The error takes focus (read at once), in words.
    expect(page.locator("#form-errors")).to_be_focused()
    expect(page.locator("#form-errors")).to_contain_text("That email and password do not match an account here")
    tab_to("")  # the Email field
    assert focused()["id"] == "id_username"
    keys.press("Control+A")
    keys.type("dora@example.org")
    keys.press("Tab")
    keys.type(PASSWORD)
    keys.press("Enter")
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()

    tab_to("Account " + portal["account"].account_no)
    keys.press("Enter")
    expect(page.get_by_role("heading", name="Account " + portal["account"].account_no)).to_be_visible()
    # No trap: Tab reaches every link and control of the account page, and goes on past the last.
    count = page.evaluate(TABBABLE)
    seen = set()
    for _ in range(count + 5):
        keys.press("Tab")
        now = focused()
        seen.add((now["tag"], now["id"], now["text"]))
    assert len(seen) >= count

    page.goto(f"{portal['url']}/portal/cases/{portal['number']}/")
    tab_to("Request a hearing")
    keys.press("Enter")  # nothing written: refused
    summary = page.locator("#form-errors")
    expect(summary).to_be_focused()
    expect(summary).to_contain_text("Your written request: Write your request for a hearing before sending it.")
    tab_to("Your written request")
    keys.press("Enter")  # the error's link leads to its field
    expect(page.get_by_label("Your written request")).to_be_focused()
    field = page.get_by_label("Your written request")
    assert "id_text_error" in field.get_attribute("aria-describedby") and field.get_attribute("aria-invalid") == "true"
    keys.type("I dispute the amount: I paid by check in March.")
    tab_to("Request a hearing")
    keys.press("Enter")
    expect(page.get_by_text("Your written request for a hearing was received")).to_be_visible()
