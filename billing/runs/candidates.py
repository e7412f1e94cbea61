"""Which accounts may be due on a date: the calendar's books, and meters the calendar bills on their own."""

from datetime import date

from django.db.models import Q

from accounts.models import Account
from meters.models import Installation

from ..utility import installed_utility

BILLABLE_STATUSES = (Account.Status.ACTIVE, Account.Status.VACANT)


def billing_candidates(*, run_on: date) -> list[int]:
    """Ids of accounts that may be due on ``run_on``: in a book billed that day, or with a monthly meter."""
    calendar = installed_utility().calendar
    books = calendar.due_books(run_on)
    base = Account.objects.filter(status__in=BILLABLE_STATUSES)
    if run_on.day != 1:
        return []
    monthly_sizes = [s for s in ("1 1/2", "2", "3", "4", "6", "8")
                     if calendar.frequency_for(s) == "monthly"]
    monthly = Installation.objects.filter(meter__size__in=monthly_sizes, installed_on__lte=run_on).filter(
        Q(removed_on__isnull=True) | Q(removed_on__gte=run_on)).values("account_id")
    return list(base.filter(Q(book__in=books) | Q(id__in=monthly)).order_by("id").values_list("id", flat=True))
