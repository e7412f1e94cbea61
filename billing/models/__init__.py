"""Design overview: rates, bills, and the ledger.

* **Ordinance as data.** The installed preset's tables are dated sections of ``ordinance`` (billing
  calendar, penalty scheme) it selects; ``RateSchedule`` and ``Fee`` are effective-dated versions loaded
  from the preset file, each carrying its citation (a schedule's ``rules`` name its rate structure).
  ``billing.ordinance`` builds the strategies from these rows. A bill is rated with the schedule in force
  on its bill date, so editing the preset never rewrites history.
* **Bills are issued, never edited.** A bill gets its number when it is created by a billing run and its
  lines (kind, description, citation, quantity, rate, amount — each rounded once, half-up) never change.
  Corrections are ``Adjustment`` rows (credit or debit memos); voiding keeps the record. The database
  forbids two live bills for one account and bill date, so concurrent or re-started runs cannot
  double-bill.
* **Balances are derived.** Every charge, penalty, payment and adjustment is an append-only
  ``LedgerEntry`` (debits positive, credits negative). Balances — of an account, of a bill, of its
  principal on a given day — are computed from entries by ``billing.ledger`` (the payment order: oldest
  bill first, within a bill's principal water rents, then fines, then fees), never stored.
* **Runs are records.** ``BillingRun`` keeps counts, totals and progress; its ``BillingRunChunk`` rows are
  units of work any Celery worker can take; ``BillingException`` rows are accounts a clerk must look at.
"""

from .amendments import AmendmentRebill
from .bills import Bill, BillFigures, BillLine
from .charges import Deposit, PendingCharge
from .ledger import AccountStanding, LedgerEntry, PenaltyWaiver, PriorPayment, PriorRelevy
from .ordinance import Fee, PaymentOrder, RateSchedule, money_field
from .payments import Adjustment, Payment, PaymentReversal
from .runs import BillingException, BillingRun, BillingRunChunk, BillMessage, MailFile


def _history_models_here(*models) -> None:
    """simple-history names a history model's module after the app when its model is not in the app's ``models``
    module itself (ours are in its submodules): each is placed where its model is imported from, here, so the
    shell, pickling and error messages find ``billing.models.HistoricalPayment`` as they found it before."""
    for model in models:
        history = model.history.model
        history.__module__ = __name__
        globals()[history.__name__] = history


_history_models_here(AmendmentRebill, BillingException, BillMessage, Deposit, Fee, Payment, PenaltyWaiver,
                     RateSchedule)

__all__ = [
    "money_field", "PaymentOrder", "RateSchedule", "Fee", "BillingRun", "MailFile", "BillMessage",
    "BillingRunChunk", "BillingException", "Bill", "BillFigures", "BillLine", "Payment", "PaymentReversal",
    "Adjustment", "LedgerEntry", "AccountStanding", "PriorPayment", "PriorRelevy", "PenaltyWaiver", "PendingCharge",
    "Deposit", "AmendmentRebill",
]
