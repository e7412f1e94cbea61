"""The closing letter for a real-estate sale: what the account owes through the closing date, printed on the
one-page paper (``core.papers``) with the bill's letterhead.

``closing_figures`` is the read behind it (and behind a test to the cent):

* the balance now, penalties and interest posted included (``billing.ledger.selectors.account_balances``);
* the charges waiting for the next bill;
* an **estimate** of the water since the last bill's reading to the closing date: the account's average use
  per day over its bills times the days, rounded half-up to the gallon, rated on the schedule in force on the
  closing date with the preset's final-bill minimum rule (``[final_bill]``), exactly as the final bill will be
  rated. A final reading replaces it: the final bill charges what the meter shows.
* what becomes a lien if unpaid and where it is relevied, in the words of the preset's ``[lien]`` table (the
  same table the relevy list cites), and the office to call.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.utils import timezone

from accounts.models import Account
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars, fmt_gallons
from core.papers import Paper, paper_pdf
from ordinance.selectors import section

from ..ledger.selectors import account_balances
from ..ordinance import ordinance_on
from ..rating import Line
from ..runs.final import final_bill_facts, final_bill_rated
from ..runs.load import waiting_charges
from ..sections import LienRule
from .bill import line_quantity_rate


@dataclass(frozen=True)
class ClosingFigures:
    account: Account
    closing_on: date
    as_of: date
    balance: Decimal  # owed now, penalties and interest posted included (negative: a credit)
    charges: list[tuple[str, str, Decimal]]  # (description, citation, amount) waiting for the next bill
    estimate_from: date | None  # the last reading billed (None: never billed)
    estimate_days: int
    average_per_day: Decimal  # gallons a day over the account's bills
    estimate_gallons: int
    estimate_lines: tuple[Line, ...]
    final_rule_words: str
    lien: LienRule
    office: str

    @property
    def charges_total(self) -> Decimal:
        return sum((amount for _, _, amount in self.charges), ZERO)

    @property
    def estimate_total(self) -> Decimal:
        return sum((line.amount for line in self.estimate_lines), ZERO)

    @property
    def total(self) -> Decimal:
        """The amount due through the closing date: balance, waiting charges and the estimate."""
        return self.balance + self.charges_total + self.estimate_total


def closing_figures(*, account: Account, closing_on: date, as_of: date) -> ClosingFigures:
    """What ``account`` owes through ``closing_on``, as known on ``as_of``; refused naming ``closing_on`` when
    the account is closed or the date comes before the last bill's reading."""
    account = Account.objects.select_related("owner", "premises").get(pk=account.pk)
    if account.status == Account.Status.CLOSED:
        raise ApplicationError(f"account {account.account_no} was closed on {account.closed_on}; its final bill "
                               "states what it owes", field="account")
    facts = final_bill_facts(account, on=closing_on)
    if not facts.current:
        raise ApplicationError(f"account {account.account_no} has no meter installed on {closing_on}",
                               field="closing_on")
    history = facts.history
    last = history[-1] if history else None
    if last is not None and closing_on <= last["period_end"]:
        raise ApplicationError(f"{closing_on} is not after {last['period_end']}, the last reading billed (bill dated "
                               f"{last['bill_date']})", field="closing_on")
    on = max(closing_on, as_of)
    ordinance = ordinance_on(on)
    utility = ordinance.utility
    rule = section("final_bill", on, installed=utility)
    balance = account_balances([account.pk], through=as_of)[account.pk].balance

    charges = [(c.description, c.citation, c.amount)
               for c in waiting_charges([account.pk], on=date.max, lock=False).get(account.pk, [])]

    # Average use per day over the bills, times the days since the last reading billed, half-up to the gallon.
    past_days = sum(max((b["period_end"] - b["period_start"]).days, 1) for b in history)
    past_gallons = sum(b["gallons"] for b in history)
    start = last["period_end"] if last else facts.current[0].installed_on
    days = max((closing_on - start).days, 0)
    gallons = (2 * past_gallons * days + past_days) // (2 * past_days) if past_days else 0
    average = (Decimal(past_gallons) / past_days).quantize(Decimal("0.1")) if past_days else ZERO
    bill_date = closing_on if last is None or closing_on > last["bill_date"] else last["bill_date"] + timedelta(days=1)
    anchor = last["bill_date"] if last else start
    _, _, _, rated = final_bill_rated(facts, bill_date=bill_date, gallons=gallons, anchor=anchor, rule=rule)

    office = ", ".join(filter(None, [utility.name, " ".join(utility.office_address.split()),
                                     f"phone {utility.phone}" if utility.phone else ""]))
    return ClosingFigures(account=account, closing_on=closing_on, as_of=as_of, balance=balance, charges=charges,
                          estimate_from=last["period_end"] if last else None, estimate_days=days,
                          average_per_day=average, estimate_gallons=gallons, estimate_lines=rated.lines,
                          final_rule_words=rule.words, lien=section("lien", on, installed=utility), office=office)


