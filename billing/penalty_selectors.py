"""Reads of the penalties in the clerk's office: what an assessment would post, what was posted, what was waived.

``penalties_plan`` is the planning half of an assessment: for some accounts (account id → the last day to
look at) it compares what the facts make owed (``billing.penalties.penalties_owed``) with what the books hold
and returns the postings that would bring them in line — new late charges on their own days, and corrections
of posted ones the facts no longer support. It writes nothing; ``billing.services.penalties.penalties_reconcile``
locks the accounts, plans and posts, and ``penalties_preview`` only plans, so the preview of a night is what
``assess_penalties`` posts that night on the facts known now.

An approved waiver (``PenaltyWaiver``) is one of those facts: the charge it waives is owed as nothing, so the
plan corrects it to zero on its own day and bill ("… waived: <reason>") and never posts it again.

``penalties_preview`` plans only the accounts whose plan can be non-empty when the nightly job has
assessed a recent day (``penalty_candidates_since``), and every candidate otherwise.

``penalty_register`` lists the late charges posted in a range of days, each with its corrections netted and
its waiver, with totals by kind and citation.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.db.models import Count, Q, Sum

from accounts.models import Account
from core.clock import today
from core.db import collector_paused, values_rows
from core.errors import ApplicationError
from core.models import NightlyStep
from core.money import ZERO

from .fast_paths import fast_paths_on
from .ledger.allocation import CATEGORY, DEPOSIT_KINDS, PRINCIPAL_CATEGORIES, REVERSAL_KIND, Entry
from .ledger.posting import Posting, correction_source, late_charge_source
from .ledger.selectors import replay_entry
from .ledger.standing import accounts_where, open_balances
from .models import Bill, LedgerEntry, PenaltyWaiver, Utility
from .ordinance import ordinance_on
from .penalties import BillTerms, late_charge, penalties_owed

CHUNK = 500
# The late charges a scheme posts, and the kind of entry that corrects each.
LATE_CHARGE_KINDS = (LedgerEntry.Kind.PENALTY.value, LedgerEntry.Kind.INTEREST.value)
CORRECTION_OF = {LedgerEntry.Kind.PENALTY.value: LedgerEntry.Kind.PENALTY_CORRECTION.value,
                 LedgerEntry.Kind.INTEREST.value: LedgerEntry.Kind.INTEREST_CORRECTION.value}
# How far ahead the preview plans (the nightly run assesses as of its own day; a later day is for planning).
PREVIEW_DAYS_AHEAD = 31
# The register lists at most a year of charges on one page.
REGISTER_MAX_DAYS = 366

# The nightly job's step that assesses penalties (``waterbilling.nightly.STEPS``).
NIGHTLY_PENALTIES_STEP = "penalties"
# A fact written by a transaction still open when the nightly assessment started, or by a server whose clock
# is a little behind, carries a time a little before the step's start: it counts as recorded after it.
RECORDED_MARGIN = timedelta(minutes=5)
# The kinds of entry that charge principal (water, fees, fines, debit memos), late charges apart.
PRINCIPAL_KINDS = tuple(kind for kind, category in CATEGORY.items() if category in PRINCIPAL_CATEGORIES)
# Half a cent: an account balance summed by the database (in floating point on SQLite) below it is at most zero.
HALF_CENT = Decimal("0.005")

WaivedKey = tuple[int, date, str]  # (bill id, day, kind) of a late charge


def penalty_candidates(*, as_of: date) -> list[int]:
    """Accounts with a bill (live or voided) past its due date: any of them may owe a penalty or hold one
    the facts no longer support."""
    return list(Bill.objects.filter(due_date__lt=as_of).order_by("account_id")
                .values_list("account_id", flat=True).distinct())


def last_nightly_assessment() -> tuple[date, datetime] | None:
    """The latest day the nightly job's penalties step finished for, and when that step started."""
    row = (NightlyStep.objects.filter(name=NIGHTLY_PENALTIES_STEP, status=NightlyStep.Status.DONE,
                                      started_at__isnull=False)
           .order_by("-run__run_on").values_list("run__run_on", "started_at").first())
    return (row[0], row[1]) if row else None


