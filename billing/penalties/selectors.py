"""Reads of the penalties in the clerk's office: what an assessment would post (the preview), and what was
posted (the register).

``penalties_preview`` plans (``billing.penalties.plan``) only the accounts whose plan can be non-empty when the
nightly job has assessed a recent day (``billing.penalties.shortcuts``), and every candidate otherwise.

``penalty_register`` lists the late charges posted in a range of days, each with its corrections netted and
its waiver, with totals by kind and citation.
"""

from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from accounts.models import Account
from core.clock import today
from core.errors import ApplicationError
from core.money import ZERO

from ..ledger.posting import Posting
from ..models import Bill, LedgerEntry, PenaltyWaiver
from .plan import CHUNK, CORRECTION_OF, LATE_CHARGE_KINDS, penalties_plan, penalty_candidates
from .shortcuts import penalties_carried, penalty_candidates_split

# How far ahead the preview plans (the nightly run assesses as of its own day; a later day is for planning).
PREVIEW_DAYS_AHEAD = 31
# The register lists at most a year of charges on one page.
REGISTER_MAX_DAYS = 366


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