def closing_paper(figures: ClosingFigures) -> Paper:
    account, utility = figures.account, ordinance_on(figures.as_of).utility
    since = (f"since the last reading billed, {fmt_day(figures.estimate_from)}" if figures.estimate_from
             else "since the meter was installed")
    table = [(f"Balance on {fmt_day(figures.as_of)}, penalties posted included", fmt_dollars(figures.balance))]
    table += [(f"Charge waiting for the next bill: {d} ({c})", fmt_dollars(a)) for d, c, a in figures.charges]
    table += [(f"ESTIMATE: {line.description} ({line.citation})" if line.kind == "minimum" else
               f"ESTIMATE: {line.description} ({line.citation}; "
               f"{line_quantity_rate(kind=line.kind, quantity=line.quantity, rate=line.rate)})",
               fmt_dollars(line.amount)) for line in figures.estimate_lines]
    table.append((f"Amount due through {fmt_day(figures.closing_on)} (includes an estimate)",
                  fmt_dollars(figures.total)))
    lien = figures.lien
    lien_para = (f"{lien.words} Any amount left unpaid at closing stays on the property"
                 + (f" and goes on the list for {lien.list_for}" if lien.list_for else "") + f" ({lien.citation}).")
    paragraphs = [
        f"At your request, these are the water charges of account {account.account_no} at "
        f"{account.premises.service_address} through the closing date {fmt_day(figures.closing_on)}, as of "
        f"{fmt_day(figures.as_of)}.",
        (f"The water used {since} to the closing date is an ESTIMATE: {fmt_gallons(figures.estimate_gallons)} gal, "
         f"the account's average of {figures.average_per_day:,} gal a day over its bills for "
         f"{figures.estimate_days} days, rated on the schedule in force as the final bill will be. "
         + (f"{figures.final_rule_words} " if figures.final_rule_words else "")
         + "A final reading on the closing date replaces the estimate: the final bill charges what the meter "
         "shows, and the difference is settled with it."),
        lien_para,
        f"Questions, and the final reading: {figures.office}.",
    ]
    return Paper(
        title="CLOSING LETTER",
        utility_name=utility.name, utility_header="\n".join(filter(None, [utility.office_address, utility.phone])),
        facts=[("Account number", account.account_no), ("Service address", account.premises.service_address),
               ("Owner", account.owner.name), ("Closing date", fmt_day(figures.closing_on)),
               ("Figures as of", fmt_day(figures.as_of))],
        addressee=f"{account.owner.name}\n{account.owner.mailing_address}", paragraphs=paragraphs, table=table,
        warning="The water since the last bill is an estimate; a final reading will replace it.",
        footer=f"{utility.name}. Lien: {lien.citation}" + (" (office policy)" if lien.is_policy else "") + ".",
        created_at=timezone.now())


def closing_letter_pdf(*, account: Account, closing_on: date, as_of: date) -> bytes:
    return paper_pdf(closing_paper(closing_figures(account=account, closing_on=closing_on, as_of=as_of)))
