"""The parallel run: the old system's bills of one period against ours for the same period, nothing issued.

Design overview:

* **The old system's side** is a CSV of its bills of one period, ``account_no,bill_date,kind,amount``, one row
  per charge kind of a bill (``water``, ``sewer``, ``fee``, ``fine``; a kind may repeat and is added up). It is
  read all or nothing like every import (``core.csvimport``): every bad row is listed with its line and column,
  an account the books do not know is named, and rows of more than one bill date are refused (one period).
* **Our side is the run's own rating** (``billing.runs.issue.bills_plan``, as the
  proof register does): every account due on the date, rated as a run on the date would rate it, written
  nowhere. An account already billed on the date is compared with its issued bill. An account the run would
  not bill (no reading, a lower reading, held for review) is on our side with nothing, and says why.
* **Lines are compared by kind**: our rated lines become the old system's kinds (a minimum, consumption,
  service or sprinkler charge is ``water``; ``sewer``, ``fee`` and ``fine`` stay themselves). Each account is
  *identical* (every kind to the cent), *different* (the kinds side by side with the difference), or *only in
  one of them*; the totals of both sides and their difference close the report. Money is added with Decimal.

This is how a village proves we bill like its old system before switching — or finds where the old one was
wrong. A period before the cutover is compared before ``convert post``: once the old system's bills of that
period are on the books, the run is refused rather than answering differently.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from accounts.models import Account
from billing.districts import district_history, district_on
from billing.models import Bill, BillLine
from billing.runs.candidates import billing_candidates
from billing.runs.issue import bills_plan
from billing.runs.preview import refuse_beyond_preview
from core.csvimport import (
    CsvLayout,
    ImportErrors,
    chunked,
    csv_rows,
    dollars_at_most,
    identifier,
    import_source_read,
)
from core.dates import iso_date
from core.errors import ApplicationError
from core.limits import MONEY_MAX
from core.money import ZERO

LEGACY_BILLS_LAYOUT = CsvLayout(required=("account_no", "bill_date", "kind", "amount"))
# The charges of a period's bill. Late charges and credits are the account's history, not a period's bill.
LEGACY_KINDS = ("water", "sewer", "fee", "fine")
# Our bill lines as the old system's kinds.
LINE_KIND = {BillLine.Kind.MINIMUM: "water", BillLine.Kind.CONSUMPTION: "water", BillLine.Kind.NONPROFIT: "water",
             BillLine.Kind.SPRINKLER: "water", BillLine.Kind.SERVICE: "water", BillLine.Kind.CHARGE: "water",
             BillLine.Kind.SEWER: "sewer", BillLine.Kind.FEE: "fee", BillLine.Kind.FINE: "fine"}

IDENTICAL, DIFFERENT, ONLY_LEGACY, ONLY_OURS = "identical", "different", "only_legacy", "only_ours"
STATUS_WORDS = {IDENTICAL: "identical", DIFFERENT: "different", ONLY_LEGACY: "only in the old system",
                ONLY_OURS: "only in ours"}

_amount = dollars_at_most(MONEY_MAX, what="an amount")


def _legacy_amount(value: str) -> Decimal:
    """An amount of a legacy bill line: dollars and cents, zero allowed (a line that came to nothing)."""
    if value.strip() in ("0", "0.0", "0.00", "$0.00"):
        return ZERO.quantize(Decimal("0.01"))
    return _amount(value)


@dataclass(frozen=True)
class KindCompared:
    kind: str
    legacy: Decimal | None  # None: the old system has no such line
    ours: Decimal | None

    @property
    def difference(self) -> Decimal:
        return (self.ours or ZERO) - (self.legacy or ZERO)


@dataclass(frozen=True)
class AccountCompared:
    account_no: str
    status: str
    kinds: tuple[KindCompared, ...]
    note: str = ""  # why we would not bill it, or that the bill is already issued
    district: str = ""  # a town's: the district the account's premises is in on the bill date

    @property
    def status_words(self) -> str:
        return STATUS_WORDS[self.status]

    @property
    def legacy_total(self) -> Decimal:
        return sum((k.legacy or ZERO for k in self.kinds), ZERO)

    @property
    def our_total(self) -> Decimal:
        return sum((k.ours or ZERO for k in self.kinds), ZERO)

    @property
    def difference(self) -> Decimal:
        return self.our_total - self.legacy_total

    def as_dict(self) -> dict:
        return {"account_no": self.account_no, "status": self.status, "legacy_total": f"{self.legacy_total:.2f}",
                "our_total": f"{self.our_total:.2f}", "difference": f"{self.difference:.2f}", "note": self.note,
                "lines": [{"kind": k.kind, "legacy": None if k.legacy is None else f"{k.legacy:.2f}",
                           "ours": None if k.ours is None else f"{k.ours:.2f}", "difference": f"{k.difference:.2f}"}
                          for k in self.kinds]}


@dataclass
class ParallelRun:
    bill_date: date  # ours: the period the run on this date bills
    legacy_bill_date: date | None  # theirs, as the file dates its bills
    accounts: list[AccountCompared] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for a in self.accounts if a.status == status)

    @property
    def legacy_total(self) -> Decimal:
        return sum((a.legacy_total for a in self.accounts), ZERO)

    @property
    def our_total(self) -> Decimal:
        return sum((a.our_total for a in self.accounts), ZERO)

    @property
    def not_identical(self) -> list[AccountCompared]:
        return [a for a in self.accounts if a.status != IDENTICAL]

    def by_district(self) -> list[dict]:
        """A town's totals, district by district (empty where the installation names none)."""
        groups: dict[str, list[AccountCompared]] = defaultdict(list)
        for account in self.accounts:
            groups[account.district].append(account)
        if set(groups) <= {""}:
            return []
        out = []
        for district, accounts in sorted(groups.items()):
            legacy = sum((a.legacy_total for a in accounts), ZERO)
            ours = sum((a.our_total for a in accounts), ZERO)
            out.append({"district": district, "accounts": len(accounts),
                        "identical": sum(1 for a in accounts if a.status == IDENTICAL),
                        "legacy_total": f"{legacy:.2f}", "our_total": f"{ours:.2f}",
                        "difference": f"{ours - legacy:.2f}"})
        return out

    def as_dict(self) -> dict:
        return {"bill_date": self.bill_date.isoformat(),
                "legacy_bill_date": self.legacy_bill_date.isoformat() if self.legacy_bill_date else None,
                "accounts": len(self.accounts), **{status: self.count(status) for status in STATUS_WORDS},
                "legacy_total": f"{self.legacy_total:.2f}", "our_total": f"{self.our_total:.2f}",
                "difference": f"{self.our_total - self.legacy_total:.2f}",
                **({"by_district": by} if (by := self.by_district()) else {}),
                "differences": [a.as_dict() for a in self.not_identical]}


