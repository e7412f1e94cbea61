"""The account list as a clerk reads it: beside book and status, what each account owes today and how much
of it is past due.

Both come from the ledger (``billing.selectors.account_amounts_due``), read once for the page's accounts —
a fixed number of queries whatever the page size, never one per row — and, for the CSV export, once for
each chunk of the list.
"""

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList

from billing.selectors import account_amounts_due
from core.commands import today
from core.money import fmt_dollars


def _amounts_set(accounts) -> None:
    """Put each account's ``AmountDue`` today on it, as ``amount_due`` (None: nothing on the ledger)."""
    accounts = list(accounts)
    amounts = account_amounts_due(account_ids=[a.pk for a in accounts], as_of=today()) if accounts else {}
    for account in accounts:
        account.amount_due = amounts.get(account.pk)


class AccountChangeList(ChangeList):
    def get_results(self, request):
        super().get_results(request)
        # Evaluates the page's queryset once; the template then iterates the same, cached, rows.
        _amounts_set(self.result_list)


class AccountListMixin:
    """Balance and past-due columns on the account list (mixed into the composed ``AccountAdmin``)."""

    # What it owes right after whose it is: on a 1280-px screen beside the admin's menu, the last columns of a
    # wide list scroll out of sight, and the balance is what a clerk looks for.
    list_display = ("account_no", "owner", "balance", "past_due", "premises__service_address", "book", "status",
                    "category")

    def get_changelist(self, request, **kwargs):
        return AccountChangeList

    def csv_rows_prepare(self, request, objects):
        _amounts_set(objects)

    @admin.display(description="balance")
    def balance(self, obj):
        due = getattr(obj, "amount_due", None)
        return fmt_dollars(due.amount) if due else "—"

    @admin.display(description="past due")
    def past_due(self, obj):
        due = getattr(obj, "amount_due", None)
        return fmt_dollars(due.past_due) if due else "—"

    # The export's cells: plain amounts (123.45), not the page's dollars.
    balance.csv_value = lambda obj: getattr(obj, "amount_due", None) and obj.amount_due.amount
    past_due.csv_value = lambda obj: getattr(obj, "amount_due", None) and obj.amount_due.past_due
