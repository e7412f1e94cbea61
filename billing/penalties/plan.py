"""Planning an assessment of late charges: for some accounts (account id → the last day to look at), what the
facts make owed (``billing.penalties.rules.penalties_owed``) compared with what the books hold, and the postings that
would bring them in line — new late charges on their own days, and corrections of posted ones the facts no
longer support. It writes nothing; ``billing.services.penalties.penalties_reconcile`` locks the accounts, plans
and posts, and ``billing.penalties.selectors.penalties_preview`` only plans, so the preview of a night is what
``assess_penalties`` posts that night on the facts known now.

An approved waiver (``PenaltyWaiver``) is one of those facts: the charge it waives is owed as nothing, so the
plan corrects it to zero on its own day and bill ("… waived: <reason>") and never posts it again.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from core.db import collector_paused, values_rows
from core.money import ZERO

from ..districts import ordinances_by_account
from ..ledger.allocation import DEPOSIT_KINDS, REVERSAL_KIND, Entry
from ..ledger.posting import Posting, correction_source, late_charge_source
from ..ledger.selectors import charge_due, fine_dues, replay_entry
from ..ledger.standing import accounts_where
from ..models import Bill, LedgerEntry, PenaltyWaiver
from ..ordinance import ordinance_on
from .rules import BillTerms, penalties_owed

CHUNK = 500
# The late charges a scheme posts, and the kind of entry that corrects each.
LATE_CHARGE_KINDS = (LedgerEntry.Kind.PENALTY.value, LedgerEntry.Kind.INTEREST.value)
CORRECTION_OF = {LedgerEntry.Kind.PENALTY.value: LedgerEntry.Kind.PENALTY_CORRECTION.value,
                 LedgerEntry.Kind.INTEREST.value: LedgerEntry.Kind.INTEREST_CORRECTION.value}

WaivedKey = tuple[int, date, str]  # (bill id, day, kind) of a late charge


def penalty_candidates(*, as_of: date) -> list[int]:
    """Accounts with a bill (live or voided) past its due date: any of them may owe a penalty or hold one
    the facts no longer support."""
    return list(Bill.objects.filter(due_date__lt=as_of).order_by("account_id")
                .values_list("account_id", flat=True).distinct())


@dataclass(frozen=True)
class Waived:
    reason: str
    decided_at: datetime


def waived_charges(*, account_ids) -> dict[int, dict[WaivedKey, Waived]]:
    """The late charges of these accounts waived by an approved waiver: account id → {(bill id, day, kind):
    the waiver's reason and when it was approved}."""
    out: dict[int, dict[WaivedKey, Waived]] = defaultdict(dict)
    for account_id, bill_id, day, kind, reason, decided_at in PenaltyWaiver.objects.filter(
            account_id__in=list(account_ids), status=PenaltyWaiver.Status.APPROVED).values_list(
            "account_id", "entry__bill_id", "entry__posted_on", "entry__kind", "reason", "decided_at"):
        out[account_id][(bill_id, day, kind)] = Waived(reason, decided_at)
    return out


@dataclass
class PlanFacts:
    """What planning the late charges of some accounts reads, loaded in three queries."""

    entries: dict[int, list[Entry]]  # each account's entries of what is owed and paid (``entries_for_accounts``)
    bills: dict[int, list[BillTerms]]  # each account's live bills due before the last day
    numbers: dict[int, str]  # every bill's number, by id
    # Per account: each late charge posted, as ((bill id, day, kind), [entry id, account id, net amount, kind]),
    # its net being the charge with its corrections; and how many times each charge was corrected.
    posted: dict[int, list[tuple[WaivedKey, list]]]
    corrected_times: dict[int, int]


def plan_facts(account_ids: list[int], *, through: date) -> PlanFacts:
    """The entries, bills and posted late charges of these accounts (ids in order) through ``through``: one
    query of bills and one of ledger entries (late charges among them), as ``entries_for_accounts`` and the
    books would give them."""
    wanted = set(account_ids)
    where = accounts_where(account_ids)
    bill_keys: dict[int, tuple] = {}
    bill_dues: dict[int, date] = {}
    numbers: dict[int, str] = {}
    bills: dict[int, list[BillTerms]] = defaultdict(list)
    void = Bill.Status.VOID
    for bill_id, account_id, bill_date, due_date, number, status, converted_on in values_rows(
            Bill.objects.filter(where).order_by().values_list(
                "id", "account_id", "bill_date", "due_date", "number", "status", "converted_on")):
        if account_id not in wanted:
            continue
        key = bill_keys[bill_id] = (bill_date, bill_id)
        bill_dues[bill_id] = due_date
        numbers[bill_id] = number
        if due_date < through and status != void:
            bills[account_id].append(BillTerms(key=key, bill_date=bill_date, due_date=due_date,
                                               charges_from=converted_on))
    rows = [row for row in values_rows(
        LedgerEntry.objects.filter(where, posted_on__lte=through).exclude(kind__in=DEPOSIT_KINDS).order_by("id")
        .values_list("account_id", "id", "kind", "posted_on", "amount", "bill_id", "corrects_id", "due_on"))
        if row[0] in wanted]
    missing = {row[5] for row in rows if row[5] is not None and row[5] not in bill_keys}
    if missing:  # an entry on another account's bill
        for bill_id, bill_date, due_date, number in Bill.objects.filter(id__in=missing).values_list(
                "id", "bill_date", "due_date", "number"):
            bill_keys[bill_id], bill_dues[bill_id], numbers[bill_id] = (bill_date, bill_id), due_date, number
    fines = fine_dues({row[5] for row in rows if row[2] == "fine" and row[5] is not None})
    # A reversal within the range takes itself and the payment it reverses out of the replay.
    reversed_ids = {row[6] for row in rows if row[2] == REVERSAL_KIND}
    entries: dict[int, list[Entry]] = defaultdict(list)
    posted: dict[int, list[tuple[WaivedKey, list]]] = defaultdict(list)
    by_id: dict[int, list] = {}
    corrected_times: dict[int, int] = defaultdict(int)
    late_kinds, correction_kinds = set(LATE_CHARGE_KINDS), set(CORRECTION_OF.values())
    for account_id, entry_id, kind, posted_on, amount, bill_id, corrects_id, due_on in rows:
        if kind in late_kinds:
            by_id[entry_id] = row = [entry_id, account_id, amount, kind]
            posted[account_id].append(((bill_id, posted_on, kind), row))
            continue  # the replay makes its own late charges
        if kind in correction_kinds:
            by_id[corrects_id][2] += amount
            corrected_times[corrects_id] += 1
            continue
        if kind == REVERSAL_KIND or entry_id in reversed_ids:
            continue
        entries[account_id].append(replay_entry(kind, posted_on, amount,
                                                bill_keys[bill_id] if bill_id is not None else None, entry_id,
                                                None, charge_due(kind, bill_id, due_on, bill_dues, fines)))
    return PlanFacts(entries=entries, bills=bills, numbers=numbers, posted=posted, corrected_times=corrected_times)


def penalties_plan(*, through: dict[int, date]) -> list[Posting]:
    """The postings that bring the late charges of these accounts (account id → the last day to look at) in
    line with what the facts, approved waivers among them, make owed. Reads only."""
    account_ids = sorted(through)
    if not account_ids:
        return []
    last_day = max(through.values())
    ordinance = ordinance_on(last_day)
    scheme, order = DatesOnce(ordinance.penalties), ordinance.payment_order
    # A town: each account's late charges by its district's penalty rule (``billing.districts``).
    schemes, by_district = {}, {}
    for account_id, own in ordinances_by_account(account_ids, on=last_day, installed=ordinance.utility).items():
        if own.district not in by_district:
            by_district[own.district] = DatesOnce(own.penalties)
        schemes[account_id] = by_district[own.district]
    with collector_paused():
        facts = plan_facts(account_ids, through=last_day)
        waived = waived_charges(account_ids=account_ids)
        return _plan(account_ids, through=through, facts=facts, waived=waived, scheme=scheme, order=order,
                     schemes=schemes)


def _plan(account_ids, *, through, facts: PlanFacts, waived, scheme, order, schemes=None) -> list[Posting]:
    numbers, corrected_times = facts.numbers, facts.corrected_times
    new: list[Posting] = []
    schemes = schemes or {}
    for account_id in account_ids:
        mine = waived.get(account_id, {})
        posted = facts.posted.get(account_id, ())
        last = through[account_id]
        owed = penalties_owed(entries=facts.entries.get(account_id, ()), bills=facts.bills.get(account_id, ()),
                              scheme=schemes.get(account_id, scheme), through=last, order=order,
                              waived=mine.keys())
        if not owed and not posted:
            continue
        rows = dict(posted)
        seen = set()
        for penalty in owed:
            bill_id, day, kind = penalty.bill_key[1], penalty.due.on, penalty.due.kind
            seen.add((bill_id, day, kind))
            row = rows.get((bill_id, day, kind))
            if row is None:
                new.append(Posting(account_id=account_id, bill_id=bill_id, kind=kind,
                                   posted_on=day, amount=penalty.amount, source=late_charge_source(bill_id, day),
                                   citation=penalty.due.citation,
                                   description=f"{penalty.due.description} on bill {numbers[bill_id]}"))
            elif row[2] != penalty.amount:
                new.append(_correction(row, penalty.amount, bill_id=bill_id, day=day, number=numbers[bill_id],
                                       times=corrected_times[row[0]], rule=penalty.due.description))
        for (bill_id, day, kind), row in posted:
            if day <= last and (bill_id, day, kind) not in seen and row[2]:
                new.append(_correction(row, ZERO, bill_id=bill_id, day=day, number=numbers[bill_id],
                                       times=corrected_times[row[0]], waived=mine.get((bill_id, day, kind))))
    return new


class DatesOnce:
    """A penalty scheme whose ``dates`` are worked out once for each bill date, due date and last day: the
    bills of a book share them. Everything else is the scheme's."""

    def __init__(self, scheme):
        self._scheme = scheme
        self._dates: dict[tuple[date, date, date], tuple] = {}

    def dates(self, *, bill_date: date, due_date: date, through: date) -> tuple:
        key = (bill_date, due_date, through)
        found = self._dates.get(key)
        if found is None:
            found = self._dates[key] = tuple(self._scheme.dates(bill_date=bill_date, due_date=due_date,
                                                                 through=through))
        return found

    def dates_in_order(self, *, bill_date: date, due_date: date, through: date) -> tuple:
        return self._scheme.dates_in_order(bill_date=bill_date, due_date=due_date, through=through)

    def amount(self, due, **unpaid) -> Decimal:
        return self._scheme.amount(due, **unpaid)

    def amount_of_unpaid(self, due, unpaid: dict) -> Decimal:
        return self._scheme.amount_of_unpaid(due, unpaid)

    def owes_no_more_late_charges(self, unpaid: dict) -> bool:
        return self._scheme.owes_no_more_late_charges(unpaid)

    @property
    def charges_on(self) -> tuple[str, ...]:
        return self._scheme.charges_on


def _correction(row: list, owed: Decimal, *, bill_id: int, day: date, number: str, times: int,
                waived: Waived | None = None, rule: str = "") -> Posting:
    """The correction that brings a posted late charge (corrected ``times`` times so far) to ``owed``; a
    waived charge's says so, with the waiver's reason; a re-priced one names the rule that now makes it ("5%",
    after an amendment), so no line reads the old rate beside the new charge."""
    entry_id, account_id, net, kind = row
    what = f"{LedgerEntry.Kind(kind).label} of {day:%b} {day.day}, {day:%Y} on bill {number}"
    description = f"{what} waived: {waived.reason}" if waived is not None else f"{what} corrected to ${owed:,.2f}"
    if waived is None and rule:
        description = f"{description} ({rule})"[:200]  # LedgerEntry.description's length
    return Posting(account_id=account_id, bill_id=bill_id, kind=CORRECTION_OF[kind],
                   posted_on=day, amount=owed - net, corrects_id=entry_id,
                   source=correction_source(entry_id, times + 1, kind=kind),
                   description=description)
