"""Mineola Article II, docs/ordinances.md's worked example, through the ``termination`` command: served personally
2026-04-01 → earliest hearing 2026-04-16 (2026-04-15 refused); request deadline 2026-04-11; determination
mailed 2026-04-20 → appeal deadline 2026-05-04; appeal-hearing notice mailed 2026-05-10 → earliest appeal
hearing 2026-05-15."""

import pytest

from termination.models import TerminationCase

from .steps import delinquent_account, refused, show, term

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.32", "§ 45.35")]


def test_the_worked_example_through_the_commands(mineola):
    account, bill = delinquent_account()
    number = term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20")
    case = show(number)
    assert case["status"] == "open" and case["grounds"] == "nonpayment"
    # 62,500 gal: minimum 45.00 + 30,000 × 3.10 = 93.00 + 12,500 × 3.85 = 48.13 → 186.13 (no penalty posted yet).
    assert case["amount_delinquent"] == "186.13"
    # Served personally on 2026-04-01: a hearing on 2026-04-15 is refused naming the section and the date.
    message = refused("serve", number, "--to", "owner", "--method", "personal", "--served-on", "2026-04-01",
                      "--hearing-on", "2026-04-15", date_="2026-04-01")
    assert "§ 45.32" in message and "earliest lawful hearing date is 2026-04-16" in message
    assert TerminationCase.objects.get(number=number).notices.count() == 0
    for role in ("owner", "occupant"):
        term("serve", number, "--to", role, "--method", "personal", "--served-on", "2026-04-01",
             "--hearing-on", "2026-04-16", date_="2026-04-01")
    case = show(number)
    assert case["deadlines"] == {"hearing_earliest": "2026-04-16", "request_by": "2026-04-11", "appeal_by": None}
    assert [(r["role"], r["method"], r["served_on"], r["received_on"]) for r in case["recipients"]] == [
        ("owner", "personal", "2026-04-01", "2026-04-01"), ("occupant", "personal", "2026-04-01", "2026-04-01")]
    # A written request within the window; the hearing; the determination mailed 2026-04-20.
    term("request", number, "--received-on", "2026-04-10", date_="2026-04-10")
    term("hearing", number, "--attendance", "the owner", "--evidence", "bill unpaid", date_="2026-04-16")
    term("determine", number, "--outcome", "terminate", "--mailed-on", "2026-04-20", date_="2026-04-20")
    assert show(number)["deadlines"]["appeal_by"] == "2026-05-04"
    # The appeal; the Commission's notice mailed 2026-05-10: a hearing on 2026-05-14 is refused.
    term("appeal", number, "--filed-on", "2026-05-01", "--grounds", "I paid part of the bill", date_="2026-05-01")
    message = refused("decide", number, "--outcome", "uphold", "--hearing-on", "2026-05-14",
                      "--notice-mailed-on", "2026-05-10", date_="2026-05-20")
    assert "§ 45.35" in message and "earliest lawful date is 2026-05-15" in message
    term("decide", number, "--outcome", "uphold", "--hearing-on", "2026-05-15", "--notice-mailed-on", "2026-05-10",
         date_="2026-05-15")
    assert show(number)["status"] == "final"
    out = term("shutoff", number, date_="2026-05-18")
    assert "Shut-off order" in out and show(number)["status"] == "ordered"
    events = [e["what"] for e in show(number)["events"]]
    assert events[0].startswith("Case opened for nonpayment") and events[-1].startswith("Shut-off order issued")
