"""The system's own words on a bill's lines and the account's charges, in the customer's language.

A bill line's and a ledger row's description is kept as written when it was made, in English: the record. A
Spanish-speaking customer reads the ones the system writes (a minimum charge, a rate block, a late charge, a voided
bill, a memo's plain wording) in Spanish: each is recognised by its pattern and said again through gettext. Words
a clerk or the preset wrote (a memo's text for the customer, a fee's name) are shown as written.
"""

import re

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from core.dates import ENGLISH

N = r"[\d,]+"  # gallons as printed: 62,500
RATE = r"[\d.,]+"

# Line descriptions written by billing.rating, with the msgid each becomes.
LINE_PATTERNS = [
    (re.compile(rf"^Minimum charge, includes (?P<gallons>{N}) gal$"),
     gettext_noop("Minimum charge, includes %(gallons)s gal")),
    (re.compile(rf"^Minimum charge, (?P<units>{N}) units? × \$(?P<each>{RATE}), includes (?P<gallons>{N}) gal$"),
     gettext_noop("Minimum charge, %(units)s units × $%(each)s, includes %(gallons)s gal")),
    (re.compile(rf"^(?P<low>{N})–(?P<high>{N}) gal: (?P<gallons>{N}) gal at \$(?P<rate>{RATE}) per 1,000$"),
     gettext_noop("%(low)s–%(high)s gal: %(gallons)s gal at $%(rate)s per 1,000")),
    (re.compile(rf"^over (?P<low>{N}) gal: (?P<gallons>{N}) gal at \$(?P<rate>{RATE}) per 1,000$"),
     gettext_noop("over %(low)s gal: %(gallons)s gal at $%(rate)s per 1,000")),
    (re.compile(rf"^Nonprofit rate: (?P<gallons>{N}) gal at \$(?P<rate>{RATE}) per 1,000$"),
     gettext_noop("Nonprofit rate: %(gallons)s gal at $%(rate)s per 1,000")),
    (re.compile(rf'^Annual minimum charge, (?P<size>[^"]+)" meter, includes (?P<gallons>{N}) gal for the billable '
                r"year$"),
     gettext_noop('Annual minimum charge, %(size)s" meter, includes %(gallons)s gal for the billable year')),
    (re.compile(rf"^(?P<gallons>{N}) gal over the year's (?P<allowance>{N}) gal allowance at \$(?P<rate>{RATE}) "
                r"per 1,000$"),
     gettext_noop("%(gallons)s gal over the year's %(allowance)s gal allowance at $%(rate)s per 1,000")),
]

# Ledger descriptions written by billing's services, by the row's kind.
CHARGE_PATTERNS = [
    (re.compile(r"^Bill (?P<bill>\S+) voided; a corrected bill replaces it$"),
     gettext_noop("Bill %(bill)s voided; a corrected bill replaces it")),
    (re.compile(r"^Credit memo on bill (?P<bill>\S+)$"), gettext_noop("Credit memo on bill %(bill)s")),
    (re.compile(r"^Debit memo on bill (?P<bill>\S+)$"), gettext_noop("Debit memo on bill %(bill)s")),
    (re.compile(r"^Payment (?P<reference>\S+) reversed: returned check$"),
     gettext_noop("Payment %(reference)s reversed: returned check")),
    (re.compile(r"^Payment (?P<reference>\S+) reversed: bank debit returned$"),
     gettext_noop("Payment %(reference)s reversed: bank debit returned")),
    (re.compile(r"^Payment (?P<reference>\S+) reversed: .+$"), gettext_noop("Payment %(reference)s reversed")),
]
LATE = re.compile(r"^.+?: (?P<percent>[\d.]+)%(?: \((?:(?P<first>first month)|month (?P<month>\d+)"
                  r"|first (?P<first_days>\d+)-day period|(?P<days>\d+)-day period (?P<period>\d+))\))?"
                  r"(?: on bill (?P<bill>\S+))?$")


def _english() -> bool:
    return translation.get_language() in ENGLISH


def _said(text: str, patterns) -> str | None:
    for pattern, msgid in patterns:
        found = pattern.match(text)
        if found:
            return _(msgid) % found.groupdict()
    return None


def line_words(text: str) -> str:
    """A bill line's description in the customer's language (as written when not one of the system's)."""
    if _english():
        return text
    return _said(text, LINE_PATTERNS) or text


def _late(kind: str, found) -> str:
    what = _("Interest") if kind == "interest" else _("Late payment penalty")
    words = f"{what}: {found['percent']}%"
    if found["first"]:
        words += " " + _("(first month)")
    elif found["month"]:
        words += " " + _("(month %(month)s)") % {"month": found["month"]}
    elif found["first_days"]:
        words += " " + _("(first %(days)s-day period)") % {"days": found["first_days"]}
    elif found["period"]:
        words += " " + _("(%(days)s-day period %(period)s)") % {"days": found["days"], "period": found["period"]}
    if found["bill"]:
        words += " " + _("on bill %(bill)s") % {"bill": found["bill"]}
    return words


def charge_words(kind: str, text: str) -> str:
    """An account's charge (a ledger row other than a bill or a payment) in the customer's language."""
    if _english() or not text:
        return text
    if kind in ("penalty", "interest"):
        found = LATE.match(text)
        if found:
            return _late(kind, found)
    return _said(text, CHARGE_PATTERNS) or text
