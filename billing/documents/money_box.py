"""The money box of a bill: how the total due adds up, row by row, with no database.

The figures (``BillSummary``) are ``billing.selectors.bill_summaries``' (the account as it stood when the
bill was issued);
this module only decides which rows the customer sees, in which order and with which words, so the paper
bill and the portal's bill page show the same box:

    Previous balance (date of the previous bill)
    Payments received since
    Penalties
    Fees, credits and adjustments        only when there are some
    Current charges                      this bill's own charges
    Total amount due                     the sum of the rows above
    of which past due                    only when earlier bills are past due
    If paid after <the last day without  the total due plus the penalties that fall by the first late day
    a late charge>                       (the day after the due date, or later where the ordinance counts
                                         from the bill date)

Amounts stay Decimals: each page formats them with ``core.money``'s formatters.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from core.dates import fmt_day
from core.money import ZERO

from ..selectors import BillSummary


@dataclass(frozen=True)
class MoneyRow:
    label: str
    amount: Decimal


@dataclass(frozen=True)
class MoneyBox:
    rows: tuple[MoneyRow, ...]  # they add up to ``total_due``
    current: Decimal
    total_due: Decimal
    past_due: Decimal | None  # None when nothing earlier is past due
    late_on: date
    late_total: Decimal

    @property
    def late_after(self) -> date:
        return self.late_on - timedelta(days=1)


# The penalty schemes' names for the late-charge row (``late_charges_label``), in the catalog for translation.
LATE_CHARGE_LABELS = (gettext_noop("Penalties"), gettext_noop("Interest and penalties"))


def money_box(figures: BillSummary, *, late_charges: str = "Penalties") -> MoneyBox:
    """The box's rows; ``late_charges`` names the late-charge row as the ordinance does (the scheme's
    ``late_charges_label``: "Penalties", or "Interest and penalties" where it charges interest)."""
    previous = (_("Previous balance (%(date)s)") % {"date": fmt_day(figures.previous_date)}
                if figures.previous_date else _("Previous balance"))
    rows = (
        MoneyRow(previous, figures.previous_balance),
        MoneyRow(_("Payments received since"), figures.payments),
        MoneyRow(_(late_charges), figures.penalties),
        *((MoneyRow(_("Fees, credits and adjustments"), figures.other),) if figures.other != ZERO else ()),
        MoneyRow(_("Current charges"), figures.current),
    )
    return MoneyBox(rows=rows, current=figures.current, total_due=figures.total_due,
                    past_due=figures.past_due if figures.past_due > ZERO else None,
                    late_on=figures.late_on, late_total=figures.late_total)