def penalty_candidates_since(*, as_of: date) -> list[int] | None:
    """The candidates on ``as_of`` whose plan through ``as_of`` can be non-empty, knowing that the nightly job
    assessed every account through an earlier day; None when there is no such shortcut (plan every candidate).

    Let L be the latest day whose nightly ``penalties`` step is done and T when that step started. The step
    (``penalties_assess_due``) reconciled every account with a bill due before L through L, at T or later:
    its posted late charges of days up to L were then what the facts made owed, and a later reconciliation
    (an assessment, a correction after a payment) on unchanged facts keeps them so. What is owed on a day
    depends only on the account's ledger entries, its bills, the approved waivers and the preset's penalty
    scheme and payment order (``Utility``). Every change of the first three is recorded: a payment, a
    reversal, a memo, a void, a bill are ledger entries (``ledger_post``/``ledger_post_many`` stamp
    ``created_at``), a waiver has ``requested_at``/``decided_at``. So for ``as_of`` = D ≥ L, a candidate
    can have something to post only if

    * it has a bill or ledger entry recorded since T, other than the late charges and corrections
      reconciliations post (they follow from the facts); or a bill due on or after L with a late-charge day
      on or before L (the assessment of L did not look at it; a bill whose days all fall after L owes none
      through L, and none can have been posted on it but by an assessment of a later day); or an entry
      dated after L (a late charge posted ahead of L, a payment reversal dated after L that takes its payment
      out of the whole replay); or a waiver asked for or decided since T; or
    * a live bill has a late-charge day in (L, D] under the scheme, and the account's balance
      at the end of L is more than zero. With nothing dated after L, the replay's balance at the start of
      every day after L is the books' balance at the end of L (the late charges posted through L being
      those owed); at most zero, no bill owes anything (a credit left over always pays what is unpaid, and
      no charge is below zero), so every charge computed on it is nothing.

    T is taken ``RECORDED_MARGIN`` early. No shortcut without a nightly assessment, for a day before L (an
    assessment of L saw bills and reversals a plan of an earlier day leaves out), or when the utility was
    changed since T (a new penalty scheme or payment order re-prices every day)."""
    split = penalty_candidates_split(as_of=as_of)
    return None if split is None else sorted(split.changed | split.carried)


@dataclass(frozen=True)
class CandidatesSince:
    assessed: date  # L: the latest day the nightly assessment reconciled every account through
    since: datetime  # T, less the margin: a fact recorded since may have changed what was owed through L
    changed: set[int]  # candidates whose facts changed since (their plan needs the whole replay)
    carried: set[int]  # the others with a late-charge day after L and a balance at the end of L