def legacy_bills_read(source, *, as_of: date) -> tuple[date | None, dict[str, dict[str, Decimal]]]:
    """The old system's bills of one period: their bill date and, by account number, the amount of each kind.
    All or nothing: any bad row refuses the file (``ImportRejected``), every error with its line and column."""
    file = import_source_read(source)
    errors = ImportErrors(columns=LEGACY_BILLS_LAYOUT.columns)
    bills: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    dates: dict[date, int] = {}
    lines: dict[str, int] = {}
    account_no = identifier(max_length=20)
    for row in csv_rows(text=file.text, layout=LEGACY_BILLS_LAYOUT, errors=errors):
        number = errors.parse(row, "account_no", account_no)
        day = errors.parse(row, "bill_date", iso_date)
        kind = row["kind"]
        if kind not in LEGACY_KINDS:
            errors.add(line=row.line, field="kind", message=(
                f"'{kind}' is not a charge of a period's bill; use {', '.join(LEGACY_KINDS)} (late charges, "
                "credits and deposits are the account's history, converted with its opening balances)"))
        amount = errors.parse(row, "amount", _legacy_amount)
        if day is not None:
            if day > as_of:
                errors.add(line=row.line, field="bill_date", message=f"{day} is after {as_of}")
            dates.setdefault(day, row.line)
        if number is not None and kind in LEGACY_KINDS and amount is not None:
            bills[number][kind] += amount
            lines.setdefault(number, row.line)
    if len(dates) > 1:
        first, *others = sorted(dates)
        for other in others:
            errors.add(line=dates[other], field="bill_date", message=(
                f"{other} is another period than {first}: a parallel run compares the bills of one period"))
    for chunk in chunked(sorted(bills)):
        known = set(Account.objects.filter(account_no__in=list(chunk)).values_list("account_no", flat=True))
        for number in chunk:
            if number not in known:
                errors.add(line=lines[number], field="account_no", message=f"unknown account '{number}'")
    errors.raise_if_any()
    return (min(dates) if dates else None), {number: dict(kinds) for number, kinds in bills.items()}


