"""The one-off invoice: a fee billed on its own, due on its own date, on the bill's letterhead (``core.papers``)."""

from django.utils import timezone

from billing.ordinance import ordinance_on
from core.dates import fmt_day
from core.money import fmt_dollars
from core.papers import Paper, paper_pdf

from .models import Invoice


def invoice_pdf(invoice: Invoice) -> bytes:
    utility = ordinance_on(invoice.invoiced_on).utility
    account = invoice.account
    amount = fmt_dollars(invoice.amount.amount)
    return paper_pdf(Paper(
        title="INVOICE", utility_name=utility.name,
        utility_header="\n".join([utility.office_address, utility.phone]).strip(),
        facts=[("Invoice", invoice.number), ("Account number", account.account_no),
               ("Service address", account.premises.service_address), ("Invoice date", fmt_day(invoice.invoiced_on)),
               ("Amount due", amount), ("Due by", fmt_day(invoice.due_on))],
        addressee=f"{invoice.recipient_name}\n{invoice.recipient_address}",
        paragraphs=[
            f"This invoice is for a charge under the village's fee schedule, billed on its own rather than on your "
            f"next water bill. Please pay {amount} by {fmt_day(invoice.due_on)}.",
            "Pay by mail, at the office or online as you pay your water bills; write the account number and the "
            "invoice number on your check. It is also shown with your account's balance on your next water bill "
            "until it is paid.",
        ],
        table=[(f"{invoice.description} ({invoice.citation})", amount), ("Amount due", amount)],
        warning=f"Questions: {utility.phone or 'the office'}.",
        footer=f"{utility.name}: invoice {invoice.number}, account {account.account_no}.",
        created_at=timezone.now()))