def penalty_candidates_split(*, as_of: date) -> CandidatesSince | None:
    """``penalty_candidates_since``, its candidates told apart (``CandidatesSince``); None, so that every
    candidate is planned in full, when there is no recent assessment to go from or the fast paths are off."""
    if not fast_paths_on():
        return None
    last = last_nightly_assessment()
    if last is None:
        return None
    assessed, started = last
    if as_of < assessed:
        return None
    since = started - RECORDED_MARGIN
    updated = Utility.objects.values_list("updated_at", flat=True).first()
    if updated is None or updated >= since:
        return None
    scheme = ordinance_on(as_of).penalties
    # A bill recorded since T changes its account; so does one due on or after L (the assessment of L did
    # not look at it) with a late-charge day on or before L. The others may fall due after L. Whether a bill
    # has such days follows from its bill date and due date, which a village's bills share: each pair is
    # worked out once, and the database finds the accounts with a bill of each kind of pair.
    past_due = Bill.objects.filter(due_date__lt=as_of).order_by()
    candidates = set(past_due.values_list("account_id", flat=True).distinct())
    changed = set(past_due.filter(created_at__gte=since).values_list("account_id", flat=True).distinct())
    unassessed_terms, later_terms = [], []
    for bill_date, due_date in past_due.values_list("bill_date", "due_date").distinct():
        dues = scheme.dates(bill_date=bill_date, due_date=due_date, through=as_of)
        if due_date >= assessed and any(due.on <= assessed for due in dues):
            unassessed_terms.append((bill_date, due_date))
        elif any(due.on > assessed for due in dues):
            later_terms.append((bill_date, due_date))
    earlier = past_due.filter(created_at__lt=since).exclude(status=Bill.Status.VOID)
    changed.update(_accounts_with_terms(earlier, unassessed_terms))
    falls_due = _accounts_with_terms(earlier, later_terms)
    # One pass over the ledger: the accounts with an entry recorded since T (not a late charge or correction)
    # or dated after L (``changed_since``), and each account's balance at the end of L and whether it has a
    # principal charge below zero (none is written today; it could leave one bill owing beside another's
    # credit).
    late_kinds = [*LATE_CHARGE_KINDS, *CORRECTION_OF.values()]
    reversed_payments = LedgerEntry.objects.filter(kind=REVERSAL_KIND, posted_on__lte=assessed).values("corrects_id")
    owed_by_account = LedgerEntry.objects.order_by().values("account_id").annotate(
        recorded=Count("id", filter=(Q(created_at__gte=since) & ~Q(kind__in=late_kinds)) | Q(posted_on__gt=assessed)),
        total=Sum("amount", filter=Q(posted_on__lte=assessed) & ~Q(kind__in=[*DEPOSIT_KINDS, REVERSAL_KIND])
                  & ~Q(id__in=reversed_payments)),
        negative=Count("id", filter=Q(kind__in=PRINCIPAL_KINDS, amount__lt=0)))
    owes: set[int] = set()
    for account_id, recorded, total, negative in owed_by_account.values_list("account_id", "recorded", "total",
                                                                              "negative"):
        if recorded:
            changed.add(account_id)
        if negative or (total is not None and total >= HALF_CENT):
            owes.add(account_id)
    changed.update(PenaltyWaiver.objects.filter(Q(requested_at__gte=since) | Q(decided_at__gte=since)).order_by()
                   .values_list("account_id", flat=True).distinct())
    changed &= candidates
    owing = (falls_due - changed) & owes
    return CandidatesSince(assessed=assessed, since=since, changed=changed, carried=owing)


def _accounts_with_terms(bills, terms: list[tuple[date, date]]) -> set[int]:
    """The accounts with one of these bills whose bill date and due date are one of ``terms``."""
    if not terms:
        return set()
    where = Q()
    for bill_date, due_date in terms:
        where |= Q(bill_date=bill_date, due_date=due_date)
    return set(bills.filter(where).values_list("account_id", flat=True).distinct())


