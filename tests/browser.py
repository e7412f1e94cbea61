"""What the browser tests share: Debian's chromium, driven by Playwright (the ``browser`` fixture is in
``tests/conftest.py``), the mark that skips them where chromium is missing (``apt-get install chromium``; CI
installs it), and the two screen sizes they use."""

import os

import pytest

CHROMIUM = "/usr/bin/chromium"
# The flags keep a headless chromium off the network this machine does not have (it would retry for ever).
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 900}

needs_chromium = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")

# The WCAG levels the portal and the admin are held to (ADA Title II: WCAG 2.1 AA).
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe_violations(page, *, exclude: tuple[str, ...] = ()) -> list[str]:
    """What axe-core (run in the page) finds against WCAG 2.1 A and AA, one line per rule and element."""
    from axe_playwright_python.sync_playwright import Axe

    context = {"exclude": [[selector] for selector in exclude]} if exclude else None
    results = Axe().run(page, context=context, options={"runOnly": {"type": "tag", "values": WCAG_21_AA},
                                                           "resultTypes": ["violations"]})
    return [f"{violation['id']} ({violation['impact']}): {violation['help']} — {', '.join(node['target'])}: "
            f"{node['failureSummary'].splitlines()[-1].strip()}"
            for violation in results.response["violations"] for node in violation["nodes"]]


# Records each Content-Security-Policy violation of the page (the browser refuses the script or style and fires
# this event); run before any of the page's own scripts (``page.add_init_script``), which no policy blocks.
_CSP_WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (event) {
  window.__cspViolations.push(event.effectiveDirective + " refused " + (event.blockedURI || "an inline script or style")
    + (event.sourceFile ? " (" + event.sourceFile + ":" + event.lineNumber + ")" : ""));
});
"""


def csp_watch(page) -> None:
    """Record the Content-Security-Policy violations of every page ``page`` loads from now on."""
    page.add_init_script(_CSP_WATCH)


def csp_violations(page) -> list[str]:
    """The Content-Security-Policy violations of the page loaded, one line each (``csp_watch`` first)."""
    return page.evaluate("window.__cspViolations || ['the page was not watched: call csp_watch first']")

# The narrowest phone the office's pages are held to.
NARROW = {"width": 375, "height": 812}


def screen(page, name: str) -> None:
    """Keep a picture of the page in $SCREENS_DIR (``make screens`` keeps them in docs/screens/ for the clerk's
    guide); nothing without it."""
    where = os.environ.get("SCREENS_DIR")
    if where:
        os.makedirs(where, exist_ok=True)
        page.screenshot(path=os.path.join(where, f"{name}.png"), full_page=False)
