"""The small forms of a case's steps, each calling one service of ``termination.services.cases``."""

from datetime import date

from django import forms

from accounts.models import Account
from core.admin import (
    DATE_WIDGET,
    LINE_WIDGET,
    TEXT_WIDGET,
    DayField,
    ServiceForm,
    parse_day,
)
from core.clock import today
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import fmt_dollars

from ..models import TerminationCase
from ..policy import METHOD_WORDS, TerminationPolicy
from ..selectors import (
    current_notices,
)
from ..services import cases as svc
from ..services import shutoff

# --- forms: one per step, each calling one service ------------------------------------------------------

class CaseForm(ServiceForm):
    """A step on one case."""

    whole_fields = ("", "case")

    def __init__(self, *args, case: TerminationCase, policy: TerminationPolicy, **kwargs):
        self.case, self.policy = case, policy
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            if isinstance(field, DayField) and field.initial is None and field.required:
                field.initial = today()

    @property
    def date_field(self) -> str:
        return self.aliases.get("date", "")

    @property
    def day(self) -> date:
        """The form's date: the one the step happened (today until the form, or the page's address, says
        otherwise; never after today)."""
        if self.is_bound:
            day = (getattr(self, "cleaned_data", None) or {}).get(self.date_field)
        else:
            day = parse_day(self.initial.get(self.date_field))
        return day if day and day <= today() else today()


class ServeForm(CaseForm):
    submit = "Record service"
    aliases = {"to": "role"}
    role = forms.ChoiceField(label="Recipient")
    method = forms.ChoiceField(label="How")
    article_number = forms.CharField(label="Article number", max_length=40, required=False, widget=LINE_WIDGET,
                                     help_text="The certified or registered mail article number.")
    served_on = DayField(label="Served on")
    received_on = DayField(label="Received on", required=False,
                           help_text="Personal service (and delivery to a person of suitable age) is received the "
                                     "day it is served; for mail, the day on the return receipt, or record it "
                                     "later with “Record receipt”.")
    hearing_on = forms.DateField(label="Hearing date", widget=DATE_WIDGET)
    hearing_time = forms.TimeField(label="Hearing time", required=False,
                                   widget=forms.TimeInput(format="%H:%M", attrs={"type": "time"}))
    hearing_place = forms.CharField(label="Hearing place", max_length=200, required=False, widget=LINE_WIDGET)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        case, policy = self.case, self.policy
        account = case.account
        roles = [("owner", f"Owner: {account.owner.name}")]
        if account.occupant_id and account.occupant_id != account.owner_id:
            roles.append(("occupant", f"Occupant: {account.occupant.name}"))
        self.fields["role"].choices = roles
        self.fields["method"].choices = [(m, METHOD_WORDS[m].capitalize()) for m in policy.methods]
        self.fields["hearing_on"].initial = case.hearing_on or policy.hearing_earliest(today())
        self.fields["hearing_on"].help_text = (
            f"At least {policy.notice_min_days} days after service ({policy.cite('notice')}).")
        self.fields["hearing_time"].initial = case.hearing_time
        self.fields["hearing_place"].initial = case.hearing_place or policy.hearing_place

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        notice = svc.notice_serve(case=self.case, role=d["role"], method=d["method"], served_on=d["served_on"],
                                  hearing_on=d["hearing_on"], actor=actor, received_on=d["received_on"],
                                  article_number=d["article_number"], hearing_time=d["hearing_time"],
                                  hearing_place=d["hearing_place"])
        return (f"Notice served on the {notice.role} ({notice.name}) on {fmt_day(notice.served_on)}; hearing "
                f"{fmt_day(notice.hearing_on)}.")