def changed_since(*, assessed: date, since: datetime, account_ids) -> set[int]:
    """The accounts of ``account_ids`` with a ledger entry recorded since ``since`` other than the late charges
    and corrections reconciliations post, an entry dated after ``assessed``, a bill recorded since ``since``, or
    a waiver asked for or decided since ``since`` (``penalty_candidates_since`` finds them for every account)."""
    ids = list(account_ids)
    where = accounts_where(ids)
    late_kinds = [*LATE_CHARGE_KINDS, *CORRECTION_OF.values()]
    entries = LedgerEntry.objects.filter(where, (Q(created_at__gte=since) & ~Q(kind__in=late_kinds))
                                         | Q(posted_on__gt=assessed))
    waivers = PenaltyWaiver.objects.filter(where, Q(requested_at__gte=since) | Q(decided_at__gte=since))
    bills = Bill.objects.filter(where, created_at__gte=since)
    found: set[int] = set()
    for rows in (entries, waivers, bills):
        found.update(rows.order_by().values_list("account_id", flat=True).distinct())
    return found.intersection(ids)


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
    numbers: dict[int, str] = {}
    bills: dict[int, list[BillTerms]] = defaultdict(list)
    void = Bill.Status.VOID
    for bill_id, account_id, bill_date, due_date, number, status, converted_on in values_rows(
            Bill.objects.filter(where).order_by().values_list(
                "id", "account_id", "bill_date", "due_date", "number", "status", "converted_on")):
        if account_id not in wanted:
            continue
        key = bill_keys[bill_id] = (bill_date, bill_id)
        numbers[bill_id] = number
        if due_date < through and status != void:
            bills[account_id].append(BillTerms(key=key, bill_date=bill_date, due_date=due_date,
                                               charges_from=converted_on))
    rows = [row for row in values_rows(
        LedgerEntry.objects.filter(where, posted_on__lte=through).exclude(kind__in=DEPOSIT_KINDS).order_by("id")
        .values_list("account_id", "id", "kind", "posted_on", "amount", "bill_id", "corrects_id"))
        if row[0] in wanted]
    missing = {row[5] for row in rows if row[5] is not None and row[5] not in bill_keys}
    if missing:  # an entry on another account's bill
        for bill_id, bill_date, number in Bill.objects.filter(id__in=missing).values_list("id", "bill_date", "number"):
            bill_keys[bill_id], numbers[bill_id] = (bill_date, bill_id), number
    # A reversal within the range takes itself and the payment it reverses out of the replay.
    reversed_ids = {row[6] for row in rows if row[2] == REVERSAL_KIND}
    entries: dict[int, list[Entry]] = defaultdict(list)
    posted: dict[int, list[tuple[WaivedKey, list]]] = defaultdict(list)
    by_id: dict[int, list] = {}
    corrected_times: dict[int, int] = defaultdict(int)
    late_kinds, correction_kinds = set(LATE_CHARGE_KINDS), set(CORRECTION_OF.values())
    for account_id, entry_id, kind, posted_on, amount, bill_id, corrects_id in rows:
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
                                                bill_keys[bill_id] if bill_id is not None else None, entry_id))
    return PlanFacts(entries=entries, bills=bills, numbers=numbers, posted=posted, corrected_times=corrected_times)


def penalties_plan(*, through: dict[int, date]) -> list[Posting]:
    """The postings that bring the late charges of these accounts (account id → the last day to look at) in
    line with what the facts, approved waivers among them, make owed. Reads only."""
    account_ids = sorted(through)
    if not account_ids:
        return []
    last_day = max(through.values())
    ordinance = ordinance_on(last_day)
    scheme, order = _DatesOnce(ordinance.penalties), ordinance.payment_order
    with collector_paused():
        facts = plan_facts(account_ids, through=last_day)
        waived = waived_charges(account_ids=account_ids)
        return _plan(account_ids, through=through, facts=facts, waived=waived, scheme=scheme, order=order)


def _plan(account_ids, *, through, facts: PlanFacts, waived, scheme, order) -> list[Posting]:
    numbers, corrected_times = facts.numbers, facts.corrected_times
    new: list[Posting] = []
    for account_id in account_ids:
        mine = waived.get(account_id, {})
        posted = facts.posted.get(account_id, ())
        last = through[account_id]
        owed = penalties_owed(entries=facts.entries.get(account_id, ()), bills=facts.bills.get(account_id, ()),
                              scheme=scheme, through=last, order=order, waived=mine.keys())
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
                                       times=corrected_times[row[0]]))
        for (bill_id, day, kind), row in posted:
            if day <= last and (bill_id, day, kind) not in seen and row[2]:
                new.append(_correction(row, ZERO, bill_id=bill_id, day=day, number=numbers[bill_id],
                                       times=corrected_times[row[0]], waived=mine.get((bill_id, day, kind))))
    return new


