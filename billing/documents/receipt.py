"""The counter's receipt for a payment, printed on the one-page paper of ``core.papers`` (the bill's
letterhead and look).

``receipt_facts`` gathers what the receipt says, already formatted, so a test reads it without a PDF
reader; ``receipt_paper`` lays it out and ``receipt_pdf`` renders it. The receipt number is the payment's
reference; the balance is the account's after the payment, as of the day it was paid (the ledger's replay,
so a penalty the payment came too late to avoid is in it). A receipt printed again later says the same,
except that a payment reversed since says so.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.utils.translation import gettext as _

from core.dates import fmt_day
from core.i18n import customer_language
from core.money import fmt_dollars
from core.papers import Paper, paper_pdf
from ordinance.selectors import installed_utility

from ..ledger.selectors import account_balances
from ..models import Payment, PaymentReversal


@dataclass(frozen=True)
class ReceiptFacts:
    utility_name: str
    utility_header: str
    number: str
    paid_on: str
    account_no: str
    name: str
    mailing_address: str
    service_address: str
    amount: str
    tender: str
    balance_after: str
    balance: Decimal
    clerk: str
    reversed: str  # "" unless the payment has been reversed since
    # What it paid, as the ledger applied it: ("bill 2026-02-1-0001", "$186.13").
    applied: tuple[tuple[str, str], ...] = ()
    left_over: str = ""  # what of it is a credit on the account, "" when none


def tender_words(payment: Payment) -> str:
    """``Check no. 1001``, ``Cash``, ``Card``, ``Bank file``."""
    if payment.tender == Payment.Tender.CHECK and payment.check_number:
        return _("Check no. %(number)s") % {"number": payment.check_number}
    return str(payment.get_tender_display())


def receipt_facts(payment: Payment) -> ReceiptFacts:
    utility = installed_utility()
    account = payment.account
    balance = account_balances([account.pk], through=payment.paid_on)[account.pk].balance
    header = "\n".join(line.strip() for line in [*(utility.office_address.splitlines() if utility else []),
                                                 *([_("Phone %(phone)s") % {"phone": utility.phone}]
                                                   if utility and utility.phone else [])]
                       if line.strip())
    reversal = PaymentReversal.objects.filter(payment=payment).first()
    clerk = payment.entered_by
    applied, left_over = _applied(payment)
    return ReceiptFacts(
        utility_name=utility.name if utility else "", utility_header=header, number=payment.reference,
        paid_on=fmt_day(payment.paid_on), account_no=account.account_no, name=account.owner.name,
        mailing_address=account.owner.mailing_address, service_address=account.premises.service_address,
        amount=fmt_dollars(payment.amount.amount), tender=tender_words(payment),
        balance_after=fmt_dollars(balance), balance=balance,
        clerk=(clerk.get_full_name() or clerk.get_username()) if clerk else "",
        reversed=(_("This payment was reversed on %(day)s (%(reason)s).") % {
            "day": fmt_day(reversal.reversed_on), "reason": str(reversal.get_reason_display()).lower()}
            if reversal else ""), applied=applied, left_over=left_over)


def _applied(payment: Payment) -> tuple[tuple[tuple[str, str], ...], str]:
    """What the payment paid on the day it was paid, by bill or charge (the ledger's allocation), and what was
    left over as a credit."""
    from ..selectors import account_ledger

    reference = f"Payment {payment.reference}" if payment.reference else None
    rows = [row for row in account_ledger(account=payment.account, as_of=payment.paid_on)
            if row.kind == "payment" and row.label == reference and row.on == payment.paid_on]
    if not rows:
        return (), ""
    row = rows[-1]
    by_what: dict[str, Decimal] = {}
    for part in row.paid:
        if part.applied_on is None:  # paid that day; a credit used later is not this receipt's to tell
            what = _("bill %(number)s") % {"number": part.what.removeprefix("bill ")} if part.bill_id else part.what
            by_what[what] = by_what.get(what, Decimal(0)) + part.amount
    return (tuple((what, fmt_dollars(amount)) for what, amount in by_what.items()),
            fmt_dollars(row.waiting) if row.waiting > 0 else "")


def receipt_paper(payment: Payment) -> Paper:
    """The receipt, in the language of the account paid."""
    with customer_language(payment.account):
        return _receipt_paper(payment)


def _receipt_paper(payment: Payment) -> Paper:
    f = receipt_facts(payment)
    facts = [(_("Receipt number"), f.number), (_("Date"), f.paid_on), (_("Account number"), f.account_no),
             (_("Name"), f.name), (_("Service address"), f.service_address), (_("Paid by"), f.tender)]
    if f.clerk:
        facts.append((_("Received by"), f.clerk))
    values = {"name": f.name, "amount": f.amount, "tender": f.tender.lower(), "address": f.service_address,
              "account": f.account_no}
    return Paper(
        title=_("RECEIPT FOR PAYMENT"), utility_name=f.utility_name, utility_header=f.utility_header, facts=facts,
        addressee=f"{f.name}\n{f.mailing_address}".strip(),
        paragraphs=[_("Received from %(name)s the sum of %(amount)s (%(tender)s) for water service at %(address)s, "
                      "account %(account)s.") % values],
        table=[*((_("Paid: %(what)s") % {"what": what}, amount) for what, amount in f.applied),
               *([(_("Left as a credit on the account"), f.left_over)] if f.left_over else []),
               (_("Amount paid"), f.amount),
               *([(_("Cash tendered"), fmt_dollars(payment.tendered)),
                  (_("Change"), fmt_dollars(payment.change))] if payment.tendered is not None
                 else []),
               (_("Balance after this payment, as of %(day)s") % {"day": f.paid_on}, f.balance_after)],
        warning=f.reversed,
        footer=f.utility_name + ". " + _("Please keep this receipt; the receipt number is the payment's reference."),
        created_at=payment.created_at, lang=payment.account.language)


def receipt_pdf(payment: Payment, *, narrow: bool = False) -> bytes:
    """The receipt on Letter, or ``narrow`` on a receipt printer's 80 mm roll (the counter's)."""
    return paper_pdf(receipt_paper(payment), narrow=narrow)
