"""The reports by name, the dates each takes, and their defaults: what ``report NAME`` and the admin's
Reports page share. A refusal is an ``ApplicationError`` naming the parameter (``bill_date``, ``start``…);
the command says it as its option (``--bill-date``, ``--from``), the page under its field."""

from dataclasses import dataclass
from datetime import date

from core.clock import refuse_future
from core.errors import ApplicationError
from ordinance.selectors import district_named

from . import selectors


@dataclass(frozen=True)
class ReportKind:
    name: str
    title: str
    words: str  # what it lists, for the page and the command's help
    params: tuple[str, ...]  # the dates it takes besides ``date``


REPORTS = {kind.name: kind for kind in (
    ReportKind("register", "Billing register",
               "a bill date's bills by book, lines by kind and citation, totals", ("bill_date",)),
    ReportKind("aging", "Aging", "every balance by days past due: current, 1-30, 31-60, 61-90, 91-120, over 120",
               ()),
    ReportKind("delinquency", "Delinquency list",
               "the accounts that qualify for termination for nonpayment under the preset, with open cases", ()),
    ReportKind("relevy", "Relevy list for the tax roll",
               "unpaid charges past due on the levy date by SBL and owner, penalties and interest apart",
               ("levy_date",)),
    ReportKind("receipts", "Cash receipts", "payments by day and source, with counts and totals",
               ("start", "end")),
)}

# What each parameter is called, for people.
PARAM_WORDS = {"date": "the report's date", "bill_date": "the bill date", "start": "the first day",
               "end": "the last day", "levy_date": "the levy date", "district": "the district"}


def report_kind(name: str) -> ReportKind:
    kind = REPORTS.get((name or "").strip().lower())
    if kind is None:
        raise ApplicationError(f"unknown report '{name}'; the reports are {', '.join(REPORTS)}", field="report")
    return kind


def report_check(*, name: str, as_of: date, bill_date: date | None = None, start: date | None = None,
                 end: date | None = None, levy_date: date | None = None, district: str | None = None) -> None:
    """Refuse what ``report_build`` would refuse, naming the parameter, without building the report (a report
    made in the background is checked when it is asked for)."""
    kind = report_kind(name)
    district_named(district)
    _refusals(kind, as_of=as_of, bill_date=bill_date, start=start, end=end, levy_date=levy_date)
    if kind.name == "register":
        _bill_date(bill_date, as_of=as_of)
    if kind.name == "receipts" and (start or end or as_of) > (end or as_of):
        raise ApplicationError(f"{start} is after the last day, {end or as_of}", field="start")


def _refusals(kind: ReportKind, *, as_of: date, **given) -> None:
    for param, value in given.items():
        if value is not None and param not in kind.params:
            takers = [k.name for k in REPORTS.values() if param in k.params]
            raise ApplicationError(f"{PARAM_WORDS[param]} is for the {' and '.join(takers)} report, not the "
                                   f"{kind.name} report", field=param)
    for param, value in {"date": as_of, **given}.items():
        if value is not None:
            refuse_future(value, field=param, doing="reported")


def report_build(*, name: str, as_of: date, bill_date: date | None = None, start: date | None = None,
                 end: date | None = None, levy_date: date | None = None, district: str | None = None):
    """The report ``name`` as of ``as_of``, from the selectors. Defaults: the register's bill date is the
    latest bill date on or before ``as_of``; the receipts' range is ``as_of`` alone (or from ``start`` to
    ``as_of``, or ``end`` alone); the relevy's levy date is ``as_of``. A town's report may be narrowed to one
    ``district`` (every report takes it; None: the whole installation)."""
    kind = report_kind(name)
    _refusals(kind, as_of=as_of, bill_date=bill_date, start=start, end=end, levy_date=levy_date)
    district = district_named(district)
    if kind.name == "register":
        return selectors.register(bill_date=_bill_date(bill_date, as_of=as_of), district=district)
    if kind.name == "aging":
        return selectors.aging(as_of=as_of, district=district)
    if kind.name == "delinquency":
        return selectors.delinquency(as_of=as_of, district=district)
    if kind.name == "relevy":
        return selectors.relevy(levy_on=levy_date or as_of, district=district)
    end = end or as_of
    start = start or end
    if start > end:
        raise ApplicationError(f"{start} is after the last day, {end}", field="start")
    return selectors.receipts(start=start, end=end, district=district)


def _bill_date(bill_date: date | None, *, as_of: date) -> date:
    latest = selectors.latest_bill_date(on_or_before=bill_date or as_of)
    if bill_date is None:
        if latest is None:
            raise ApplicationError(f"no bill is dated on or before {as_of}", field="date")
        return latest
    if latest != bill_date:
        before = f"; the latest bill date before it is {latest}" if latest else ""
        raise ApplicationError(f"no bills are dated {bill_date}{before}", field="bill_date")
    return bill_date
