"""The late charges owed and not yet posted on a day: what the relevy list tells the clerk is missing from the books
(the nightly assessment has not run, or a fact recorded since changed what is owed).

An account whose posted late charges are provably those owed has none, and its ledger is not read: the nightly
assessment reconciled it and nothing since can change it (``shortcuts.penalty_candidates_since``), or every one of
its bills was paid in full before its first penalty day (``_owes_no_late_charge``). The others are planned as the
nightly job plans them (``rules.penalties_owed``)."""

from collections import defaultdict
from datetime import date
from decimal import Decimal

from core.csvimport import chunked
from core.money import ZERO

from ..districts import ordinances_by_account
from ..ledger.allocation import DEPOSIT_KINDS, PENALTY_KINDS, Entry, Ledger, replay_order
from ..ledger.selectors import entries_for_accounts
from ..models import Bill, LedgerEntry
from ..ordinance import ordinance_on
from .plan import penalty_candidates, waived_charges
from .rules import BillTerms, penalties_owed
from .shortcuts import penalty_candidates_since

# Accounts read at a time: a chunk's ids go into one IN (...) list per query.
CHUNK = 2000


def late_charges_not_posted(*, through: date) -> Decimal:
    """The late charges owed through ``through`` less those posted, over every account."""
    ordinance = ordinance_on(through)
    scheme, order = _DatesOnce(ordinance.penalties), ordinance.payment_order
    not_posted = ZERO
    # The late charges owed and not yet posted: an account whose posted late charges are provably those owed
    # has none, and its ledger is not read.
    settled = _late_charges_as_owed(through=through)
    unsettled = [account_id for account_id in _accounts_on_the_ledger(through=through) if account_id not in settled]
    for chunk in chunked(unsettled, CHUNK):
        entries = entries_for_accounts(chunk, through=through)
        waived = waived_charges(account_ids=chunk)  # a waived charge is owed as nothing
        schemes = {account_id: _DatesOnce(own.penalties)  # a town's: each account's district's rule
                   for account_id, own in ordinances_by_account(chunk, on=through, installed=ordinance.utility).items()}
        terms: dict[int, list[BillTerms]] = defaultdict(list)
        for account_id, bill_date, bill_id, due_date, converted_on in Bill.objects.filter(
                account_id__in=chunk, due_date__lt=through).exclude(status=Bill.Status.VOID).values_list(
                "account_id", "bill_date", "id", "due_date", "converted_on"):
            terms[account_id].append(BillTerms(key=(bill_date, bill_id), bill_date=bill_date, due_date=due_date,
                                               charges_from=converted_on))
        for account_id in chunk:
            account_entries = entries.get(account_id, [])
            posted = sum((e.amount for e in account_entries if e.kind in PENALTY_KINDS), ZERO)
            own = schemes.get(account_id, scheme)
            if _owes_no_late_charge(account_entries, terms.get(account_id, []), scheme=own, through=through,
                                    order=order):
                owed = []
            else:
                owed = penalties_owed(entries=account_entries, bills=terms.get(account_id, []), scheme=own,
                                      through=through, order=order, waived=waived.get(account_id, {}).keys())
            not_posted += sum((p.amount for p in owed), ZERO) - posted
    return not_posted


def _accounts_on_the_ledger(*, through: date) -> list[int]:
    """Every account with an entry of what is owed or paid on or before ``through``, by id."""
    return list(LedgerEntry.objects.filter(posted_on__lte=through).exclude(kind__in=DEPOSIT_KINDS)
                .order_by("account_id").values_list("account_id", flat=True).distinct())


def _late_charges_as_owed(*, through: date) -> set[int]:
    """The accounts whose late charges posted through ``through`` are provably those the facts make owed: the
    nightly assessment reconciled them and nothing since can change what they owe, so their plan through the
    levy date is empty (``shortcuts.penalty_candidates_since``). None of them without a nightly
    assessment of the levy date or an earlier day to rely on."""
    may_change = penalty_candidates_since(as_of=through)
    if may_change is None:
        return set()
    return set(penalty_candidates(as_of=through)) - set(may_change)


class _DatesOnce:
    """The preset's penalty scheme, each bill's penalty days worked out once per bill date, due date and last
    day: the relevy asks for every bill's days through the levy date, and a village's bills share a few bill
    and due dates. The days are the scheme's own (its ``dates``, unchanged and not to be modified); everything
    else is the scheme's."""

    def __init__(self, scheme):
        self._scheme = scheme
        self._dates: dict[tuple, list] = {}
        self._first_days: dict[tuple, tuple[date | None, bool]] = {}
        self.amount = scheme.amount  # asked for every penalty day: not looked up each time

    def dates(self, *, bill_date: date, due_date: date, through: date) -> list:
        key = (bill_date, due_date, through)
        if key not in self._dates:
            self._dates[key] = self._scheme.dates(bill_date=bill_date, due_date=due_date, through=through)
        return self._dates[key]

    def __getattr__(self, name):
        return getattr(self._scheme, name)

    def first_day_when_paid(self, *, bill_date: date, due_date: date, through: date) -> tuple[date | None, bool]:
        """A bill's first penalty day through ``through`` (None: it has none), and whether every one of its
        charges comes to nothing on a bill with nothing unpaid."""
        key = (bill_date, due_date, through)
        if key not in self._first_days:
            dues = self.dates(bill_date=bill_date, due_date=due_date, through=through)
            self._first_days[key] = (min((due.on for due in dues), default=None), not any(
                self.amount(due, unpaid_principal=ZERO, unpaid_total=ZERO,
                            **({"unpaid_interest": ZERO} if due.with_interest else {})) > ZERO for due in dues))
        return self._first_days[key]


def _owes_no_late_charge(entries: list[Entry], bills: list[BillTerms], *, scheme: _DatesOnce, through: date,
                         order: str) -> bool:
    """True when the facts provably make no late charge owed through ``through`` (``penalties_owed`` would find
    none), proved more cheaply than replaying every penalty day: every bill is paid in full, each of its
    categories exactly zero, at the start of its first penalty day, and no charge is put on it from that day on.

    The replay that finds penalties is the facts' own until it finds the first one. Each bill's categories,
    all zero at the start of its first penalty day, stay zero: nothing is charged to it later, a credit or a
    payment takes only what is unpaid, and no penalty has been found to add to it. So on each of its penalty
    days the bill has nothing unpaid and its charge comes to nothing (``first_day_when_paid``), and no
    first penalty is ever found. An account with a late charge posted is not tried (one is likely owed)."""
    if any(e.kind in PENALTY_KINDS for e in entries):
        return False
    first_day: dict[tuple, date] = {}
    for bill in bills:
        day, nothing_when_paid = scheme.first_day_when_paid(bill_date=bill.bill_date, due_date=bill.due_date,
                                                            through=through)
        if day is not None:
            if not nothing_when_paid:
                return False
            first_day[bill.key] = day
    if not first_day:
        return True
    if any(e.is_charge and first_day.get(e.bill_key, date.max) <= e.posted_on <= through for e in entries):
        return False
    facts = sorted((e for e in entries if e.posted_on <= through), key=replay_order)
    ledger, position = Ledger(order), 0
    for day, key in sorted((day, key) for key, day in first_day.items()):
        while position < len(facts) and facts[position].posted_on < day:
            ledger.post(facts[position])
            position += 1
        balance = ledger.state().bills.get(key)
        if balance is not None and any(balance.unpaid.values()):
            return False
    return True
