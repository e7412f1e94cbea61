"""The old system's control report, held against the file it exported: ``convert check|post --control TOTALS``.

The report is what the old system says it holds on the cutover — the count of accounts and of open bills, what is
owed by kind, the credits and the deposits — as a small CSV of ``total,value`` rows (any subset of the names
below, each once)::

    total,value
    accounts,300
    open_bills,412
    water,48211.37
    penalty,1208.40
    credit,312.00
    deposit,7500.00
    owed,49107.77

A town's report may give its totals district by district too, with a third column naming the district (its code
in the preset; the accounts' districts are theirs on file)::

    total,value,district
    owed,49107.77,
    owed,30211.40,smithtown
    owed,18896.37,st_james

A file that differs from its report by a cent is refused, naming each total that differs, so an export cut short
or changed on the way never posts. Nothing is saved either way."""

import csv
import io
from decimal import Decimal, InvalidOperation
from pathlib import Path

from accounts.models import Account
from billing.districts import accounts_in_district
from core.clock import today
from core.csvimport import TRIMMED, control_problem
from core.errors import ApplicationError, FieldError
from core.money import fmt_dollars
from ordinance.selectors import district_named

from .opening import KINDS, OpeningBalances

COUNTS = ("accounts", "open_bills")
DISTRICT_MARK = "@"  # a district's total is kept as "owed@smithtown"
AMOUNTS = (*KINDS, "charges", "owed")
NAMES = (*COUNTS, *AMOUNTS)


def control_report_read(path: str | bytes) -> dict[str, Decimal]:
    """The report's totals by name (from a path, or the report's bytes as uploaded); a bad row is refused
    naming its line."""
    try:
        text = path.decode("utf-8-sig") if isinstance(path, bytes) else Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        name = "the control report" if isinstance(path, bytes) else path
        raise ApplicationError(f"{name} cannot be read as UTF-8 text ({exc})", field="control") from None
    rows = list(csv.reader(io.StringIO(text)))
    errors, totals = [], {}
    header = [c.strip(TRIMMED).lower() for c in rows[0]] if rows else []
    if header not in (["total", "value"], ["total", "value", "district"]):
        raise ApplicationError("the control report's first row must be the header 'total,value' (or "
                               "'total,value,district' for a town's totals by district)", field="control")
    width = len(header)
    for line, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != width:
            errors.append(FieldError("control", f"{len(row)} columns; a row is '{','.join(header)}'", line=line))
            continue
        district = row[2].strip(TRIMMED) if width == 3 else ""
        if district:
            try:
                district_named(district)
            except ApplicationError as exc:
                errors.append(FieldError("district", exc.errors[0].message, line=line))
                continue
        row = row[:2]
        problems = [(column, problem) for column, cell in (("total", row[0]), ("value", row[1]))
                    if (problem := control_problem(cell.strip(TRIMMED)))]
        if problems:
            errors.extend(FieldError(column, problem, line=line) for column, problem in problems)
            continue
        name, value = row[0].strip(TRIMMED).lower(), row[1].strip(TRIMMED).replace(",", "").replace("$", "")
        if name not in NAMES:
            errors.append(FieldError("total", f"'{name}' is not a control total; use {', '.join(NAMES)}",
                                     line=line))
            continue
        key = f"{name}{DISTRICT_MARK}{district}" if district else name
        if key in totals:
            errors.append(FieldError("total", f"'{name}'{' of district ' + district if district else ''} is given "
                                              "twice", line=line))
            continue
        try:
            number = Decimal(value)
        except InvalidOperation:
            errors.append(FieldError("value", f"'{row[1].strip(TRIMMED)}' is not a number", line=line))
            continue
        if name in COUNTS and number != number.to_integral_value():
            errors.append(FieldError("value", f"{name} is a count: '{row[1].strip(TRIMMED)}' is not a whole number",
                                     line=line))
            continue
        if name in AMOUNTS and number != number.quantize(Decimal("0.01")):
            errors.append(FieldError("value", f"'{row[1].strip(TRIMMED)}' has more than cents", line=line))
            continue
        totals[key] = number
    if errors:
        raise ApplicationError(errors=errors)
    if not totals:
        raise ApplicationError("the control report gives no total", field="control")
    return totals


def _totals(checked: OpeningBalances) -> dict[str, Decimal]:
    return {"accounts": Decimal(checked.accounts), "open_bills": Decimal(checked.bills),
            "charges": checked.charges, "owed": checked.owed,
            **{kind: checked.by_kind.get(kind, Decimal("0")) for kind in KINDS}}


def control_differences(checked: OpeningBalances, report: dict[str, Decimal]) -> list[FieldError]:
    """Each total of the report the file does not hold exactly, with both figures and the difference (a town's
    district totals against the rows of the accounts in that district)."""
    by_district = {"": _totals(checked)}
    out = []
    for key, theirs in report.items():
        name, _, district = key.partition(DISTRICT_MARK)
        if district not in by_district:
            inside = set(Account.objects.filter(id__in=accounts_in_district(district, on=today())).values_list(
                "account_no", flat=True))
            by_district[district] = _totals(checked.subset(inside))
        ours = by_district[district][name]
        if ours == theirs:
            continue
        whose = f" for district {district}" if district else ""
        if name in COUNTS:
            said = f"the control report says {theirs:,.0f}{whose}; the file holds {ours:,.0f}"
        else:
            said = (f"the control report says {fmt_dollars(theirs)}{whose}; the file holds {fmt_dollars(ours)} "
                    f"(a difference of {fmt_dollars(ours - theirs)})")
        out.append(FieldError(name, said))
    return out


def control_refuse(checked: OpeningBalances, path: str | bytes) -> None:
    """Refuse the file (nothing saved) if it differs from its control report in any total."""
    differences = control_differences(checked, control_report_read(path))
    if differences:
        raise ApplicationError(errors=[FieldError("control", f"{checked.name or 'the file'} does not match its "
                                                             f"control report{_named(path)}; nothing was "
                                                             "saved"), *differences])


def _named(path: str | bytes) -> str:
    return "" if isinstance(path, bytes) else f" {Path(path).name}"
