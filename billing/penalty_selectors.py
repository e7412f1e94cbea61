"""Reads of the penalties in the clerk's office: what an assessment would post, what was posted, what was waived.

``penalties_plan`` is the planning half of an assessment: for some accounts (account id → the last day to
look at) it compares what the facts make owed (``billing.penalties.penalties_owed``) with what the books hold
and returns the postings that would bring them in line — new late charges on their own days, and corrections
of posted ones the facts no longer support. It writes nothing; ``billing.services.penalties.penalties_reconcile``
locks the accounts, plans and posts, and ``penalties_preview`` only plans, so the preview of a night is what
``assess_penalties`` posts that night on the facts known now.

An approved waiver (``PenaltyWaiver``) is one of those facts: the charge it waives is owed as nothing, so the
plan corrects it to zero on its own day and bill ("… waived: <reason>") and never posts it again.

``penalty_register`` lists the late charges posted in a range of days, each with its corrections netted and
its waiver, with totals by kind and citation.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from accounts.models import Account
from core.clock import today
from core.errors import ApplicationError
from core.money import ZERO

from .ledger.posting import Posting, correction_source, late_charge_source
from .ledger.selectors import entries_for_accounts
from .models import Bill, LedgerEntry, PenaltyWaiver
from .ordinance import ordinance_on
from .penalties import BillTerms, penalties_owed

CHUNK = 500
# The late charges a scheme posts, and the kind of entry that corrects each.
LATE_CHARGE_KINDS = (LedgerEntry.Kind.PENALTY.value, LedgerEntry.Kind.INTEREST.value)
CORRECTION_OF = {LedgerEntry.Kind.PENALTY.value: LedgerEntry.Kind.PENALTY_CORRECTION.value,
                 LedgerEntry.Kind.INTEREST.value: LedgerEntry.Kind.INTEREST_CORRECTION.value}
# How far ahead the preview plans (the nightly run assesses as of its own day; a later day is for planning).
PREVIEW_DAYS_AHEAD = 31
# The register lists at most a year of charges on one page.
REGISTER_MAX_DAYS = 366

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


def penalties_plan(*, through: dict[int, date]) -> list[Posting]:
    """The postings that bring the late charges of these accounts (account id → the last day to look at) in
    line with what the facts, approved waivers among them, make owed. Reads only."""
    account_ids = sorted(through)
    if not account_ids:
        return []
    last_day = max(through.values())
    ordinance = ordinance_on(last_day)
    scheme, order = ordinance.penalties, ordinance.payment_order
    entries = entries_for_accounts(account_ids, through=last_day)
    waived = waived_charges(account_ids=account_ids)
    bills: dict[int, list[BillTerms]] = defaultdict(list)
    numbers: dict[int, str] = {}
    for bill_id, account_id, bill_date, due_date, number, status in Bill.objects.filter(
            account_id__in=account_ids, due_date__lt=last_day).values_list(
            "id", "account_id", "bill_date", "due_date", "number", "status"):
        numbers[bill_id] = number
        if status != Bill.Status.VOID:
            bills[account_id].append(BillTerms(key=(bill_date, bill_id), bill_date=bill_date, due_date=due_date))
    # What is posted: per bill, day and kind, the late charge's row and its net amount after corrections.
    posted: dict[tuple[int, date, str], list] = {}
    by_id: dict[int, list] = {}
    corrections: list[tuple[int, Decimal]] = []
    corrected_times: dict[int, int] = defaultdict(int)
    for entry_id, account_id, bill_id, posted_on, kind, amount, corrects_id in LedgerEntry.objects.filter(
            account_id__in=account_ids, kind__in=[*LATE_CHARGE_KINDS, *CORRECTION_OF.values()],
            posted_on__lte=last_day).values_list("id", "account_id", "bill_id", "posted_on", "kind", "amount",
                                                 "corrects_id").order_by("id"):
        if kind in LATE_CHARGE_KINDS:
            posted[(bill_id, posted_on, kind)] = by_id[entry_id] = [entry_id, account_id, amount, kind]
        else:
            corrections.append((corrects_id, amount))
    for corrects_id, amount in corrections:
        by_id[corrects_id][2] += amount
        corrected_times[corrects_id] += 1

    new: list[Posting] = []
    for account_id in account_ids:
        mine = waived.get(account_id, {})
        owed = penalties_owed(entries=entries.get(account_id, []), bills=bills.get(account_id, []), scheme=scheme,
                              through=through[account_id], order=order, waived=mine.keys())
        seen = set()
        for penalty in owed:
            bill_id, day, kind = penalty.bill_key[1], penalty.due.on, penalty.due.kind
            seen.add((bill_id, day, kind))
            row = posted.get((bill_id, day, kind))
            if row is None:
                new.append(Posting(account_id=account_id, bill_id=bill_id, kind=kind,
                                   posted_on=day, amount=penalty.amount, source=late_charge_source(bill_id, day),
                                   citation=penalty.due.citation,
                                   description=f"{penalty.due.description} on bill {numbers[bill_id]}"))
            elif row[2] != penalty.amount:
                new.append(_correction(row, penalty.amount, bill_id=bill_id, day=day, number=numbers[bill_id],
                                       times=corrected_times[row[0]]))
        for (bill_id, day, kind), row in posted.items():
            if row[1] == account_id and day <= through[account_id] and (bill_id, day, kind) not in seen and row[2]:
                new.append(_correction(row, ZERO, bill_id=bill_id, day=day, number=numbers[bill_id],
                                       times=corrected_times[row[0]], waived=mine.get((bill_id, day, kind))))
    return new


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
    ones, by account. Replays only the accounts with a bill past due on ``as_of``, in chunks."""
    preview_day_refusal(as_of)
    postings: list[Posting] = []
    ids = penalty_candidates(as_of=as_of)
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