class ReceiptForm(CaseForm):
    submit = "Record receipt"
    notice = forms.ChoiceField(label="Notice")
    received_on = DayField(label="Received on", help_text="The day on the return receipt.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.notices = {str(n.pk): n for n in current_notices(self.case).values() if n.received_on is None}
        self.fields["notice"].choices = [
            (key, f"To the {n.role} ({n.name}), {METHOD_WORDS[n.method]}, served {fmt_day(n.served_on)}")
            for key, n in self.notices.items()]

    def perform(self, *, actor) -> str:
        notice = svc.notice_received(notice=self.notices[self.cleaned_data["notice"]],
                                     received_on=self.cleaned_data["received_on"], actor=actor)
        return f"Receipt of the notice to the {notice.role} recorded: {fmt_day(notice.received_on)}."


class RequestForm(CaseForm):
    submit = "Record the request"
    received_on = DayField(label="Received on", help_text="The day the written request arrived.")
    text = forms.CharField(label="What the request says", required=False, widget=TEXT_WIDGET)

    def perform(self, *, actor) -> str:
        case = svc.hearing_request(case=self.case, received_on=self.cleaned_data["received_on"], actor=actor,
                                   via="clerk", text=self.cleaned_data["text"])
        return ("Written request for the hearing recorded"
                + (": it came after the window closed, so it is flagged for the hearing officer." if case.request_late
                   else "."))


class HearingDeterminationForm(CaseForm):
    """The hearing officer's day on one page: the hearing held, and the determination made at its close."""

    submit = "Record the hearing and the determination"
    aliases = {"date": "held_on"}
    held_on = DayField(label="Held and determined on",
                       help_text="On or after the hearing date the notice named; the determination is made the same "
                                 "day, at the close of the hearing.")
    attendance = forms.CharField(label="Who appeared", required=False, widget=TEXT_WIDGET)
    evidence_notes = forms.CharField(label="Proof heard", required=False, widget=TEXT_WIDGET)
    outcome = forms.ChoiceField(label="Outcome", choices=TerminationCase.Outcome.choices)
    mailed_on = DayField(label="Notice of the determination mailed on")
    notes = forms.CharField(label="Notes", required=False, widget=TEXT_WIDGET,
                            help_text="Printed on the notice of the determination.")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        case = svc.hearing_determine(case=self.case, held_on=d["held_on"], attendance=d["attendance"],
                                     evidence_notes=d["evidence_notes"], outcome=d["outcome"],
                                     mailed_on=d["mailed_on"], actor=actor, notes=d["notes"])
        return (f"Hearing held and determination recorded on {fmt_day(d['held_on'])}: "
                f"{case.get_outcome_display().lower()}. The case is now: {case.get_status_display().lower()}.")


class DeterminationForm(CaseForm):
    submit = "Record the determination"
    aliases = {"date": "determined_on"}
    outcome = forms.ChoiceField(label="Outcome", choices=TerminationCase.Outcome.choices)
    determined_on = DayField(label="Determined on")
    mailed_on = DayField(label="Notice of the determination mailed on")
    notes = forms.CharField(label="Notes", required=False, widget=TEXT_WIDGET,
                            help_text="Printed on the notice of the determination.")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        case = svc.determination_record(case=self.case, outcome=d["outcome"], mailed_on=d["mailed_on"],
                                        actor=actor, as_of=d["determined_on"], notes=d["notes"])
        return (f"Determination recorded: {case.get_outcome_display().lower()}"
                + (" (by default: no timely written request)" if case.by_default else "")
                + f". The case is now: {case.get_status_display().lower()}.")


class AppealForm(CaseForm):
    submit = "Record the appeal"
    filed_on = DayField(label="Filed on")
    grounds = forms.CharField(label="Written statement of grounds", widget=TEXT_WIDGET)

    def perform(self, *, actor) -> str:
        case = svc.appeal_file(case=self.case, filed_on=self.cleaned_data["filed_on"],
                               grounds=self.cleaned_data["grounds"], actor=actor)
        return "Appeal recorded" + (": filed after the window closed, so it is flagged." if case.appeal_late
                                    else "; the shut-off waits for the decision.")


class DecisionForm(CaseForm):
    submit = "Record the decision"
    aliases = {"date": "decided_on"}
    outcome = forms.ChoiceField(label="Decision", choices=TerminationCase.Decision.choices)
    hearing_on = DayField(label="Appeal hearing held on")
    notice_mailed_on = DayField(label="Notice of the appeal hearing mailed on")
    decided_on = DayField(label="Decided on")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["notice_mailed_on"].help_text = (
            f"At least {self.policy.appeal_notice_min_days} days before the appeal hearing "
            f"({self.policy.cite('appeal')}).")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        case = svc.appeal_decide(case=self.case, outcome=d["outcome"], hearing_on=d["hearing_on"],
                                 notice_mailed_on=d["notice_mailed_on"], actor=actor, as_of=d["decided_on"])
        return f"Decision recorded. The case is now: {case.get_status_display().lower()}."


class ShutoffForm(CaseForm):
    submit = "Issue the shut-off order"
    aliases = {"date": "issued_on"}
    issued_on = DayField(label="Issued on", doing="ordered")

    def perform(self, *, actor) -> str:
        order = shutoff.shutoff_order(case=self.case, as_of=self.cleaned_data["issued_on"], actor=actor)
        return f"Shut-off order {order.pk} issued on {fmt_day(order.issued_on)}: print it for the field crew below."


class CarriedOutForm(CaseForm):
    submit = "Record the shut-off"
    done_on = DayField(label="Shut off on")
    at = forms.TimeField(label="At (time)", required=False, widget=forms.TimeInput(attrs={"type": "time"}),
                         help_text="When the water was turned off.")
    note = forms.CharField(label="Note", required=False, widget=TEXT_WIDGET,
                           help_text="What the crew did or found: the curb valve locked, a tag left on the door.")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        shutoff.shutoff_carry_out(case=self.case, done_on=d["done_on"], actor=actor, at=d["at"], note=d["note"])
        return f"Service shut off on {fmt_day(d['done_on'])}."


class RestoreForm(CaseForm):
    submit = "Restore service"
    aliases = {"date": "restored_on"}
    restored_on = DayField(label="Restored on")
    at = forms.TimeField(label="At (time)", required=False, widget=forms.TimeInput(attrs={"type": "time"}),
                         help_text="When the water was turned back on.")
    note = forms.CharField(label="Note", required=False, widget=TEXT_WIDGET)

    def perform(self, *, actor) -> str:
        shutoff.service_restore(case=self.case, as_of=self.cleaned_data["restored_on"], actor=actor,
                                note=self.cleaned_data["note"], at=self.cleaned_data["at"])
        return f"Service restored on {fmt_day(self.cleaned_data['restored_on'])}."


class DismissForm(CaseForm):
    submit = "Dismiss the case"
    aliases = {"date": "dismissed_on"}
    dismissed_on = DayField(label="Dismissed on")
    reason = forms.CharField(label="Reason", widget=TEXT_WIDGET,
                             help_text="Why the case is withdrawn (opened in error, the violation cured, …).")

    def perform(self, *, actor) -> str:
        svc.case_dismiss(case=self.case, reason=self.cleaned_data["reason"], as_of=self.cleaned_data["dismissed_on"],
                         actor=actor)
        return "Case dismissed; any pending order is cancelled."


class OpenCaseForm(ServiceForm):
    submit = "Open the case"
    aliases = {"date": "opened_on", "grounds_detail": "detail"}
    account_no = forms.CharField(label="Account number", max_length=20)
    grounds = forms.ChoiceField(label="Grounds", choices=TerminationCase.Grounds.choices)
    section = forms.CharField(label="Section", max_length=80, required=False, widget=LINE_WIDGET,
                              help_text="The section violated (a violation); nonpayment cites the preset's rule.")
    detail = forms.CharField(label="Specific grounds", required=False, widget=TEXT_WIDGET,
                             help_text="As the notice states them; for nonpayment the unpaid bills are listed "
                                       "when left empty.")
    opened_on = DayField(label="Opened on")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["opened_on"].initial = today()
        self.case = None

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        account = Account.objects.filter(account_no=d["account_no"].strip()).select_related("owner").first()
        if account is None:
            raise ApplicationError(f"no account '{d['account_no'].strip()}'", field="account_no")
        self.case = svc.case_open(account=account, grounds=d["grounds"], as_of=d["opened_on"], actor=actor,
                                  section=d["section"], detail=d["detail"])
        return (f"Case {self.case.number} opened for account {account.account_no}"
                + (f": {fmt_dollars(self.case.amount_delinquent)} delinquent." if self.case.grounds == "nonpayment"
                   else "."))


class InterruptionForm(ServiceForm):
    submit = "Log the interruption"
    account_no = forms.CharField(label="Account number", max_length=20)
    kind = forms.ChoiceField(label="Kind")
    started_on = DayField(label="Started on")
    ended_on = DayField(label="Ended on", required=False)
    reason = forms.CharField(label="Reason", widget=TEXT_WIDGET)

    def __init__(self, *args, policy: TerminationPolicy, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [(k, k.replace("_", " ").capitalize()) for k in policy.emergency_kinds]
        self.fields["kind"].help_text = f"Allowed without a hearing by {policy.emergency_citation}."
        self.fields["started_on"].initial = today()

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        account = Account.objects.filter(account_no=d["account_no"].strip()).first()
        if account is None:
            raise ApplicationError(f"no account '{d['account_no'].strip()}'", field="account_no")
        entry = svc.interruption_log(account=account, kind=d["kind"], started_on=d["started_on"],
                                     reason=d["reason"], actor=actor, ended_on=d["ended_on"])
        return (f"Interruption logged: {entry.kind.replace('_', ' ')} at account {account.account_no} from "
                f"{fmt_day(entry.started_on)} ({entry.citation}). It is not a shut-off order.")
