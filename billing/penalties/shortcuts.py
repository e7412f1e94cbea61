"""The shortcut of the penalty assessment (``billing.fast_paths``): after a nightly assessment, the accounts
whose facts have not changed since are carried forward from what that night left (``penalties_carried``), and
only those whose facts changed are planned in full (``penalty_candidates_split``). Off with the fast paths.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.db.models import Count, Q, Sum

from core.models import NightlyStep
from core.money import ZERO
from ordinance.selectors import districts, installed_utility

from ..fast_paths import fast_paths_on
from ..ledger.allocation import CATEGORY, DEPOSIT_KINDS, PRINCIPAL_CATEGORIES, REVERSAL_KIND
from ..ledger.posting import Posting, late_charge_source
from ..ledger.standing import accounts_where, open_balances
from ..models import Bill, LedgerEntry, PenaltyWaiver
from ..ordinance import ordinance_on
from .plan import CORRECTION_OF, LATE_CHARGE_KINDS, DatesOnce
from .rules import late_charge

# The nightly job's step that assesses penalties (``waterbilling.nightly.STEPS``).
NIGHTLY_PENALTIES_STEP = "penalties"
# A fact written by a transaction still open when the nightly assessment started, or by a server whose clock
# is a little behind, carries a time a little before the step's start: it counts as recorded after it.
RECORDED_MARGIN = timedelta(minutes=5)
# The kinds of entry that charge principal (water, fees, fines, debit memos), late charges apart.
PRINCIPAL_KINDS = tuple(kind for kind, category in CATEGORY.items() if category in PRINCIPAL_CATEGORIES)
# Half a cent: an account balance summed by the database (in floating point on SQLite) below it is at most zero.
HALF_CENT = Decimal("0.005")


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
    scheme and payment order (the installed ordinance). Every change of the first three is recorded: a payment, a
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
    if not fast_paths_on() or districts():
        # A town's accounts are charged by their districts' rules, each planned in full.
        return None
    last = last_nightly_assessment()
    if last is None:
        return None
    assessed, started = last
    if as_of < assessed:
        return None
    since = started - RECORDED_MARGIN
    utility = installed_utility()
    if utility is None or utility.updated_at >= since:
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
    scheme = DatesOnce(ordinance.penalties)
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