def our_bills(*, run_on: date, today: date) -> tuple[dict[str, dict[str, Decimal]], dict[str, str]]:
    """Every account due on ``run_on`` as a run would bill it, written nowhere (an account already billed on the
    date: its issued bill), by account number and kind; and why each account due is not billed, if it is not."""
    refuse_beyond_preview(run_on, today=today)
    ours: dict[str, dict[str, Decimal]] = {}
    why_not: dict[str, str] = {}
    ids = billing_candidates(run_on=run_on)
    numbers = dict(Account.objects.filter(id__in=ids).values_list("id", "account_no")) if ids else {}
    for chunk in chunked(ids, 1000):
        part = bills_plan(account_ids=list(chunk), run_on=run_on)
        for bill, lines in zip(part.new_bills, part.new_lines, strict=True):
            kinds = ours.setdefault(numbers[bill.account_id], {})
            for line in lines:
                kind = LINE_KIND[line.kind]
                kinds[kind] = kinds.get(kind, ZERO) + line.amount
        for exception in part.new_exceptions:
            why_not[numbers[exception.account_id]] = exception.detail
    issued = (BillLine.objects.filter(bill__bill_date=run_on).exclude(bill__status=Bill.Status.VOID)
              .values_list("bill__account__account_no", "kind", "amount"))
    for number, kind, amount in issued:
        kinds = ours.setdefault(number, {})
        kinds[LINE_KIND[kind]] = kinds.get(LINE_KIND[kind], ZERO) + amount
        why_not.pop(number, None)
    return ours, why_not


def legacy_bills_csv(bills: dict[str, dict[str, Decimal]], *, bill_date: date) -> str:
    """Bills by account number and kind written as the old system's export of a period
    (``account_no,bill_date,kind,amount``): what a village's old system gives the parallel run, and what a demo
    village's would have given for the bills we rate."""
    rows = [",".join(LEGACY_BILLS_LAYOUT.columns)]
    for number in sorted(bills):
        rows.extend(f"{number},{bill_date.isoformat()},{kind},{amount:.2f}" for kind, amount in bills[number].items())
    return "\n".join(rows) + "\n"


def posted_after_refusal(run_on: date) -> None:
    """Refuse a period billed before the cutover of a conversion already posted: its bills and history came over
    from the old system, so our side would be the old system's own bills (and the previous bills each rating
    starts from), and the run would answer differently than before the post. Run before ``convert post``."""
    from .models import ConversionBatch

    batch = (ConversionBatch.objects.filter(status=ConversionBatch.Status.POSTED, cutover__gt=run_on)
             .order_by("cutover").first())
    if batch is not None:
        raise ApplicationError(
            f"the period billed on {run_on} is before the cutover {batch.cutover} of conversion {batch.pk}, posted "
            "already: that period's bills came over from the old system, so the run would compare them with "
            "themselves. Run the parallel run of a period before the cutover before `convert post` (or after "
            "rolling the batch back); after the post, run it on a period billed on or after the cutover",
            field="date")


def parallel_run(*, legacy, run_on: date, today: date) -> ParallelRun:
    """The old system's bills of a period (``legacy``: a path, bytes or an uploaded file) against ours for the
    period billed on ``run_on``, nothing issued. A period before a posted conversion's cutover is refused
    (``posted_after_refusal``): the run answers the same before the post or not at all."""
    posted_after_refusal(run_on)
    legacy_date, theirs = legacy_bills_read(legacy, as_of=today)
    try:
        ours, why_not = our_bills(run_on=run_on, today=today)
    except ApplicationError as exc:
        raise ApplicationError("; ".join(e.message for e in exc.errors), field="date") from None
    result = ParallelRun(bill_date=run_on, legacy_bill_date=legacy_date)
    numbers = set(theirs) | set(ours) | set(why_not)
    district_of = _districts_of(numbers, on=run_on)
    for number in sorted(numbers):
        legacy_kinds, our_kinds = theirs.get(number), ours.get(number)
        kinds = tuple(KindCompared(kind, (legacy_kinds or {}).get(kind), (our_kinds or {}).get(kind))
                      for kind in LEGACY_KINDS if kind in (legacy_kinds or {}) or kind in (our_kinds or {}))
        if legacy_kinds is None:
            status = ONLY_OURS
        elif our_kinds is None:
            status = ONLY_LEGACY
        else:
            status = IDENTICAL if all(k.difference == ZERO for k in kinds) else DIFFERENT
        note = f"not billed by us: {why_not[number]}" if number in why_not and our_kinds is None else ""
        if legacy_kinds is None and our_kinds is None:
            continue  # due, not billed by us, and not in the old system's file: nothing to compare
        result.accounts.append(AccountCompared(account_no=number, status=status, kinds=kinds, note=note,
                                               district=district_of.get(number, "")))
    return result


def _districts_of(numbers, *, on: date) -> dict[str, str]:
    """A town's accounts by number → the district each premises is in on ``on`` ({} for a village)."""
    ids = dict(Account.objects.filter(account_no__in=list(numbers)).values_list("id", "account_no"))
    history = district_history(list(ids))
    return {ids[account_id]: district_on(moves, on) for account_id, moves in history.items()}
