"""The termination steps of the nightly job: render the notices not yet stored, and advance what the
calendar decides — the request window closed without a request (a default determination is due on the
hearing date), the appeal window closed without an appeal (the termination is final). Each change is dated
the day after the window closed, not the night the job ran, so a catch-up run writes the same timeline as
nightly runs would have."""

from datetime import date, timedelta

from core.clock import refuse_future
from core.dates import fmt_day
from core.workflow import transition

from ..documents import notices_render_pending
from ..models import CaseEvent, TerminationCase
from ..policy import termination_policy
from ..selectors import case_deadlines


def nightly_notices(*, as_of: date) -> dict:
    return {"notices_rendered": notices_render_pending()}


def nightly_deadlines(*, as_of: date) -> dict:
    refuse_future(as_of, doing="advanced")
    request_closed = appeal_closed = 0
    if not TerminationCase.objects.filter(status__in=("noticed", "determined")).exists():
        return {"request_windows_closed": 0, "appeal_windows_closed": 0}
    policy = termination_policy()
    for case in TerminationCase.objects.filter(status="noticed").prefetch_related("notices").select_related("account"):
        request_by = case_deadlines(case, policy=policy).request_by
        if request_by is None or request_by >= as_of or case.request_received_on is not None:
            continue
        what = (f"Request window closed on {fmt_day(request_by)} with no written request "
                f"({policy.cite('request')}); a default determination is due on the hearing date "
                f"{fmt_day(case.hearing_on)}")
        transition(case, to="no_request", actor=None, note=what)
        CaseEvent.objects.create(case=case, on=request_by + timedelta(days=1), kind="request_window_closed",
                                 what=what, by="nightly job")
        request_closed += 1
    for case in TerminationCase.objects.filter(status="determined", appeal_filed_on__isnull=True):
        appeal_by = policy.appeal_by(case.determination_mailed_on)
        if appeal_by >= as_of:
            continue
        what = (f"Appeal window closed on {fmt_day(appeal_by)} with no appeal ({policy.cite('appeal')}); the "
                "determination to terminate is final")
        transition(case, to="final", actor=None, note=what)
        CaseEvent.objects.create(case=case, on=appeal_by + timedelta(days=1), kind="appeal_window_closed",
                                 what=what, by="nightly job")
        appeal_closed += 1
    return {"request_windows_closed": request_closed, "appeal_windows_closed": appeal_closed}
