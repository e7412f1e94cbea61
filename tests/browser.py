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
