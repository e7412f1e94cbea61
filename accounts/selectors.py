"""Reads of accounts: one by its number, and the search the clerk's list and the API share."""

from django.db.models import Q, QuerySet

from core.errors import NotFound

from .models import Account


def account_get(*, account_no: str) -> Account:
    try:
        return Account.objects.select_related("owner", "occupant", "premises").get(account_no=account_no)
    except Account.DoesNotExist as exc:
        raise NotFound(f"no account '{account_no}'", field="account_no") from exc


def account_search(*, q: str = "") -> QuerySet[Account]:
    """Accounts by number, owner's or occupant's name, service address or SBL (any part), by number."""
    rows = Account.objects.select_related("owner", "occupant", "premises").order_by("account_no")
    if q:
        rows = rows.filter(Q(account_no__icontains=q) | Q(owner__name__icontains=q) | Q(occupant__name__icontains=q)
                           | Q(premises__service_address__icontains=q) | Q(premises__sbl__icontains=q))
    return rows
