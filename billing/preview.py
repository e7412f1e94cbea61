"""What a preset would bill, before anything is installed: the table a clerk holds beside the chapter.

``bills_preview`` rates a ladder of usages for each class of account under each rate schedule of a preset — 0
gallons, the minimum's allowance, each block's edges (its first gallon and its bound) and twice the last bound;
for monthly bills, each meter size's allowance and twice it on the year's first bill — and works one late charge
example through a year: a $100.00 water bill, never paid, charged as the penalty scheme says on each of its days.
Every line keeps the citation the rate structure gives it. Pure: the preset's tables in, rows out; the rates are
the same classes that bill (``rate_structure_for``, the penalty scheme and its replay), so the table cannot say one
thing and the bill another. ``preset_check --bills`` prints it; the Utility page shows it for the installed preset.
"""

from datetime import date, timedelta
from decimal import Decimal

from core.money import fmt_dollars, fmt_gallons
from ordinance.preview import PreviewTable

from .ledger.allocation import Entry
from .penalties.rules import BillTerms, penalties_owed
from .rate_tables import category_words
from .rating import RatingError, RatingInput
from .registries import CALENDARS, PENALTY_SCHEMES, RATE_STRUCTURES
from .sewer import SewerFacts, SewerRents, sewer_rents_from

NO_SEWER = SewerRents()

DEFAULT_STRUCTURE = "minimum_and_blocks"
LATE_EXAMPLE = Decimal("100.00")
EXAMPLE_UNITS = 3  # a per-unit minimum is shown for one unit and for a building of this many


USAGE_HEADERS = ("Gallons", "Bill", "Line", "Amount", "Citation")
LATE_HEADERS = ("Day", "Late charge", "Amount", "Citation")


def _ladder(category: dict) -> list[int]:
    allowance = int(category.get("minimum", {}).get("allowance_gallons", 0))
    steps = {0, allowance}
    bounds = [int(b["up_to_gallons"]) for b in category.get("blocks", []) if b.get("up_to_gallons") is not None]
    lower = allowance
    for bound in bounds:
        steps |= {min(lower + 1_000, bound), bound}
        lower = bound
    steps.add(lower + 1_000)
    steps.add(2 * (bounds[-1] if bounds else max(allowance, 10_000)))
    return sorted(steps)


def _rows(structure, bill: RatingInput, sewer: SewerRents) -> list[tuple[str, ...]]:
    """One usage's rows: the gallons and the bill's total on its first line, then each line with its citation (the
    sewer rents after the water's, on a quarter's days)."""
    gallons = f"{fmt_gallons(bill.gallons)} gal"
    try:
        rated = structure.rate(bill)
    except RatingError as exc:
        return [(gallons, "refused", str(exc), "", "")]
    all_lines = rated.lines + sewer.lines(SewerFacts(category=bill.category, gallons=bill.gallons,
                                                     water_rent=rated.total, period_days=91, units=bill.units))
    lines = [(line.description, fmt_dollars(line.amount), line.citation) for line in all_lines]
    total = sum((line.amount for line in all_lines), Decimal(0))
    return [(gallons, fmt_dollars(total), *lines[0])] + [("", "", *line) for line in lines[1:]]


def _usage_table(title: str, structure, bills, sewer: SewerRents) -> PreviewTable:
    return PreviewTable(title, USAGE_HEADERS, [row for bill in bills for row in _rows(structure, bill, sewer)],
                        numeric=frozenset({0, 1, 3}))


def _per_bill_frequency(calendar) -> str:
    """The frequency of a small meter's bills under the calendar (quarterly or semiannual), or quarterly."""
    try:
        frequency = calendar.frequency_for("5/8") if calendar is not None else "quarterly"
    except Exception:  # noqa: BLE001 - a calendar that cannot say: the preview still shows the rates
        frequency = "quarterly"
    return frequency if frequency != "monthly" else "quarterly"


