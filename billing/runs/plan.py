"""Planning a chunk of a billing run, in Python on the loaded facts (``load.ChunkFacts``): for each account the
day bills, its bill (rated lines and the charges it carries) or the exception that holds it — a problem with its
readings, use over the office's high-usage factor, a rating error, a bill with no lines. Nothing is written here,
and nothing read but the ordinance's rate schedule (once: ``Ordinance.rate_schedule`` is cached)."""

import uuid
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from core.money import ZERO
from meters.rules import use_over
from meters.units import size_inches

from ..consumption import Problem, usage_for_bill
from ..districts import days_by_district, gallons_by_days
from ..models import BillingException
from ..ordinance import Ordinance
from ..rating import EarlierBill, Line, ProRata, Rated, RatingError, RatingInput
from ..sewer import SewerFacts
from .load import AccountRow, ChunkFacts


@dataclass
class ChunkResult:
    """A chunk's plan: the bills to issue (with their lines and the charges they carry) and the exceptions;
    once written, what the run counts."""

    bills: int = 0
    already_billed: int = 0
    exceptions: int = 0
    total: Decimal = ZERO
    charges: int = 0  # pending fees and fines the new bills carry
    new_bills: list = field(default_factory=list)
    # The rated lines of each new bill (its water lines, then the charges it carries), parallel to new_bills.
    new_lines: list = field(default_factory=list)
    carried: list = field(default_factory=list)  # the charges each new bill carries, parallel to new_bills
    new_exceptions: list = field(default_factory=list)  # unsaved ``BillingException`` rows
    resolved: list = field(default_factory=list)  # accounts billed now: their open exceptions of the day resolve
    warning: str = ""

    @classmethod
    def merged(cls, plans: list["ChunkResult"]) -> "ChunkResult":
        """One plan of the plans of a chunk's districts, its bills in account order (as one plan's are)."""
        out = cls()
        for plan in plans:
            for name in ("bills", "already_billed", "exceptions", "total", "charges"):
                setattr(out, name, getattr(out, name) + getattr(plan, name))
            out.new_exceptions += plan.new_exceptions
            out.resolved += plan.resolved
            out.warning = out.warning or plan.warning
        rows = sorted((bill.account_id, bill, lines, carried) for plan in plans for bill, lines, carried in
                      zip(plan.new_bills, plan.new_lines, plan.carried, strict=True))
        out.new_bills = [row[1] for row in rows]
        out.new_lines = [row[2] for row in rows]
        out.carried = [row[3] for row in rows]
        out.new_exceptions.sort(key=lambda e: e.account_id)
        return out


@dataclass(slots=True)
class NewBill:
    """A bill rated in a run, before it is written (plain data: thousands are built per chunk)."""

    number: str
    public_id: uuid.UUID
    account_id: int
    run_id: int | None
    frequency: str
    bill_date: date
    issued_on: date
    recipient_name: str
    recipient_address: str
    due_date: date
    period_start: date
    period_end: date
    gallons: int
    schedule_gallons: int
    includes_annual_minimum: bool
    start_reading_id: int
    end_reading_id: int
    estimated: bool
    rate_schedule_id: int
    total: Decimal
    district_id: str | None = None  # the district whose rules bill it (None: the installation names none)
    pk: int | None = None
    final: bool = False  # an off-cycle final bill (``billing.services.final_bills``)

    def fields(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__ if name not in ("total", "pk")}


def _bill_number(run_on: date, account_no: str, voided: int) -> str:
    return f"{run_on:%Y%m}-{account_no}" + (f"-{voided + 1}" if voided else "")


def high_usage_words(gallons: int, period_days: int, previous: dict, *, factor: Decimal) -> str:
    """Why a bill's use is over ``factor``× the account's average daily use on its earlier bills
    (``previous``: the latest earlier bill, with the history's totals; ``factor``: the office's,
    ``Ordinance.high_usage_factor``), or "" when it is not: ``meters.rules.use_over``, the usage alerts' rule."""
    words = use_over(gallons, period_days, past_gallons=previous["history_gallons"],
                     past_days=previous["history_days"], factor=factor)
    return f"{words} on earlier bills" if words else ""


