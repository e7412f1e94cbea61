"""Reads of accounts: one by its number, and the search the clerk's list and the API share."""

from django.db.models import Q, QuerySet, Subquery

from core.errors import NotFound

from .models import Account, PortalLink


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


def emailed_bills(prefix: str = "") -> Q:
    """The accounts (``prefix`` "account__" from a bill) whose bills are emailed, not mailed: paperless with
    an address to send them to — the owner's on file, or an active customer's linked online. Paperless with
    neither is printed: a bill that reaches nobody is not a bill."""
    linked = PortalLink.objects.filter(user__is_active=True).exclude(user__email="").values("account_id")
    return Q(**{f"{prefix}paperless": True}) & (~Q(**{f"{prefix}owner__email": ""})
                                                 | Q(**{f"{prefix}id__in": Subquery(linked)}))
