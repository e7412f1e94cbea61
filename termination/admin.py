"""The termination office in the admin: the clerk's and the hearing officer's pages.

A case is never edited through a change form. Its page is read-only — the grounds with the notices and the
bills, the hearing, the determination, the appeal, the work orders, the timeline and the status history —
and each step of the due process is a button leading to a small page of its own whose form calls one
service of ``termination.services.cases``. A refusal comes back on that page as form errors, each under
the field it names (or above the form when it is about the case as a whole), never as a server error.
The buttons shown follow the case's status and the user's permissions: the hearing file, the
determination and the Commission's decision need ``termination.determine_terminationcase``; issuing and
carrying out a shut-off and restoring service need ``termination.order_terminationcase``; the other steps
``termination.change_terminationcase``. Each form's date is the day the step happened (default today).

Beside the case pages: opening a case ("Add"), the delinquency list with "Open cases for the selected
accounts", the case board (active cases by stage with each next step), a printable timeline, the notice,
determination and work-order papers, and the log of emergency interruptions (never a case).
"""

from dataclasses import dataclass
from datetime import date

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from accounts.models import Account
from core.admin import (
    DATE_WIDGET,
    LINE_WIDGET,
    TEXT_WIDGET,
    CsvExportMixin,
    DayField,
    ReadOnlyInline,
    ServiceForm,
    StatusChangeInline,
)
from core.clock import refuse_future, today
from core.dates import fmt_day, iso_date
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars
from core.papers import paper_pdf

from .documents import determination_pdf_store, notice_pdf_store, work_order_paper
from .models import CaseBill, CaseEvent, Interruption, Notice, TerminationCase, WorkOrder
from .policy import METHOD_WORDS, TerminationPolicy, termination_policy
from .selectors import (
    case_board,
    case_deadlines,
    case_next_step,
    case_unpaid,
    current_notices,
    delinquencies,
    list_floor,
)
from .services import cases as svc

PERMISSIONS = {"change": "termination.change_terminationcase",
               "determine": "termination.determine_terminationcase",
               "order": "termination.order_terminationcase"}
FORM_TEMPLATE = "admin/termination/form.html"


def _policy() -> TerminationPolicy | None:
    try:
        return termination_policy()
    except ApplicationError:
        return None


def _no_policy(request) -> HttpResponseRedirect:
    messages.error(request, "No preset with termination rules is installed (manage.py setup_utility PRESET).")
    return HttpResponseRedirect(reverse("admin:index"))


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
            day = _parse_day(self.initial.get(self.date_field))
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


class HearingForm(CaseForm):
    submit = "Record the hearing file"
    aliases = {"date": "held_on"}
    held_on = DayField(label="Held on")
    attendance = forms.CharField(label="Who appeared", required=False, widget=TEXT_WIDGET)
    evidence_notes = forms.CharField(label="Proof heard", required=False, widget=TEXT_WIDGET)

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        svc.hearing_record(case=self.case, attendance=d["attendance"], evidence_notes=d["evidence_notes"],
                           actor=actor, held_on=d["held_on"])
        return f"Hearing file recorded (held {fmt_day(d['held_on'])})."


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
        order = svc.shutoff_order(case=self.case, as_of=self.cleaned_data["issued_on"], actor=actor)
        return f"Shut-off order {order.pk} issued on {fmt_day(order.issued_on)}: print it for the field crew below."


class CarriedOutForm(CaseForm):
    submit = "Record the shut-off"
    done_on = DayField(label="Shut off on")

    def perform(self, *, actor) -> str:
        svc.shutoff_carry_out(case=self.case, done_on=self.cleaned_data["done_on"], actor=actor)
        return f"Service shut off on {fmt_day(self.cleaned_data['done_on'])}."


class RestoreForm(CaseForm):
    submit = "Restore service"
    aliases = {"date": "restored_on"}
    restored_on = DayField(label="Restored on")
    note = forms.CharField(label="Note", required=False, widget=TEXT_WIDGET)

    def perform(self, *, actor) -> str:
        svc.service_restore(case=self.case, as_of=self.cleaned_data["restored_on"], actor=actor,
                            note=self.cleaned_data["note"])
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


def _needs_receipt(case: TerminationCase) -> bool:
    return not case.is_closed and any(n.received_on is None for n in current_notices(case).values())


