"""Reads of accounts: one by its number, and the search the clerk's list and the API share."""

import re

from django.db.models import F, Q, QuerySet, Subquery, Value
from django.db.models.functions import Replace, Upper
from django.db.models.lookups import Contains, Exact

from core.errors import NotFound

from .models import Account, PortalLink


def account_no_key(typed: str) -> str:
    """An account number as compared when typed: upper case, letters and digits only ("1-00042", "100042" and
    "1 00042" are one number)."""
    return "".join(ch for ch in typed.upper() if ch.isalnum())


def _key_of(field: str):
    return Replace(Replace(Replace(Upper(F(field)), Value("-"), Value("")), Value(" "), Value("")), Value("/"),
                   Value(""))


# A bill stub's scan line as a lockbox scanner reads it (``remittance.lockbox.SCAN``): account, bill, two numbers.
STUB = re.compile(r"\s*(\S+)\s+(\S+)\s+(\d{10})\s+(\d{10})\s*", re.ASCII)


def account_by_code(typed: str) -> Account | None:
    """The account a clerk typed or scanned into a search box: its number (``account_find``), or a bill stub's scan
    line (account, bill, then two ten-digit fields: the lockbox's ``remittance.lockbox.SCAN``), whose first word is
    the account number; None otherwise (a name or an address is searched for, never opened)."""
    stub = STUB.fullmatch(typed)
    return account_find(stub.group(1) if stub else typed)



def account_find(typed: str, queryset: QuerySet[Account] | None = None) -> Account | None:
    """The account a customer or clerk typed, with or without its dash: the number as written first, else the one
    whose number has the same letters and digits (None when there is none, or more than one)."""
    rows = Account.objects.all() if queryset is None else queryset
    typed = typed.strip()
    if not typed:
        return None
    exact = rows.filter(account_no=typed).first()
    if exact is not None:
        return exact
    key = account_no_key(typed)
    if not key:
        return None
    found = list(rows.filter(Exact(_key_of("account_no"), key))[:2])
    return found[0] if len(found) == 1 else None


def account_get(*, account_no: str) -> Account:
    try:
        return Account.objects.select_related("owner", "occupant", "premises").get(account_no=account_no)
    except Account.DoesNotExist as exc:
        raise NotFound(f"no account '{account_no}'", field="account_no") from exc


def account_search(*, q: str = "") -> QuerySet[Account]:
    """Accounts by number (with or without its dash), owner's or occupant's name, service address or SBL (any
    part), by number."""
    rows = Account.objects.select_related("owner", "occupant", "premises").order_by("account_no")
    if q:
        key = account_no_key(q)
        rows = rows.filter(Q(account_no__icontains=q) | Q(owner__name__icontains=q) | Q(occupant__name__icontains=q)
                           | Q(premises__service_address__icontains=q) | Q(premises__sbl__icontains=q)
                           | (Q(Contains(_key_of("account_no"), key)) if key else Q(pk__in=[])))
    return rows


def emailed_bills(prefix: str = "") -> Q:
    """The accounts (``prefix`` "account__" from a bill) whose bills are emailed, not mailed: paperless with
    an address to send them to — the owner's on file, or an active customer's linked online. Paperless with
    neither is printed: a bill that reaches nobody is not a bill."""
    linked = PortalLink.objects.filter(user__is_active=True).exclude(user__email="").values("account_id")
    return Q(**{f"{prefix}paperless": True}) & (~Q(**{f"{prefix}owner__email": ""})
                                                 | Q(**{f"{prefix}id__in": Subquery(linked)}))


def route_key(account: Account) -> tuple:
    """Where an account's premises comes on the field's rounds: its book, its stop on the reading route (unnumbered
    stops after, by address), then its service address."""
    stop = account.premises.route_order
    return (account.book, stop is None, stop or 0, account.premises.service_address.lower(), account.account_no)
