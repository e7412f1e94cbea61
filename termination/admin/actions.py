"""The steps of a case as buttons: which show for the case's status and the user's permissions, and their
forms."""

from dataclasses import dataclass
from datetime import date

from ..models import TerminationCase
from ..selectors import (
    current_notices,
)
from ..services import shutoff
from .forms import (
    AppealForm,
    CarriedOutForm,
    CaseForm,
    DecisionForm,
    DeterminationForm,
    DismissForm,
    HearingDeterminationForm,
    ReceiptForm,
    RequestForm,
    RestoreForm,
    ServeForm,
    ShutoffForm,
)


def needs_receipt(case: TerminationCase) -> bool:
    return not case.is_closed and any(n.received_on is None for n in current_notices(case).values())


def shutoff_refusals_on(case: TerminationCase, day: date) -> list[str]:
    return [e.message for e in shutoff.shutoff_refusals(case, as_of=day)]


def restore_refusals_on(case: TerminationCase, day: date) -> list[str]:
    return [e.message for e in shutoff.restore_refusals(case, as_of=day)]


@dataclass(frozen=True)
class CaseAction:
    """A button on the case page: its page's form, the permission it needs, and when it is offered."""

    slug: str
    label: str
    permission: str
    form: type[CaseForm]
    offered: object  # (case) -> bool
    intro: str = ""
    refusals: object = None  # (case, day) -> list of messages, shown before the button is pressed
    refusals_title: str = ""

    @property
    def url_name(self) -> str:
        return f"termination_terminationcase_{self.slug}"


ACTIONS = {a.slug: a for a in (
    CaseAction("serve", "Serve notice", "change", ServeForm,
               lambda c: c.status in ("open", "noticed", "no_request", "requested"),
               "Record service of the notice of the grounds and the hearing on one recipient: the owner, and the "
               "occupant too where there is one. The notice PDF is rendered for the file."),
    CaseAction("receipt", "Record receipt", "change", ReceiptForm, needs_receipt,
               "The day a mailed notice was received starts the window for a written request."),
    CaseAction("request", "Record hearing request", "change", RequestForm,
               lambda c: c.status in ("noticed", "no_request") and c.request_received_on is None,
               "A written request for the hearing that came by mail or at the counter. One after the window "
               "closed is accepted and flagged for the hearing officer."),
    CaseAction("hearing", "Hearing and determination", "determine", HearingDeterminationForm,
               lambda c: c.status in ("noticed", "no_request", "requested") and c.hearing_on is not None,
               "The hearing held — who appeared and the proof heard — and the determination made at its close, on "
               "one page and one day: on or after the hearing date the notice named."),
    CaseAction("determine", "Record determination", "determine", DeterminationForm,
               lambda c: c.status in ("noticed", "no_request", "requested"),
               "The hearing officer's determination and the day its notice was mailed: after the hearing, or by "
               "default on or after the hearing date when no timely written request came."),
    CaseAction("appeal", "Record appeal", "change", AppealForm,
               lambda c: c.status in ("determined", "final", "ordered") and c.outcome == "terminate"
               and c.appeal_filed_on is None,
               "An appeal of the determination to terminate, with its written statement of grounds. One filed "
               "after the window closed is accepted and flagged; a pending shut-off order is cancelled."),
    CaseAction("decide", "Commission decision", "determine", DecisionForm, lambda c: c.status == "appealed",
               "The final decision on the appeal, after its hearing."),
    CaseAction("shutoff", "Issue shut-off order", "order", ShutoffForm,
               lambda c: c.status in ("determined", "final"),
               "The order is issued only when every condition of the guard holds on the day it is issued.",
               shutoff_refusals_on, "What keeps a shut-off order from issuing on this day"),
    CaseAction("carried_out", "Shut-off carried out", "carry_out", CarriedOutForm, lambda c: c.status == "ordered",
               "The field crew shut the service off: the account is shut off and the disconnect charge, where the "
               "preset has one, waits for the next bill."),
    CaseAction("restore", "Restore service", "carry_out", RestoreForm, lambda c: c.status == "shut_off",
               "Service is restored once the preset's conditions hold; the restoration charge, where the preset "
               "has one, waits for the next bill.",
               restore_refusals_on, "What keeps service from being restored on this day"),
    CaseAction("dismiss", "Dismiss", "change", DismissForm,
               lambda c: TerminationCase.workflow.allows(c.status, "dismissed"),
               "Withdraw the case before the shut-off, with the reason."),
)}
