"""Which district's rules bill an account: the premises' district on a day, from its dated history
(``accounts.PremisesDistrict``), and a billing period split by the days in each district.

A village names no districts and has no history rows: every account is in district "" (the installation's tables),
and nothing here costs a query beyond asking whether the installation has districts (``ordinance.selectors.districts``,
read once per install). A period's days are the days after its first reading up to its last, (start, end]: the day a
premises moves is its first day in its new district.
"""

from collections import defaultdict
from datetime import date, timedelta

from django.db import connection
from django.db.models import OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from accounts.models import Account, PremisesDistrict
from core.db import is_any_of
from ordinance.models import District
from ordinance.selectors import districts

from .ordinance import ordinance_on

History = list[tuple[date, str]]  # (effective_on, district code), oldest first


def district_history(account_ids, *, installed=None) -> dict[int, History]:
    """Each account's premises' districts, oldest first (an account whose premises is in none is left out); {} where
    the installation names no districts (``installed``: the utility row, when the caller has it). One query."""
    if not account_ids or not districts(installed=installed):
        return {}
    where, params = is_any_of("a.id", list(account_ids))
    history: dict[int, History] = defaultdict(list)
    with connection.cursor() as cursor:
        # The tables are the models' own; the ids go as one parameter.
        cursor.execute(
            f"SELECT a.id, pd.effective_on, d.code FROM {Account._meta.db_table} a"  # noqa: S608
            f" JOIN {PremisesDistrict._meta.db_table} pd ON pd.premises_id = a.premises_id"
            f" JOIN {District._meta.db_table} d ON d.id = pd.district_id"
            f" WHERE {where} ORDER BY a.id, pd.effective_on", params)
        for account_id, effective_on, code in cursor.fetchall():
            if isinstance(effective_on, str):  # SQLite returns text
                effective_on = date.fromisoformat(effective_on)
            history[account_id].append((effective_on, code))
    return dict(history)


def district_on(history: History, day: date) -> str:
    """The district of ``day`` ("" before the first change, or with none)."""
    code = ""
    for effective_on, district in history:
        if effective_on > day:
            break
        code = district
    return code


def days_by_district(history: History, start: date, end: date) -> list[tuple[str, int]]:
    """The days of the period (start, end] in each district, in order: one part where the premises stayed put."""
    parts: list[tuple[str, int]] = []
    day = start
    code = district_on(history, start + timedelta(days=1))
    for effective_on, district in history:
        if effective_on <= start + timedelta(days=1) or effective_on > end:
            continue
        if district != code:
            parts.append((code, (effective_on - timedelta(days=1) - day).days))
            day, code = effective_on - timedelta(days=1), district
    parts.append((code, max((end - day).days, 0)))
    return [(code, days) for code, days in parts if days > 0] or [(code, 0)]


def gallons_by_days(gallons: int, parts: list[tuple[str, int]]) -> list[int]:
    """The period's gallons shared by the days of each part, whole gallons that add up to the whole: each part's
    share rounded down, and the gallons left over given to the largest remainders (the earlier part on a tie)."""
    total_days = sum(days for _, days in parts)
    if total_days == 0:
        return [gallons] + [0] * (len(parts) - 1)
    shares = [(gallons * days) // total_days for _, days in parts]
    left = gallons - sum(shares)
    remainders = sorted(range(len(parts)), key=lambda i: (-((gallons * parts[i][1]) % total_days), i))
    for i in remainders[:left]:
        shares[i] += 1
    return shares


def ordinances_by_account(account_ids, *, on: date, installed=None) -> dict:
    """Each account's ordinance on ``on`` by its premises' district that day (``billing.ordinance.ordinance_on``); {}
    where the installation names no districts (the one ordinance applies to every account)."""
    history = district_history(account_ids, installed=installed)
    if not history:
        return {}
    ordinances: dict = {}
    out = {}
    for account_id in account_ids:
        code = district_on(history.get(account_id, []), on)
        if code not in ordinances:
            ordinances[code] = ordinance_on(on, code)
        out[account_id] = ordinances[code]
    return out


def with_district_on(accounts, *, on: date):
    """``accounts`` (a queryset) with ``district_on_day``: the code of the district each premises is in on ``on``
    ("" in none)."""
    latest = PremisesDistrict.objects.filter(premises=OuterRef("premises"), effective_on__lte=on).order_by(
        "-effective_on").values("district__code")[:1]
    return accounts.annotate(district_on_day=Coalesce(Subquery(latest), Value("")))


def accounts_in_district(code: str, *, on: date) -> set[int]:
    """The accounts whose premises is in district ``code`` on ``on`` ("" : in none)."""
    return set(with_district_on(Account.objects.all(), on=on).filter(district_on_day=code).values_list(
        "id", flat=True))


def account_district(account_id: int, *, on: date) -> str:
    """The district the account's premises is in on ``on`` ("" in a village, or in none)."""
    return district_on(district_history([account_id]).get(account_id, []), on)
