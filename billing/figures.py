"""Each bill's money box, worked out once and kept (``BillFigures``).

A bill's figures (``billing.selectors.BillSummary``) are the account as it stood when the bill was issued:
only what was recorded by then counts, so they never change afterwards. Working them out replays the account's
ledger (``bill_summaries``), a cost that grows with the account's history; the PDF, the paperless e-mail and
the portal's bill page each need them, so the first of them to ask works them out and keeps them, and the
others read the kept row. On bill day the workers rendering the PDFs and the one sending the e-mails share the
work: a bill's history is replayed once, whoever comes first.

With the fast paths off (``billing.fast_paths``) every figure is replayed and nothing kept is read.
"""

from django.db.models import Model

from .fast_paths import fast_paths_on
from .models import Bill, BillFigures
from .ordinance import Ordinance
from .selectors import BillSummary, bill_summaries

FIELDS = tuple(f.name for f in BillFigures._meta.concrete_fields if f.name not in ("bill", "worked_at"))


def bill_figures(*, bills: list[Bill], ordinance: Ordinance | None = None) -> dict[int, BillSummary]:
    """The figures of these bills, by bill id: the kept ones read, the others worked out and kept."""
    if not bills:
        return {}
    if not fast_paths_on():
        return bill_summaries(bills=bills, ordinance=ordinance)
    ids = [bill.pk for bill in bills]
    figures = {row[0]: BillSummary(**dict(zip(FIELDS, row[1:], strict=True)))
               for row in BillFigures.objects.filter(bill_id__in=ids).values_list("bill_id", *FIELDS)}
    missing = [bill for bill in bills if bill.pk not in figures]
    if missing:
        worked = bill_summaries(bills=missing, ordinance=ordinance)
        # Two workers may work out one bill at once: the same figures, and the first row written stays.
        BillFigures.objects.bulk_create([_row(bill_id, summary) for bill_id, summary in worked.items()],
                                        ignore_conflicts=True)
        figures.update(worked)
    return figures


def _row(bill_id: int, summary: BillSummary) -> Model:
    return BillFigures(bill_id=bill_id, **{name: getattr(summary, name) for name in FIELDS})
