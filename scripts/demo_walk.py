"""A customer's walk through the demo that ``make run`` serves, in a browser: sign in to the portal, pay what one
account owes online on the test checkout, and turn autopay on for another (or the same) account.

    make run                                   # prints the customer's login
    .venv/bin/python scripts/demo_walk.py --password PASSWORD [--url http://127.0.0.1:8000] [--email ...]

Uses Playwright with Debian's chromium (``/usr/bin/chromium``); prints each step and what the site answered.
``tests/demo/test_demo_walk.py`` runs the same walk on a freshly bootstrapped demo."""

import argparse
import re
import sys

CHROMIUM = "/usr/bin/chromium"
ROUTING, BANK_ACCOUNT = "011000015", "000123456789"  # a routing number with a valid check digit; made up


def walk(page, *, url: str, email: str, password: str, say=print) -> dict:
    """The walk on a Playwright ``page``; what it did, for a test to check."""
    from playwright.sync_api import expect

    url = url.rstrip("/")
    page.goto(url + "/portal/login/")
    expect(page.locator(".test-payments")).to_contain_text("no money moves")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    say(f"signed in as {email}")
    pay = page.get_by_role("link", name=re.compile(r"^Pay \$[\d,]+\.\d\d online")).first
    expect(pay).to_be_visible()
    amount = re.search(r"\$[\d,]+\.\d\d", pay.inner_text()).group(0)
    pay.click()
    page.get_by_role("button", name="Continue to secure payment").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Pay \$"))).to_be_visible()
    expect(page.locator(".test-payments")).to_contain_text("no money moves")
    page.get_by_role("button", name=re.compile(r"\(test\)$")).click()
    expect(page.get_by_role("heading", name="Thank you: your payment is posted")).to_be_visible()
    receipt = page.get_by_role("status").first.inner_text()
    say(f"paid {amount} online: {receipt}")
    page.goto(url + "/portal/")
    page.get_by_role("link", name=re.compile(r"^Account ")).first.click()
    account = page.get_by_role("heading", level=1).inner_text()
    page.get_by_role("link", name=re.compile("^Autopay")).click()
    page.get_by_label("Name on the bank account").fill("Demo Customer")
    page.get_by_label("Routing number").fill(ROUTING)
    page.get_by_label("Account number", exact=True).fill(BANK_ACCOUNT)
    page.get_by_label("Account number again").fill(BANK_ACCOUNT)
    page.get_by_label("I authorize these debits").check()
    page.get_by_role("button", name="Turn autopay on").click()
    enrolled = page.get_by_text(re.compile("Autopay is on")).first
    expect(enrolled).to_be_visible()
    say(f"{account}: {enrolled.inner_text()}")
    return {"amount": amount, "receipt": receipt, "autopay": enrolled.inner_text()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--email", default="customer@example.org")
    parser.add_argument("--password", required=True, help="the customer's password `make run` printed")
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        try:
            walk(browser.new_page(), url=options.url, email=options.email, password=options.password)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