def rate_usage(rates, *, frequency: str, account: AccountRow, gallons: int, meter_size: str, history: list[dict],
               billable_year_start: date, pro_rata: ProRata | None = None) -> Rated:
    """Rate one bill's gallons given the account's earlier bills (``earlier_bills``); raises ``RatingError``."""
    in_year = [b for b in history if b["bill_date"] >= billable_year_start]
    annual_minimum_charged, year_to_date_gallons = rates.year_so_far(
        (EarlierBill(b["frequency"], b["includes_annual_minimum"], b["schedule_gallons"]) for b in in_year),
        frequency=frequency)
    return rates.rate(RatingInput(
        frequency=frequency, category=account.category, gallons=gallons, meter_size=meter_size,
        annual_minimum_charged=annual_minimum_charged, year_to_date_gallons=year_to_date_gallons,
        sprinkler_supply_inches=account.sprinkler_supply_inches, first_bill_of_year=not in_year, pro_rata=pro_rata,
        units=account.units, facts=account.rate_fields or {}))


def rate_with_sewer(ordinance: Ordinance, *, frequency: str, account: AccountRow, gallons: int, meter_size: str,
                    history: list[dict], billable_year_start: date, period_days: int, winter: tuple | None,
                    pro_rata: ProRata | None = None) -> Rated:
    """The water lines of a bill (or of its part in one district) under ``ordinance``, then its sewer rents."""
    rated = rate_usage(ordinance.rates, frequency=frequency, account=account, gallons=gallons,
                       meter_size=meter_size, history=history, billable_year_start=billable_year_start,
                       pro_rata=pro_rata)
    sewer = ordinance.sewer
    if not sewer.rents:
        return rated
    sewer_lines = sewer.lines(SewerFacts(category=account.category, gallons=gallons, water_rent=rated.total,
                                         period_days=period_days, units=account.units, winter=winter))
    return Rated(rated.lines + sewer_lines, rated.schedule_gallons, rated.includes_annual_minimum)


def rate_by_district(ordinance_of, parts: list[tuple[str, int]], *, gallons: int, **bill) -> Rated:
    """A bill whose premises moved between districts in its period: its gallons shared by the days in each
    (``districts.gallons_by_days``), each part rated under its district's rules with its minimum and allowance pro
    rata by those days, its lines named with the district."""
    of_days = sum(days for _, days in parts)
    lines: list[Line] = []
    schedule_gallons, includes_minimum = 0, False
    for (code, days), part_gallons in zip(parts, gallons_by_days(gallons, parts), strict=True):
        ordinance = ordinance_of(code)
        name = ordinance.district_name
        part = ProRata(days=days, of_days=of_days, citation=f"{name}, {days} of {of_days} days")
        rated = rate_with_sewer(ordinance, gallons=part_gallons, pro_rata=part, period_days=days, **bill)
        lines.extend(Line(line.kind, f"{name}: {line.description}", line.citation, line.quantity, line.rate,
                          line.amount) for line in rated.lines)
        schedule_gallons += rated.schedule_gallons
        includes_minimum = includes_minimum or rated.includes_annual_minimum
    return Rated(tuple(lines), schedule_gallons, includes_minimum)


