"""The termination cases the old system had in progress at the cutover, checked all or nothing and brought over at
their stage, each step taken through termination's own services on the day the old system took it — so the
notices already served stand (their method, dates and hearing), the windows run from them, and the nightly job
carries each case on from there.

Design overview:

* **The file** (``CASES_LAYOUT``), one row per case (nonpayment):
  ``account_no,opened_on,served_on,method,article_number,hearing_on,request_received_on,determined_on,outcome``.
  Its stage is the last step it gives: opened; notice served (``served_on``, ``method``, ``hearing_on``, and the
  ``article_number`` of a mailed notice; served on the owner, and on the occupant where the account has one);
  a written request received (``request_received_on``); determined (``determined_on``, ``outcome``: by default
  when no request came, after the hearing when one did). A case past its determination (an order issued, the water
  off) is finished in the old system before the cutover.
* **Checked as every import is**: every problem with its line and column, nothing saved — an unknown account, an
  account with one case given twice, dates out of order or after the day before the cutover, a step without the
  one before it, a method or an outcome that is none. Each step is then taken by termination's services in the
  conversion's transaction, so a step the ordinance would refuse (a hearing too close to service, a method the
  preset does not allow, nothing delinquent on the day opened) refuses the whole post, naming the line.
* **Rolled back** with the batch (``termination.services.cases.cases_remove``).
"""

from dataclasses import dataclass
from datetime import date, timedelta

from accounts.models import Account
from core.csvimport import CsvLayout, ImportErrors, csv_rows, identifier, import_source_read, text
from core.dates import iso_date
from core.errors import ApplicationError, FieldError
from termination.models import Notice, TerminationCase
from termination.policy import termination_policy
from termination.selectors import required_roles
from termination.services import cases as svc
from termination.services.nightly import nightly_deadlines

from .opening import unknown_accounts

CASES_LAYOUT = CsvLayout(required=("account_no", "opened_on", "served_on", "method", "article_number", "hearing_on",
                                   "request_received_on", "determined_on", "outcome"))
STEPS = ("opened_on", "served_on", "request_received_on", "determined_on")
# The step each one follows: a request answers a notice served, and a determination follows the notice (after a
# request, or by default without one).
FOLLOWS = {"served_on": "opened_on", "request_received_on": "served_on", "determined_on": "served_on"}


@dataclass(frozen=True)
class CaseRow:
    line: int
    account_no: str
    opened_on: date
    served_on: date | None
    method: str
    article_number: str
    hearing_on: date | None
    request_received_on: date | None
    determined_on: date | None
    outcome: str


def cases_read(source, *, as_of: date) -> list[CaseRow]:
    """The cases checked, all or nothing (``ImportRejected``, each problem naming ``cases.<column>``)."""
    file = import_source_read(source)
    errors = ImportErrors(columns=CASES_LAYOUT.columns)
    number, article = identifier(max_length=20), text(max_length=40, required=False)
    rows: list[CaseRow] = []
    first_line: dict[str, int] = {}
    for row in csv_rows(text=file.text, layout=CASES_LAYOUT, errors=errors):
        account_no = errors.parse(row, "account_no", number)
        days = {name: errors.parse(row, name, iso_date) if row[name] or name == "opened_on" else None
                for name in (*STEPS, "hearing_on")}
        for name in STEPS:
            if days[name] is not None and days[name] > as_of:
                errors.add(line=row.line, field=name, message=f"{days[name]} is after {as_of}: a case in progress "
                                                              "took its steps before the cutover")
        given = [name for name in STEPS if row[name]]
        for later, earlier in FOLLOWS.items():
            if row[later] and not row[earlier]:
                errors.add(line=row.line, field=later, message=f"is given without {earlier}: a case takes its steps "
                                                               "in order")
        ordered = [days[name] for name in STEPS if days[name] is not None]
        if ordered != sorted(ordered):
            errors.add(line=row.line, field=given[-1] if given else "opened_on",
                       message="the steps' days are out of order (opened, served, requested, determined)")
        if row["served_on"] and not (row["method"] and row["hearing_on"]):
            errors.add(line=row.line, field="method" if not row["method"] else "hearing_on",
                       message="a notice served names its method and its hearing date")
        if row["method"] and row["method"] not in Notice.Method.values:
            errors.add(line=row.line, field="method", message=f"'{row['method']}' is not one of "
                                                              f"{', '.join(Notice.Method.values)}")
        if row["determined_on"] and row["outcome"] not in TerminationCase.Outcome.values:
            errors.add(line=row.line, field="outcome", message=f"'{row['outcome']}' is not one of "
                                                               f"{', '.join(TerminationCase.Outcome.values)}")
        article_number = errors.parse(row, "article_number", article) or ""
        if account_no is not None:
            if account_no in first_line:
                errors.add(line=row.line, field="account_no", message=(
                    f"account {account_no} has its case on line {first_line[account_no]}; one case per account"))
            first_line.setdefault(account_no, row.line)
        if account_no is None or days["opened_on"] is None or row.line in errors.bad_lines:
            continue
        rows.append(CaseRow(row.line, account_no, days["opened_on"], days["served_on"], row["method"],
                            article_number, days["hearing_on"], days["request_received_on"], days["determined_on"],
                            row["outcome"]))
    unknown_accounts(errors, first_line)
    errors.raise_if_any(file="cases")
    return rows


def cases_post(rows: list[CaseRow], *, accounts: dict[str, int], actor=None) -> dict:
    """Each case taken through its steps on their days (in the caller's transaction); their ids for the batch. A
    step the services refuse refuses the post, naming the case's line."""
    policy = termination_policy()
    made = []
    for row in rows:
        try:
            made.append(_walk(row, Account.objects.get(pk=accounts[row.account_no]), policy=policy, actor=actor).pk)
        except ApplicationError as exc:
            raise ApplicationError(errors=[FieldError(f"cases.{e.field}", e.message, line=row.line)
                                           for e in exc.errors]) from None
    return {"cases": made}


def _walk(row: CaseRow, account, *, policy, actor) -> TerminationCase:
    case = svc.case_open(account=account, grounds="nonpayment", as_of=row.opened_on, actor=actor, policy=policy,
                         detail="Opened in the previous system; brought over at its stage.")
    if row.served_on is None:
        return case
    for role in required_roles(case):
        svc.notice_serve(case=case, role=role, method=row.method, served_on=row.served_on, hearing_on=row.hearing_on,
                         article_number=row.article_number, actor=actor, as_of=row.served_on, render=False)
    case.refresh_from_db()
    if row.request_received_on is not None:
        svc.hearing_request(case=case, received_on=row.request_received_on, actor=actor, via="clerk",
                            text="Written request received by the previous system.", as_of=row.request_received_on)
        case.refresh_from_db()
    if row.determined_on is None:
        return case
    if row.request_received_on is None:
        # No written request: its window closed as the nightly job closes it, then the default determination.
        nightly_deadlines(as_of=policy.request_by(row.served_on) + timedelta(days=1))
        case.refresh_from_db()
    svc.determination_record(case=case, outcome=row.outcome, mailed_on=row.determined_on, actor=actor,
                             as_of=row.determined_on, notes="Determined in the previous system.")
    case.refresh_from_db()
    return case


def cases_reconciled(made: list[dict], told: list[dict]) -> tuple[int, int]:
    ids = [pk for m in made for pk in m.get("cases", [])]
    return sum(t.get("cases", 0) for t in told), TerminationCase.objects.filter(pk__in=ids).count()


def cases_remove_made(made: dict) -> None:
    svc.cases_remove(made.get("cases", []))