def penalties_carried(account_ids: list[int], *, assessed: date, through: date, postings: list[Posting]) -> list[int]:
    """The late charges of days after ``assessed`` (L) through ``through`` of accounts whose facts have not
    changed since the nightly assessment of L (``CandidatesSince.carried``), added to ``postings``, worked out from what
    their ledgers leave open at the end of L instead of replaying them. Returns the accounts this cannot do
    (they are to be planned in full).

    Such an account has nothing dated after L, and its late charges through L are those owed, so the replay of
    ``penalties_owed`` stands, at the start of each later day, where its books stand at the end of L plus the
    charges it has found since: the day's charges are computed from each bill's unpaid amounts, then added to
    the bill. A credit left over cannot stand beside a bill owing (it would have paid it), so none pays them.
    An account with a credit beside an open bill, or a bill paid in full whose day would charge something on
    nothing unpaid, is left to the full plan."""
    if not account_ids:
        return []
    ordinance = ordinance_on(through)
    scheme = _DatesOnce(ordinance.penalties)
    amount_of_unpaid = scheme.amount_of_unpaid
    nothing = {"penalty": ZERO, "fee": ZERO, "fine": ZERO, "water": ZERO}
    # A bill paid in full draws nothing more when the scheme says so (only late charges are added here).
    paid_draws_nothing = scheme.owes_no_more_late_charges(nothing)
    states = open_balances(account_ids, through=assessed)
    bills: dict[int, list[tuple]] = defaultdict(list)
    later: dict[tuple[date, date], list] = {}  # the days after L of each bill date and due date
    for bill_id, account_id, bill_date, due_date, number, converted_on in Bill.objects.filter(
            accounts_where(account_ids), due_date__lt=through).exclude(status=Bill.Status.VOID).order_by(
            ).values_list("id", "account_id", "bill_date", "due_date", "number", "converted_on"):
        state = states.get(account_id)
        if state is None or (paid_draws_nothing and (bill_date, bill_id) not in state.bills):
            continue  # another account's in the range of ids, or a bill paid in full
        dues = later.get((bill_date, due_date))
        if dues is None:
            dues = later[bill_date, due_date] = [
                due for due in scheme.dates(bill_date=bill_date, due_date=due_date, through=through)
                if due.on > assessed]
        if converted_on is not None:  # the old system's days before the cutover are not ours to charge
            dues = [due for due in dues if due.on >= converted_on]
        if dues:
            bills[account_id].append(((bill_date, bill_id), number, dues))
    left: list[int] = []
    for account_id in account_ids:
        state = states[account_id]
        if state.credit and state.bills:
            left.append(account_id)
            continue
        # The days in order, a day's charges by bill and kind, as the replay takes them.
        days: dict[date, list[tuple]] = defaultdict(list)
        for key, number, dues in bills.get(account_id, ()):
            for place, due in enumerate(dues):
                days[due.on].append((key, due.kind, place, due, number))
        found: list[Posting] = []
        for day in sorted(days):
            charges = []
            for key, _kind, _, due, number in sorted(days[day], key=lambda item: item[:3]):
                bill = state.bills.get(key)
                unpaid = bill.unpaid if bill is not None else nothing
                charged = late_charge(scheme, due, unpaid, amount_of_unpaid=amount_of_unpaid)
                if bill is None and charged > ZERO:
                    break  # a charge on nothing unpaid: not this shortcut's to work out
                if charged > ZERO:
                    charges.append((key, due, charged, number))
            else:
                for key, due, charged, number in charges:
                    category = CATEGORY[due.kind]
                    bill = state.bills[key]
                    bill.unpaid[category] = bill.unpaid.get(category, ZERO) + charged
                    bill.charged[category] = bill.charged.get(category, ZERO) + charged
                    found.append(Posting(account_id=account_id, bill_id=key[1], kind=due.kind, posted_on=day,
                                         amount=charged, source=late_charge_source(key[1], day),
                                         citation=due.citation, description=f"{due.description} on bill {number}"))
                continue
            left.append(account_id)
            break
        else:
            postings.extend(found)
    return left