def rate_tables_preview(schedule: dict, *, calendar=None, sewer: SewerRents = NO_SEWER,
                        whose: str = "") -> list[PreviewTable]:
    """The ladder of one ``[[rate_schedule]]`` (as in the file), each class a table (``whose``: the district's name
    before each title), with the sewer rents in force beside it."""
    rules = {k: v for k, v in schedule.items() if k not in ("effective_on", "citation", "sample")}
    name = rules.get("structure", DEFAULT_STRUCTURE)
    structure = RATE_STRUCTURES.build(name, rules)
    when = f"in force from {schedule.get('effective_on')} ({schedule.get('citation', '')})"
    frequency = _per_bill_frequency(calendar)
    tables = []
    per_bill = rules.get("per_bill") or {}
    for category, spec in per_bill.items():
        per_unit = bool(spec.get("minimum", {}).get("per_unit"))
        for units in ((1, EXAMPLE_UNITS) if per_unit else (1,)):
            unit_words = f", {units} unit{'s' if units != 1 else ''}" if per_unit else ""
            minimum = spec["minimum"]
            allowance = minimum["allowance_gallons"] * units
            ladder = _ladder({**spec, "minimum": {**minimum, "allowance_gallons": allowance}})
            tables.append(_usage_table(
                f"{whose}{category_words(category)}, one {frequency} bill{unit_words} — {when}", structure,
                (RatingInput(frequency=frequency, category=category, gallons=g, units=units) for g in ladder),
                sewer))
    for minimum in (rules.get("monthly") or {}).get("annual_minimum", []):
        allowance = int(minimum["allowance_gallons"])
        tables.append(_usage_table(
            f'{whose}Monthly bills, {minimum["size"]}" meter, the first bill of the billable year — {when}', structure,
            (RatingInput(frequency="monthly", category="other", gallons=g, meter_size=minimum["size"])
             for g in (0, allowance, 2 * allowance)), sewer))
    if not tables:
        # A structure without per-bill tables of our shape (an OWRS file): each category on the calendar's bills.
        for category in ("one_two_family", "other", "nonprofit"):
            tables.append(_usage_table(
                f"{whose}{category_words(category)}, one {frequency} bill — {when}", structure,
                (RatingInput(frequency=frequency, category=category, gallons=g)
                 for g in (0, 5_000, 10_000, 20_000, 50_000, 100_000)), sewer))
    return tables


def late_charge_preview(penalty: dict, calendar_table: dict | None, *, bill_date: date,
                        whose: str = "") -> PreviewTable:
    """A $100.00 water bill dated ``bill_date``, never paid: each late charge through a year, as the scheme says."""
    scheme = PENALTY_SCHEMES.build(penalty["scheme"], penalty)
    due_date = bill_date + timedelta(days=30)
    if calendar_table:
        try:
            due_date = CALENDARS.build(calendar_table["scheme"], calendar_table).due_date(bill_date)
        except Exception:  # noqa: BLE001 - the calendar's own check names its fault; the example keeps 30 days
            pass
    key = (bill_date, 1)
    owed = penalties_owed(entries=[Entry("water", bill_date, LATE_EXAMPLE, key)],
                          bills=[BillTerms(key=key, bill_date=bill_date, due_date=due_date)], scheme=scheme,
                          through=bill_date + timedelta(days=365))
    total = sum((p.amount for p in owed), Decimal(0))
    rows = [(p.due.on.isoformat(), p.due.description, fmt_dollars(p.amount), p.due.citation) for p in owed]
    title = (f"{whose}Late charges on a {fmt_dollars(LATE_EXAMPLE)} water bill dated {bill_date.isoformat()}, due "
             f"{due_date.isoformat()}, never paid: {len(owed)} charge{'s' if len(owed) != 1 else ''}, "
             f"{fmt_dollars(total)} in the year ({penalty.get('citation', '')})")
    return PreviewTable(title, LATE_HEADERS, rows, numeric=frozenset({2}))


def bills_preview(data: dict) -> list[PreviewTable]:
    """Every table of what the preset ``data`` (a preset file's tables, checked) would bill: the installation's,
    then each district's under its own tables (the installation's where it names none)."""
    tables = _tables_of(data)
    for district in data.get("district") or []:
        own = {name: value for name, value in district.items() if name not in ("code", "name", "citation")}
        whose = f"{district['name']} ({district['code']}): "
        if not own.keys() & {"calendar", "penalty", "rate_schedule", "sewer"}:
            tables.append(PreviewTable(f"{whose}billed by the installation's tables above", ("District", "Law"),
                                       [(district["name"], district["citation"])]))
            continue
        tables += _tables_of({**data, **own}, whose=whose)
    return tables


def _tables_of(data: dict, *, whose: str = "") -> list[PreviewTable]:
    calendar_table = data.get("calendar") or None
    calendar = None
    if calendar_table:
        try:
            calendar = CALENDARS.build(calendar_table["scheme"], calendar_table)
        except Exception:  # noqa: BLE001 - the check names the calendar's fault; the rates are shown all the same
            calendar = None
    tables = []
    sewer = sewer_rents_from(data.get("sewer") or [])
    schedules = data.get("rate_schedule") or []
    for schedule in schedules:
        tables += rate_tables_preview(schedule, calendar=calendar, sewer=sewer, whose=whose)
    if data.get("penalty"):
        first = schedules[0].get("effective_on") if schedules else None
        day = date.fromisoformat(str(first)) if first else date(2025, 1, 1)
        tables.append(late_charge_preview(data["penalty"], calendar_table, bill_date=day.replace(day=1),
                                          whose=whose))
    return tables