def plan_chunk(facts: ChunkFacts, *, ordinance: Ordinance, run_on: date, run=None, ordinance_of=None,
               only: set[int] | None = None) -> ChunkResult:
    """Each due account's bill or exception on ``run_on``, in account order, under ``ordinance`` (the rules of the
    accounts' district on the day; ``only``: a town's chunk, the accounts of that district); a bill whose premises
    moved district in its period is rated part by part under each district's (``ordinance_of(code)``)."""
    calendar, schedule_row = ordinance.calendar, ordinance.rate_schedule
    factor = ordinance.high_usage_factor
    result = ChunkResult(already_billed=sum(1 for account_id in facts.cycles if account_id in facts.billed
                                            and (only is None or account_id in only)))
    readings, widest_end = facts.readings, facts.widest_end
    by_id = {r.id: r for reads in readings.values() for r in reads}
    exceptions = result.new_exceptions

    def hold(account_id: int, kind: str, detail: str) -> None:
        exceptions.append(BillingException(account_id=account_id, bill_date=run_on, kind=kind, detail=detail,
                                           run=run))

    for account in facts.accounts:
        if account.id not in facts.cycles or account.id in facts.billed or (
                only is not None and account.id not in only):
            continue
        cycle, current = facts.cycles[account.id]
        frequency, window = cycle.frequency, cycle.read_window
        account_spans = facts.spans[account.id]
        account_readings = readings if window[1] == widest_end else {
            s.meter_id: [r for r in readings.get(s.meter_id, []) if r.read_on <= window[1]] for s in account_spans}
        history = facts.earlier.get(account.id, [])
        previous = history[-1] if history else None
        usage = usage_for_bill(
            installations=account_spans, readings=account_readings, window=window,
            previous_end=by_id.get(previous["end_reading_id"]) if previous else None,
            previous_period_end=previous["period_end"] if previous else None)
        if isinstance(usage, Problem):
            hold(account.id, usage.kind, usage.detail)
            continue
        period_days = max((usage.end.read_on - usage.start.read_on).days, 1)
        if history and account.id not in facts.released:
            high = high_usage_words(usage.gallons, period_days, previous, factor=factor)
            if high:
                hold(account.id, BillingException.Kind.HIGH_USAGE, f"{high}; held for review")
                continue
        moves = facts.districts.get(account.id)
        parts = days_by_district(moves, usage.start.read_on, usage.end.read_on) if moves else ()
        bill = {"frequency": frequency, "account": account,
                "meter_size": max((s.size for s in current), key=size_inches), "history": history,
                "billable_year_start": cycle.billable_year_start, "winter": facts.winter.get(account.id)}
        try:
            if len(parts) > 1:
                rated = rate_by_district(ordinance_of, list(parts), gallons=usage.gallons, **bill)
            else:
                rated = rate_with_sewer(ordinance, gallons=usage.gallons, period_days=period_days, **bill)
        except RatingError as exc:
            hold(account.id, BillingException.Kind.RATING, str(exc))
            continue
        if not rated.lines:
            # A bill with no lines is never issued (docs/ordinances.md, Mineola § 45.29 C): it would charge
            # nothing and explain nothing. A clerk looks at it instead.
            hold(account.id, BillingException.Kind.RATING,
                 f"rating {usage.gallons:,} gal on a {frequency} bill gave no lines under the schedule "
                 f"effective {schedule_row.effective_on}; a bill with no lines is never issued")
            continue
        charges = facts.waiting.get(account.id, [])
        total = rated.total + sum(c.amount for c in charges) if charges else rated.total
        issued_on = facts.voided_on.get(account.id, run_on)
        result.new_bills.append(NewBill(
            number=_bill_number(run_on, account.account_no, facts.voided.get(account.id, 0)),
            public_id=uuid.uuid4(), account_id=account.id, run_id=run.pk if run else None, frequency=frequency,
            bill_date=run_on, issued_on=issued_on, due_date=calendar.due_date(issued_on),
            recipient_name=account.owner_name, recipient_address=account.owner_address,
            period_start=usage.start.read_on, period_end=usage.end.read_on,
            gallons=usage.gallons, schedule_gallons=rated.schedule_gallons,
            includes_annual_minimum=rated.includes_annual_minimum, start_reading_id=usage.start.id,
            end_reading_id=usage.end.id, estimated=usage.estimated, rate_schedule_id=schedule_row.pk,
            total=total, district_id=ordinance.district or None))
        result.new_lines.append((*rated.lines, *(c.line() for c in charges)))
        result.carried.append(charges)
        result.resolved.append(account.id)
        result.bills += 1
        result.charges += len(charges)
        result.total += total
    result.exceptions = len(exceptions)
    return result