class _DatesOnce:
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
                waived: Waived | None = None) -> Posting:
    """The correction that brings a posted late charge (corrected ``times`` times so far) to ``owed``; a
    waived charge's says so, with the waiver's reason."""
    entry_id, account_id, net, kind = row
    what = f"{LedgerEntry.Kind(kind).label} of {day:%b} {day.day}, {day:%Y} on bill {number}"
    description = f"{what} waived: {waived.reason}" if waived is not None else f"{what} corrected to ${owed:,.2f}"
    return Posting(account_id=account_id, bill_id=bill_id, kind=CORRECTION_OF[kind],
                   posted_on=day, amount=owed - net, corrects_id=entry_id,
                   source=correction_source(entry_id, times + 1, kind=kind),
                   description=description)


# --- The preview of a night's assessment ---------------------------------------------------------------

@dataclass(frozen=True)
class PreviewRow:
    account_no: str
    owner: str
    bill_number: str
    day: date
    kind: str  # "penalty" or "interest": the late charge posted or corrected
    amount: Decimal  # what would be posted: a charge, or a correction (usually negative)
    citation: str
    description: str
    correction: bool = False


def preview_day_refusal(on: date) -> None:
    """Refuse a preview day more than ``PREVIEW_DAYS_AHEAD`` days after today."""
    latest = today() + timedelta(days=PREVIEW_DAYS_AHEAD)
    if on > latest:
        raise ApplicationError(f"{on} is more than {PREVIEW_DAYS_AHEAD} days ahead; the preview plans at most "
                               f"through {latest}", field="on")


def penalties_preview(*, as_of: date) -> list[PreviewRow]:
    """What ``assess_penalties --date as_of`` would post on the facts known now, without writing: every
    penalty and interest charge due on or before ``as_of`` not yet posted, and the corrections of posted
    ones, by account. Replays only the accounts whose plan can be non-empty since the last nightly
    assessment (``penalty_candidates_since``), or else every account with a bill past due on ``as_of``, in
    chunks."""
    preview_day_refusal(as_of)
    postings: list[Posting] = []
    split = penalty_candidates_split(as_of=as_of)
    if split is None:
        ids, carried = penalty_candidates(as_of=as_of), []
    else:
        ids, carried = sorted(split.changed), sorted(split.carried)
        ids.extend(penalties_carried(carried, assessed=split.assessed, through=as_of, postings=postings))
        ids.sort()
    for start in range(0, len(ids), CHUNK):
        postings.extend(penalties_plan(through=dict.fromkeys(ids[start:start + CHUNK], as_of)))
    accounts = dict(Account.objects.filter(id__in={p.account_id for p in postings})
                    .values_list("id", "account_no"))
    owners = dict(Account.objects.filter(id__in={p.account_id for p in postings})
                  .values_list("id", "owner__name"))
    numbers = dict(Bill.objects.filter(id__in={p.bill_id for p in postings}).values_list("id", "number"))
    correction_kinds = {v: k for k, v in CORRECTION_OF.items()}
    rows = [PreviewRow(account_no=accounts[p.account_id], owner=owners[p.account_id], bill_number=numbers[p.bill_id],
                       day=p.posted_on, kind=correction_kinds.get(p.kind, p.kind), amount=p.amount,
                       citation=p.citation, description=p.description, correction=p.kind in correction_kinds)
            for p in postings]
    rows.sort(key=lambda r: (r.account_no, r.day, r.bill_number, r.kind, r.correction))
    return rows


@dataclass(frozen=True)
class PreviewTotals:
    charges: int
    charged: Decimal
    corrections: int
    corrected: Decimal

    @property
    def count(self) -> int:
        return self.charges + self.corrections

    @property
    def net(self) -> Decimal:
        return self.charged + self.corrected


def preview_totals(rows: list[PreviewRow]) -> PreviewTotals:
    """How many charges and corrections the preview would post, and their dollars (added in Python)."""
    return PreviewTotals(charges=sum(1 for r in rows if not r.correction),
                         charged=sum((r.amount for r in rows if not r.correction), ZERO),
                         corrections=sum(1 for r in rows if r.correction),
                         corrected=sum((r.amount for r in rows if r.correction), ZERO))


