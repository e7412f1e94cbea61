"""Planning a final bill off the calendar with the billing run's own pieces: the account's facts (its row,
installations and earlier bills, as ``load`` reads them) and its rating (``plan.rate_with_sewer``), with the final
bill's part of its period when the preset pro-rates the minimum. ``services.final_bills`` previews, issues and moves
accounts with it; the closing letter quotes it."""

from dataclasses import dataclass
from datetime import date, timedelta

from accounts.models import Account
from core.errors import ApplicationError
from meters.units import size_inches

from ..ordinance import ordinance_on
from ..rating import ProRata, RatingError
from ..sections import FinalBillRule
from .load import AccountRow, earlier_bills, installation_spans
from .plan import rate_with_sewer

# How far the calendar is searched for the regular bill dates around a final bill (a year and a bit).
_CALENDAR_SEARCH_DAYS = 400



@dataclass(frozen=True)
class FinalBillFacts:
    """What planning a final (or estimated) bill needs to know about the account, loaded once."""

    row: AccountRow
    spans: list
    history: list[dict]
    current: list  # the spans in place on the day


def final_bill_facts(account: Account, *, on: date) -> FinalBillFacts:
    row = AccountRow(account.pk, account.account_no, account.book, account.category,
                     account.sprinkler_supply_inches, account.owner.name, account.owner.mailing_address,
                     account.rate_fields or {}, account.units)
    spans = installation_spans([account.pk]).get(account.pk, [])
    current = [s for s in spans if s.installed_on <= on and (s.removed_on is None or s.removed_on > on)]
    history = earlier_bills([account.pk], before=date.max).get(account.pk, [])
    return FinalBillFacts(row=row, spans=spans, history=history, current=current)


def _regular_dates(calendar, *, book: int, frequency: str, anchor: date) -> tuple[date, date] | None:
    """The regular bill dates on or before ``anchor`` and after it, or None when the calendar has none near."""
    before = next((anchor - timedelta(days=n) for n in range(_CALENDAR_SEARCH_DAYS)
                   if calendar.is_due(book=book, frequency=frequency, on=anchor - timedelta(days=n))), None)
    after = next((anchor + timedelta(days=n) for n in range(1, _CALENDAR_SEARCH_DAYS)
                  if calendar.is_due(book=book, frequency=frequency, on=anchor + timedelta(days=n))), None)
    return (before, after) if before and after else None


def _pro_rata(rule: FinalBillRule, calendar, *, book: int, frequency: str, anchor: date,
              bill_date: date) -> ProRata | None:
    """The final bill's part of its billing period, or None for a whole bill's minimum: the preset says
    ``full``, the bill is monthly (its minimum is annual, § 45.29 C), or the bill covers a whole period or more."""
    if rule.minimum != "pro_rata" or frequency == "monthly":
        return None
    dates = _regular_dates(calendar, book=book, frequency=frequency, anchor=anchor)
    if dates is None:
        return None
    of_days, days = (dates[1] - dates[0]).days, (bill_date - anchor).days
    if not 0 < days < of_days:
        return None
    return ProRata(days=days, of_days=of_days, citation=f"final bill pro rata: {rule.citation}")


def final_bill_rated(facts: FinalBillFacts, *, bill_date: date, gallons: int, anchor: date, rule: FinalBillRule,
                     district: str = "", period_days: int = 1):
    """(ordinance, frequency, pro rata, rated) for the final bill's gallons, on the schedule in force in the
    account's district (its sewer rents after the water)."""
    ordinance = ordinance_on(bill_date, district)
    calendar = ordinance.calendar
    meter_size = max((s.size for s in facts.current), key=size_inches)
    frequency = calendar.frequency_for(meter_size)
    part = _pro_rata(rule, calendar, book=facts.row.book, frequency=frequency, anchor=anchor, bill_date=bill_date)
    try:
        rated = rate_with_sewer(ordinance, frequency=frequency, account=facts.row, gallons=gallons,
                                meter_size=meter_size, history=facts.history,
                                billable_year_start=calendar.billable_year_start(book=facts.row.book, on=bill_date),
                                pro_rata=part, period_days=max(period_days, 1), winter=None)
    except RatingError as exc:
        raise ApplicationError(str(exc), field="reading") from exc
    return ordinance, frequency, part, rated