def _shutoff_refusals(case: TerminationCase, day: date) -> list[str]:
    return [e.message for e in svc.shutoff_refusals(case, as_of=day)]


def _restore_refusals(case: TerminationCase, day: date) -> list[str]:
    return [e.message for e in svc.restore_refusals(case, as_of=day)]


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
    CaseAction("receipt", "Record receipt", "change", ReceiptForm, _needs_receipt,
               "The day a mailed notice was received starts the window for a written request."),
    CaseAction("request", "Record hearing request", "change", RequestForm,
               lambda c: c.status in ("noticed", "no_request") and c.request_received_on is None,
               "A written request for the hearing that came by mail or at the counter. One after the window "
               "closed is accepted and flagged for the hearing officer."),
    CaseAction("hearing", "Hearing file", "determine", HearingForm,
               lambda c: c.status in ("noticed", "no_request", "requested") and c.hearing_on is not None,
               "Who appeared at the hearing and the proof heard."),
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
               _shutoff_refusals, "What keeps a shut-off order from issuing on this day"),
    CaseAction("carried_out", "Shut-off carried out", "order", CarriedOutForm, lambda c: c.status == "ordered",
               "The field crew shut the service off: the account is shut off and the disconnect charge, where the "
               "preset has one, waits for the next bill."),
    CaseAction("restore", "Restore service", "order", RestoreForm, lambda c: c.status == "shut_off",
               "Service is restored once the preset's conditions hold; the restoration charge, where the preset "
               "has one, waits for the next bill.",
               _restore_refusals, "What keeps service from being restored on this day"),
    CaseAction("dismiss", "Dismiss", "change", DismissForm,
               lambda c: TerminationCase.workflow.allows(c.status, "dismissed"),
               "Withdraw the case before the shut-off, with the reason."),
)}


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


# --- the case page ------------------------------------------------------------------------------------

class NoticeInline(ReadOnlyInline):
    model = Notice
    after = "Grounds"
    fields = readonly_fields = ("role", "name", "method", "article_number", "served_on", "received_on", "hearing_on",
                                "paper")
    verbose_name_plural = "notices served"

    @admin.display(description="PDF")
    def paper(self, obj):
        return format_html('<a href="{}">Notice PDF</a>',
                           reverse("admin:termination_terminationcase_notice_pdf", args=[obj.case_id, obj.pk]))


class CaseBillInline(ReadOnlyInline):
    model = CaseBill
    after = "Grounds"
    fields = readonly_fields = ("bill_link", "bill_date", "due_date", "delinquent_from", "amount_shown")
    verbose_name_plural = "bills delinquent when the case was opened"

    @admin.display(description="bill")
    def bill_link(self, obj):
        return format_html('<a href="{}">{}</a>', reverse("admin:billing_bill_change", args=[obj.bill_id]),
                           obj.bill.number)

    @admin.display(description="dated")
    def bill_date(self, obj):
        return obj.bill.bill_date

    @admin.display(description="due")
    def due_date(self, obj):
        return obj.bill.due_date

    @admin.display(description="unpaid then")
    def amount_shown(self, obj):
        return fmt_dollars(obj.amount)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("bill")


class WorkOrderInline(ReadOnlyInline):
    model = WorkOrder
    after = "Appeal"
    fields = readonly_fields = ("kind", "status", "issued_on", "issued_by", "done_on", "cancel_reason", "paper")
    verbose_name_plural = "work orders"

    @admin.display(description="paper")
    def paper(self, obj):
        return format_html('<a href="{}">Print work order</a>',
                           reverse("admin:termination_terminationcase_work_order_pdf", args=[obj.case_id, obj.pk]))


class CaseEventInline(ReadOnlyInline):
    model = CaseEvent
    after = "Appeal"
    fields = readonly_fields = ("on", "what", "by", "needs_a_look")
    verbose_name_plural = "timeline"

    @admin.display(description="needs a look")
    def needs_a_look(self, obj):
        return "Yes: late" if obj.flagged else "—"


class CaseChangeList(ChangeList):
    """Works out each listed case's next step once per page, with the preset's rules read once."""

    def get_results(self, request):
        super().get_results(request)
        policy, as_of = _policy(), today()
        for case in self.result_list:
            case.next_step = case_next_step(case, as_of=as_of, policy=policy) if policy else None