# --- The register of late charges posted -------------------------------------------------------------

@dataclass
class RegisterRow:
    entry_id: int
    account_id: int
    account_no: str
    owner: str
    bill_number: str
    day: date
    kind: str
    citation: str
    description: str
    charged: Decimal
    corrections: list[tuple[Decimal, str]] = field(default_factory=list)  # (amount, description), in order
    waiver_id: int | None = None
    waiver_status: str = ""  # "", "pending" or "approved": a live waiver of the charge

    @property
    def corrected(self) -> Decimal:
        return sum((amount for amount, _ in self.corrections), ZERO)

    @property
    def net(self) -> Decimal:
        return self.charged + self.corrected

    @property
    def waived(self) -> bool:
        return self.waiver_status == PenaltyWaiver.Status.APPROVED

    @property
    def waivable(self) -> bool:
        """Still owes something and has no waiver waiting or granted."""
        return self.net > ZERO and not self.waiver_status


@dataclass
class RegisterTotal:
    kind: str
    citation: str
    count: int = 0
    charged: Decimal = ZERO
    corrected: Decimal = ZERO
    waived: int = 0

    @property
    def net(self) -> Decimal:
        return self.charged + self.corrected


@dataclass
class Register:
    start: date
    end: date
    rows: list[RegisterRow]
    totals: list[RegisterTotal]

    @property
    def charged(self) -> Decimal:
        return sum((t.charged for t in self.totals), ZERO)

    @property
    def corrected(self) -> Decimal:
        return sum((t.corrected for t in self.totals), ZERO)

    @property
    def net(self) -> Decimal:
        return self.charged + self.corrected


def penalty_register(*, start: date, end: date) -> Register:
    """Every penalty and interest charge posted on a day from ``start`` to ``end``, each with its corrections
    (which sit on the charge's own day) netted and listed, and its live waiver; totals by kind and citation."""
    if end < start:
        raise ApplicationError(f"{end} is before {start}; the register runs from the first day to the last",
                               field="to")
    if (end - start).days >= REGISTER_MAX_DAYS:
        raise ApplicationError(f"the register lists at most {REGISTER_MAX_DAYS} days at a time", field="to")
    charges = (LedgerEntry.objects.filter(kind__in=LATE_CHARGE_KINDS, posted_on__range=(start, end))
               .order_by("posted_on", "account__account_no", "bill__number", "kind", "id")
               .values_list("id", "account_id", "account__account_no", "account__owner__name", "bill__number",
                            "posted_on", "kind", "citation", "description", "amount"))
    rows = {row[0]: RegisterRow(*row) for row in charges}
    for corrects_id, amount, description in (
            LedgerEntry.objects.filter(corrects__kind__in=LATE_CHARGE_KINDS, corrects__posted_on__range=(start, end))
            .order_by("id").values_list("corrects_id", "amount", "description")):
        rows[corrects_id].corrections.append((amount, description))
    for waiver_id, entry_id, status in PenaltyWaiver.objects.filter(
            entry__kind__in=LATE_CHARGE_KINDS, entry__posted_on__range=(start, end),
            status__in=[PenaltyWaiver.Status.PENDING, PenaltyWaiver.Status.APPROVED]).values_list(
            "id", "entry_id", "status"):
        rows[entry_id].waiver_id, rows[entry_id].waiver_status = waiver_id, status
    totals: dict[tuple[str, str], RegisterTotal] = {}
    for row in rows.values():
        total = totals.setdefault((row.kind, row.citation), RegisterTotal(kind=row.kind, citation=row.citation))
        total.count += 1
        total.charged += row.charged
        total.corrected += row.corrected
        total.waived += row.waived
    return Register(start=start, end=end, rows=list(rows.values()),
                    totals=[totals[key] for key in sorted(totals)])
