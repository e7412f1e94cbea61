"""Which accounts may be due on a date: the calendar's books, and meters the calendar bills on their own — in a town,
each district's calendar for the accounts whose premises are in it that day."""

from datetime import date

from django.db.models import Q

from accounts.models import Account
from meters.models import Installation
from ordinance.selectors import districts

from ..districts import with_district_on
from ..ordinance import ordinance_on

BILLABLE_STATUSES = (Account.Status.ACTIVE, Account.Status.VACANT)


def billing_candidates(*, run_on: date) -> list[int]:
    """Ids of accounts that may be due on ``run_on``: in a book the calendar bills that day, or with a meter
    of a size whose frequency it bills that day whatever the book. ``bill_accounts`` decides each one."""
    base = Account.objects.filter(status__in=BILLABLE_STATUSES)
    town = districts()
    if not town:
        return _candidates(base, run_on=run_on, district="")
    base = with_district_on(base, on=run_on)
    return sorted(account_id for code in ("", *town)
                  for account_id in _candidates(base.filter(district_on_day=code), run_on=run_on, district=code))


def _candidates(base, *, run_on: date, district: str) -> list[int]:
    calendar = ordinance_on(run_on, district).calendar
    books = calendar.due_books(run_on)
    frequencies = calendar.due_frequencies(run_on)
    if not books and not frequencies:
        return []
    due = Q(book__in=books)
    if frequencies:
        installed = Installation.objects.filter(installed_on__lte=run_on).filter(
            Q(removed_on__isnull=True) | Q(removed_on__gte=run_on))
        sizes_in_use = installed.values_list("meter__size", flat=True).distinct().order_by()
        sizes = [size for size in sizes_in_use if calendar.frequency_for(size) in frequencies]
        due |= Q(id__in=installed.filter(meter__size__in=sizes).values("account_id"))
    return list(base.filter(due).order_by("id").values_list("id", flat=True))