@admin.register(TerminationCase)
class TerminationCaseAdmin(CsvExportMixin, admin.ModelAdmin):
    list_display = ("number", "account", "owner", "grounds", "amount_shown", "status", "hearing_on", "next_step_shown",
                    "next_step_on", "flagged")
    list_filter = ("status", "grounds")
    search_fields = ("number", "account__account_no", "account__owner__name")
    list_select_related = ("account", "account__owner", "account__occupant")
    change_form_template = "admin/termination/terminationcase/change_form.html"
    change_list_template = "admin/termination/terminationcase/change_list.html"
    fieldsets = (
        (None, {"fields": ("number", "account_link", "status", "next_step_detail", "deadlines", "flag_detail")}),
        ("Grounds", {"fields": ("grounds", "section", "grounds_detail", "amount_shown", "unpaid_today",
                                "opened_on", "opened_by")}),
        ("Hearing", {"fields": ("hearing_on", "hearing_time", "hearing_place", "request_received_on", "request_via",
                                "request_timing", "request_text", "attendance", "evidence_notes")}),
        ("Determination", {"fields": ("outcome", "determination_basis", "determined_on", "determined_by",
                                      "determination_mailed_on", "outcome_notes", "determination_paper")}),
        ("Appeal", {"fields": ("appeal_filed_on", "appeal_timing", "appeal_grounds", "decision", "appeal_hearing_on",
                               "appeal_notice_mailed_on", "decided_on", "closed_on")}),
    )
    inlines = (NoticeInline, CaseBillInline, WorkOrderInline, CaseEventInline, StatusChangeInline)

    def get_readonly_fields(self, request, obj=None):
        return [name for _, options in self.fieldsets for name in options["fields"]]

    def has_add_permission(self, request):
        return request.user.has_perm("termination.add_terminationcase")

    def has_change_permission(self, request, obj=None):
        # Nothing on a case is edited by a form of its fields: each step has its own page.
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("notices")

    def get_changelist(self, request, **kwargs):
        return CaseChangeList

    # -- columns and read-only fields

    @admin.display(description="owner", ordering="account__owner__name")
    def owner(self, obj):
        return obj.account.owner.name

    @admin.display(description="amount delinquent", ordering="amount_delinquent")
    def amount_shown(self, obj):
        return fmt_dollars(obj.amount_delinquent) if obj.grounds == "nonpayment" else "—"

    @admin.display(description="next step")
    def next_step_shown(self, obj):
        step = getattr(obj, "next_step", None)
        return step.what if step else "—"

    @admin.display(description="by")
    def next_step_on(self, obj):
        step = getattr(obj, "next_step", None)
        return step.on if step and step.on else "—"

    @admin.display(description="flagged", boolean=True)
    def flagged(self, obj):
        return obj.request_late or obj.appeal_late

    # Every yes/no a clerk reads here says in words what is true of the case: a bare ✖ beside "received after
    # the window closed" reads, in a hearing file, as the opposite of what it means.

    @admin.display(description="flagged for the hearing officer")
    def flag_detail(self, obj):
        late = [what for what, is_late in (
            ("the request for a hearing came after its window closed", obj.request_late),
            ("the appeal was filed after its window closed", obj.appeal_late)) if is_late]
        return "Yes: " + "; ".join(late) if late else "No"

    @admin.display(description="request timing")
    def request_timing(self, obj):
        if obj.request_received_on is None:
            return "No written request received"
        if obj.request_late:
            return "Late: received after the request window closed (accepted and flagged)"
        return "On time: received within the request window"

    @admin.display(description="determined")
    def determination_basis(self, obj):
        if not obj.outcome:
            return "—"
        if obj.by_default:
            return "By default: no timely written request for a hearing"
        return "After the hearing"

    @admin.display(description="appeal timing")
    def appeal_timing(self, obj):
        if obj.appeal_filed_on is None:
            return "No appeal filed"
        if obj.appeal_late:
            return "Late: filed after the appeal window closed (accepted and flagged)"
        return "On time: filed within the appeal window"

    @admin.display(description="account")
    def account_link(self, obj):
        account = obj.account
        return format_html('<a href="{}">{}</a> · {} · {}', reverse("admin:accounts_account_change", args=[account.pk]),
                           account.account_no, account.owner.name, account.premises.service_address)

    @admin.display(description="next step")
    def next_step_detail(self, obj):
        policy = _policy()
        if policy is None:
            return "—"
        step = case_next_step(obj, as_of=today(), policy=policy)
        if step.on is None:
            return step.what
        late = step.on < today() and obj.is_active
        return format_html('{} — <span class="{}">{}</span>', step.what, "overdue" if late else "",
                           fmt_day(step.on) + (" (overdue)" if late else ""))

    @admin.display(description="deadlines")
    def deadlines(self, obj):
        policy = _policy()
        if policy is None:
            return "—"
        d = case_deadlines(obj, policy=policy)
        rows = [(f"earliest lawful hearing ({policy.cite('notice')})", d.hearing_earliest),
                (f"written request by ({policy.cite('request')})", d.request_by),
                (f"appeal by ({policy.cite('appeal')})", d.appeal_by),
                (f"earliest appeal hearing ({policy.cite('appeal')})", d.appeal_hearing_earliest)]
        shown = [(label, fmt_day(day)) for label, day in rows if day]
        return format_html_join(" · ", "{}: {}", shown) or "—"

    @admin.display(description="unpaid today")
    def unpaid_today(self, obj):
        if obj.grounds != "nonpayment":
            return "—"
        return fmt_dollars(case_unpaid(obj, as_of=today()))

    @admin.display(description="notice of the determination")
    def determination_paper(self, obj):
        if not obj.outcome:
            return "—"
        return format_html('<a href="{}">{} PDF</a>',
                           reverse("admin:termination_terminationcase_determination_pdf", args=[obj.pk]),
                           "Decision" if obj.decided_on else "Determination")

    # -- the pages

    def get_urls(self):
        view = self.admin_site.admin_view
        urls = [
            path("board/", view(self.board_view), name="termination_terminationcase_board"),
            path("delinquent/", view(self.delinquent_view), name="termination_terminationcase_delinquent"),
            path("<int:pk>/timeline/", view(self.timeline_view), name="termination_terminationcase_timeline"),
            path("<int:pk>/notices/<int:notice_pk>/pdf/", view(self.notice_pdf_view),
                 name="termination_terminationcase_notice_pdf"),
            path("<int:pk>/determination/pdf/", view(self.determination_pdf_view),
                 name="termination_terminationcase_determination_pdf"),
            path("<int:pk>/orders/<int:order_pk>/pdf/", view(self.work_order_pdf_view),
                 name="termination_terminationcase_work_order_pdf"),
        ]
        urls += [path(f"<int:pk>/{a.slug.replace('_', '-')}/", view(self.action_view), {"slug": a.slug},
                      name=a.url_name) for a in ACTIONS.values()]
        return urls + super().get_urls()

    def _context(self, request, **extra) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}

    def _case(self, request, pk) -> TerminationCase:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return get_object_or_404(TerminationCase.objects.select_related(
            "account", "account__owner", "account__occupant", "account__premises"), pk=pk)

    def offered_actions(self, request, case: TerminationCase) -> list[CaseAction]:
        return [a for a in ACTIONS.values() if request.user.has_perm(PERMISSIONS[a.permission]) and a.offered(case)]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        case = TerminationCase.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        buttons = []
        if case is not None and self.has_view_permission(request, case):
            buttons = [(a.label, reverse(f"admin:{a.url_name}", args=[case.pk]))
                       for a in self.offered_actions(request, case)]
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "case_buttons": buttons})

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        if _policy() is None:
            return _no_policy(request)
        form = OpenCaseForm(request.POST or None, initial={"grounds": "nonpayment"})
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:termination_terminationcase_change", args=[form.case.pk]))
        return TemplateResponse(request, FORM_TEMPLATE, self._context(
            request, form=form, title="Open a termination case",
            intro="Nonpayment needs an amount delinquent on the day under the preset's rule; the case keeps each "
                  "delinquent bill and what it owed. A violation names the section violated. The delinquency "
                  "list opens cases for many accounts at once."))

    def action_view(self, request, pk, slug):
        action = ACTIONS[slug]
        if not request.user.has_perm(PERMISSIONS[action.permission]):
            raise PermissionDenied
        case = self._case(request, pk)
        policy = _policy()
        if policy is None:
            return _no_policy(request)
        case_url = reverse("admin:termination_terminationcase_change", args=[case.pk])
        if not action.offered(case):
            self.message_user(request, f"“{action.label}” is not a step for case {case.number}: it is "
                                       f"{case.get_status_display().lower()}.", messages.WARNING)
            return HttpResponseRedirect(case_url)
        # A date in the address (?issued_on=…) is the form's starting date: the conditions are shown for it.
        initial = {name: value for name, value in request.GET.items() if name in action.form.base_fields}
        form = action.form(request.POST or None, case=case, policy=policy, initial=initial)
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(case_url)
        refusals = action.refusals(case, form.day) if action.refusals else None
        step = case_next_step(case, as_of=today(), policy=policy)
        return TemplateResponse(request, FORM_TEMPLATE, self._context(
            request, form=form, case=case, action=action, intro=action.intro, refusals=refusals,
            refusals_title=action.refusals_title, refusals_day=form.day, next_step=step,
            title=f"{action.label}: case {case.number}"))

    def board_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        if _policy() is None:
            return _no_policy(request)
        as_of = _day_param(request, "as_of") or today()
        stages = [(status, label, [(case, step, bool(step.on and step.on < as_of and status != "final"))
                                   for case, step in rows])
                  for status, label, rows in case_board(as_of=as_of)]
        return TemplateResponse(request, "admin/termination/terminationcase/board.html", self._context(
            request, stages=stages, as_of=as_of, title=f"Case board on {fmt_day(as_of)}",
            total=sum(len(rows) for _, _, rows in stages)))

    def delinquent_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        if _policy() is None:
            return _no_policy(request)
        as_of = _day_param(request, "as_of") or today()
        try:
            refuse_future(as_of, field="as_of", doing="listed")
        except ApplicationError as exc:
            self.message_user(request, str(exc.errors[0].message), messages.ERROR)
            as_of = today()
        url = reverse("admin:termination_terminationcase_delinquent") + f"?as_of={as_of.isoformat()}"
        can_open = self.has_add_permission(request)
        if request.method == "POST":
            if not can_open:
                raise PermissionDenied
            chosen = request.POST.getlist("account_no")
            if not chosen:
                self.message_user(request, "No account was selected.", messages.WARNING)
            for account in Account.objects.filter(account_no__in=chosen).order_by("account_no"):
                try:
                    case = svc.case_open(account=account, grounds="nonpayment", as_of=as_of, actor=request.user)
                except ApplicationError as exc:
                    self.message_user(request, f"{account.account_no}: not opened: "
                                               + "; ".join(e.message for e in exc.errors), messages.WARNING)
                else:
                    self.message_user(request, format_html(
                        'Case <a href="{}">{}</a> opened for account {}: {} delinquent.',
                        reverse("admin:termination_terminationcase_change", args=[case.pk]), case.number,
                        account.account_no, fmt_dollars(case.amount_delinquent)), messages.SUCCESS)
            return HttpResponseRedirect(url)
        policy, floor = termination_policy(), list_floor()
        everyone = delinquencies(as_of=as_of, policy=policy, floor=ZERO)
        rows = [d for d in everyone if d.amount >= floor or d.case_number]
        cases = dict(TerminationCase.objects.filter(number__in=[d.case_number for d in rows if d.case_number])
                     .values_list("number", "pk"))
        return TemplateResponse(request, "admin/termination/terminationcase/delinquent.html", self._context(
            request, rows=rows, table_rows=_delinquent_rows(rows, cases, can_open=can_open), as_of=as_of,
            can_open=can_open and policy.nonpayment, rule=policy.trigger, policy=policy, floor=floor,
            below_floor=len(everyone) - len(rows), title=f"Delinquency list on {fmt_day(as_of)}"))

    def timeline_view(self, request, pk):
        case = self._case(request, pk)
        return TemplateResponse(request, "admin/termination/terminationcase/timeline.html", {
            "case": case, "events": case.events.select_related("actor"), "notices": list(case.notices.all()),
            "printed_on": today(), "utility": (_policy().utility_name if _policy() else ""),
            "title": f"Timeline of case {case.number}"})

    def notice_pdf_view(self, request, pk, notice_pk):
        case = self._case(request, pk)
        notice = get_object_or_404(Notice, pk=notice_pk, case=case)
        if not notice.pdf:
            notice_pdf_store(notice_id=notice.pk)
            notice.refresh_from_db()
        return _pdf(notice.pdf, f"{case.number}-notice-{notice.role}.pdf")

    def determination_pdf_view(self, request, pk):
        case = self._case(request, pk)
        if not case.outcome:
            self.message_user(request, f"Case {case.number} has no determination yet.", messages.WARNING)
            return HttpResponseRedirect(reverse("admin:termination_terminationcase_change", args=[case.pk]))
        if not case.determination_pdf:
            determination_pdf_store(case_id=case.pk)
            case.refresh_from_db()
        return _pdf(case.determination_pdf, f"{case.number}-{'decision' if case.decided_on else 'determination'}.pdf")

    def work_order_pdf_view(self, request, pk, order_pk):
        case = self._case(request, pk)
        order = get_object_or_404(WorkOrder.objects.select_related("case__account__premises"), pk=order_pk, case=case)
        response = HttpResponse(paper_pdf(work_order_paper(order)), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="{case.number}-work-order-{order.pk}.pdf"'
        return response


def _pdf(stored, filename: str) -> FileResponse:
    return FileResponse(stored.open("rb"), content_type="application/pdf", filename=filename)


def _parse_day(value) -> date | None:
    if isinstance(value, date) or not value:
        return value or None
    try:
        return iso_date(str(value))
    except ValueError:
        return None


def _day_param(request, name: str) -> date | None:
    return _parse_day(request.GET.get(name) or request.POST.get(name))


# --- emergency interruptions ----------------------------------------------------------------------------

@admin.register(Interruption)
class InterruptionAdmin(admin.ModelAdmin):
    """Service interrupted without the hearing procedure because the ordinance allows it: logged here, never
    as a case or a shut-off order."""

    list_display = ("started_on", "account", "kind", "citation", "ended_on", "reason", "actor")
    list_filter = ("kind",)
    search_fields = ("account__account_no", "reason")
    list_select_related = ("account", "actor")
    date_hierarchy = "started_on"
    fields = readonly_fields = ("account", "kind", "citation", "started_on", "ended_on", "reason", "actor", "at")

    def has_add_permission(self, request):
        return request.user.has_perm("termination.add_interruption")

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        policy = _policy()
        if policy is None:
            return _no_policy(request)
        form = InterruptionForm(request.POST or None, policy=policy)
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:termination_interruption_changelist"))
        return TemplateResponse(request, FORM_TEMPLATE, {
            **self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
            "title": "Log an emergency interruption",
            "intro": "An interruption the ordinance allows without the hearing procedure "
                     f"({policy.emergency_citation}: {', '.join(k.replace('_', ' ') for k in policy.emergency_kinds)})."
                     " "
                     "It is logged as its own event, never as a termination case or a shut-off order."})


def _delinquent_rows(rows, cases: dict[str, int], *, can_open: bool):
    """The delinquency list's rows, written here rather than by a template loop: a village's two thousand
    delinquent accounts in milliseconds (the template's filters took most of the page's time)."""
    case_url = reverse("admin:termination_terminationcase_change", args=[0])

    def row(d) -> str:
        pick = format_html('<td><input type="checkbox" name="account_no" value="{}" id="open-{}" '
                           'aria-label="Open a case for account {}"></td>', d.account_no, d.account_no, d.account_no)
        bills = format_html_join(mark_safe("<br>"), "{} (due {}; ${} eligible since {})",
                                 ((b.number, fmt_day(b.due_date), b.amount, fmt_day(b.delinquent_from))
                                  for b in d.bills))
        case = (format_html('<a href="{}">{}</a>', case_url.replace("/0/", f"/{cases[d.case_number]}/"),
                            d.case_number) if d.case_number in cases else "—")
        return format_html("<tr>{}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>${}</td><td>{}</td></tr>",
                           (mark_safe("<td></td>") if d.case_number else pick) if can_open else "",
                           d.account_no, d.owner, d.service_address, bills, d.amount, case)

    return mark_safe("\n".join(row(d) for d in rows))  # each row escaped by format_html

