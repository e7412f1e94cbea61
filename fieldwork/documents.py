"""The shut-off list for the crew and a door hanger for each stop, in one PDF on the bill's letterhead
(``core.papers``): the list first, in route order, then one hanger per stop in the same order."""

from datetime import date

from django.utils import timezone

from billing.fees import fee_in_force
from core.dates import fmt_day
from core.documents import PdfInfo, pdf_one_file
from core.errors import NotFound
from core.money import fmt_dollars
from core.papers import STYLESHEET, TEMPLATE, Paper
from termination.policy import termination_policy

from .services import Stop


def _restore_words(policy, on: date) -> str:
    if not policy.restore_fee:
        return ""
    try:
        fee = fee_in_force(code=policy.restore_fee, on=on)
    except NotFound:
        return ""
    amount = f" of {fmt_dollars(fee.amount.amount)}" if fee.amount is not None else ""
    return f" and the restoration charge{amount} ({fee.citation})"


def shutoff_papers(stops: list[Stop], *, as_of: date) -> list[Paper]:
    policy = termination_policy()
    header = "\n".join([policy.office_address, policy.phone]).strip()
    now = timezone.now()
    listing = Paper(
        title="SHUT-OFF LIST", utility_name=policy.utility_name, utility_header=header,
        facts=[("As of", fmt_day(as_of)), ("Stops", str(len(stops)))],
        addressee="Field crew",
        paragraphs=["In route order. Before each shut-off, call the office: a payment in full cancels the order. "
                    "Leave the door hanger that follows for the stop."],
        table=[(f"{n}. {s.account.premises.service_address} — {s.account.account_no}, meter {s.meter}, {s.what}"
                + (f" — HELD, DO NOT SHUT OFF: {'; '.join(s.held)}" if s.held else ""),
                fmt_dollars(s.owed) if s.owed is not None else "") for n, s in enumerate(stops, 1)],
        warning="", footer=f"{policy.utility_name}: shut-off list of {fmt_day(as_of)}.", created_at=now,
        table_total=False)
    restore = _restore_words(policy, as_of)
    phone = policy.phone or "the office"
    hangers = [Paper(
        title="WATER SERVICE SHUT OFF", utility_name=policy.utility_name, utility_header=header,
        facts=[("Account number", s.account.account_no), ("Service address", s.account.premises.service_address),
               ("Case", s.work_order.case.number if s.work_order else ""),
               ("Amount owed", fmt_dollars(s.owed) if s.owed is not None else "")],
        addressee=f"Occupant\n{s.account.premises.service_address}",
        paragraphs=[
            "Water service to these premises was shut off today for nonpayment, after the notices the law "
            "requires.",
            f"To have it restored, pay the amount owed{restore} at the office, {policy.office_address.splitlines()[0]}"
            f", or call {phone}. Service is restored once it is paid.",
            "Shut off on: ____________   Time: ________   By: ______________________",
        ],
        table=[], warning="Do not turn the curb valve yourself: only the village's crew operates it.",
        footer=f"{policy.utility_name}, account {s.account.account_no}.", created_at=now) for s in stops
        if not s.held]
    return [listing, *hangers]


def shutoff_pdf(stops: list[Stop], *, as_of: date) -> bytes:
    papers = shutoff_papers(stops, as_of=as_of)
    return pdf_one_file(template=TEMPLATE, stylesheet=STYLESHEET, context_name="papers", documents=papers,
                        info=PdfInfo(title=f"Shut-off list of {fmt_day(as_of)}", author=papers[0].utility_name,
                                     created=papers[0].created_at), batch=25)
