"""Backflow and cross-connection compliance in the admin: the clerk's and the Backflow inspector's pages.

Nothing here is edited through a change form of its fields. An assessment, a device, a test and a notice
each have a read-only page, and each thing done to them is a button leading to a small form that calls one
service of ``backflow.services.compliance``; a refusal comes back on that form under the field it names
(or above the form when it is about the record as a whole), never as a server error.

* Assessments: "Assess premises" (the list's add page) records the conditions found at an account's
  premises, from the installed preset's device rule, and shows the answer: required or not, the device
  types allowed, the citation and the trace of the condition that decided.
* Devices: "Register device"; a device's page shows its tests and notices, when its next test is due and
  why, with "Record test" and "Serve notice".
* Testers: add and change (a lapsed certification is marked on the list).
* Tests: a test a tester submitted online waits for "Accept test" or "Reject test" (with a note); only an
  accepted test moves the device's next test due.
* Compliance notices: "Serve notice"; a notice's page has its PDF, "Shorten window" (where the preset lets
  the Board or Superintendent shorten it), "Complied / paid", and the account's "Fine accrued" page, whose
  "Charge to the next bill" charges the days not yet charged, once.
* The noncompliance list, with "Act on noncompliance" per premises (a termination case on violation
  grounds, or Old Westbury's health hazard logged as an emergency interruption), and the reports page:
  tests due this month and overdue, devices by hazard, the annual summary as CSV and PDF.

Who may press what: adding a record needs the model's add permission; accepting or rejecting a test,
shortening a window and recording compliance need the change permission of the test or the notice;
charging a fine needs ``backflow.charge_compliancenotice``; acting on noncompliance also needs the
termination permission of what it opens (``termination.add_terminationcase``, or
``termination.add_interruption`` where the preset logs a health hazard).
"""

from calendar import monthrange
from datetime import date
from decimal import Decimal
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Case, IntegerField, Value, When
from django.http import FileResponse, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from accounts.models import Account
from accounts.selectors import account_get
from core.admin import DATE_WIDGET, LINE_WIDGET, TEXT_WIDGET, DayField, ReadOnlyInline, ServiceForm, StatusChangeInline
from core.clock import refuse_future, today
from core.dates import fmt_day, iso_date
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars
from meters.units import size_inches

from . import reports
from .documents import METHOD_WORDS, notice_pdf_store
from .models import Assessment, ComplianceNotice, Device, DeviceTest, NoticeCharge, Tester
from .policy import BackflowPolicy, backflow_policy
from .rules import device_rule
from .services import compliance as svc

FORM_TEMPLATE = "admin/backflow/form.html"


def _policy() -> BackflowPolicy | None:
    try:
        return backflow_policy()
    except ApplicationError:
        return None


def _no_policy(request) -> HttpResponseRedirect:
    messages.error(request, "No preset with backflow rules is installed (manage.py setup_utility PRESET).")
    return HttpResponseRedirect(reverse("admin:index"))


def _parse_day(value) -> date | None:
    try:
        return iso_date(str(value)) if value else None
    except ValueError:
        return None


def _url(name: str, *args, **query) -> str:
    url = reverse(f"admin:{name}", args=args)
    return f"{url}?{urlencode(query)}" if query else url


def _kind_words(kind: str) -> str:
    return ComplianceNotice.Kind(kind).label if kind in ComplianceNotice.Kind.values else kind


def _rule_words(kind: str, policy: BackflowPolicy) -> str:
    rule = policy.notices[kind]
    window = (f"{rule.days} days from the {'date of the notice' if rule.counted_from == 'served' else 'receipt'}"
              if rule.days else "effective on service")
    return (f"{_kind_words(kind)}: {window}, by " + " or ".join(METHOD_WORDS[m] for m in rule.methods)
            + f" ({rule.citation})")


def _account_link(account: Account) -> str:
    return format_html('<a href="{}">{}</a> · {} · {}', reverse("admin:accounts_account_change", args=[account.pk]),
                       account.account_no, account.owner.name, account.premises.service_address)


# --- forms: each calls one service ----------------------------------------------------------------------


class InchesField(forms.CharField):
    """A size in inches as a clerk writes it: 2, 1.5 or 1 1/2."""

    def to_python(self, value):
        text = (super().to_python(value) or "").replace('"', "").strip()
        if not text:
            return None
        try:
            inches = size_inches(text)
        except (ValueError, ZeroDivisionError):
            raise forms.ValidationError(f"'{value}' is not a size in inches (2, 1.5 or 1 1/2)") from None
        if inches <= 0:
            raise forms.ValidationError(f"'{value}' is not a size in inches: it must be more than 0")
        return Decimal(inches.numerator) / Decimal(inches.denominator)


class AssessForm(ServiceForm):
    submit = "Assess premises"
    aliases = {"condition": "conditions", "date": "assessed_on"}
    account_no = forms.CharField(label="Account number", max_length=20)
    conditions = forms.MultipleChoiceField(label="Conditions found", required=False,
                                           widget=forms.CheckboxSelectMultiple)
    note = forms.CharField(label="Note", required=False, widget=TEXT_WIDGET,
                           help_text="The inspector's determination, where the rule needs one.")
    reason = forms.CharField(label="Reason", required=False, widget=TEXT_WIDGET,
                             help_text="Why an air gap cannot reasonably be met, where a device is allowed only "
                                       "with a recorded reason.")
    assessed_on = DayField(label="Assessed on")

    def __init__(self, *args, policy: BackflowPolicy, **kwargs):
        super().__init__(*args, **kwargs)
        rule = device_rule(policy.preset)
        self.fields["conditions"].choices = [(c.code, f"{c.code}: {c.label} ({c.citation})")
                                             for c in rule.conditions()]
        self.fields["conditions"].help_text = (f"The conditions of the preset's device rule ({rule.citation}); "
                                               "none checked: no condition requires a device.")
        self.fields["assessed_on"].initial = today()
        self.assessment: Assessment | None = None

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        account = account_get(account_no=d["account_no"].strip())
        self.assessment = a = svc.assessment_record(account=account, codes=d["conditions"], as_of=d["assessed_on"],
                                                    actor=actor, note=d["note"], reason=d["reason"])
        return (f"Account {account.account_no}: "
                + (f"a device is required: {', '.join(a.allowed)}" if a.required else "no device is required")
                + f" ({a.citation}).")


class RegisterDeviceForm(ServiceForm):
    submit = "Register device"
    account_no = forms.CharField(label="Account number", max_length=20)
    type = forms.ChoiceField(label="Type", choices=Device.Type.choices)
    serial = forms.CharField(label="Serial", max_length=60, widget=LINE_WIDGET)
    size = forms.CharField(label="Size (inches)", max_length=10, help_text="e.g. 3/4, 1, 1 1/2, 2.")
    installed_on = DayField(label="Installed on")
    make = forms.CharField(label="Make", max_length=80, required=False)
    model = forms.CharField(label="Model", max_length=80, required=False)
    location = forms.CharField(label="Location", max_length=200, required=False, widget=LINE_WIDGET)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.device: Device | None = None

    def clean_size(self):
        size = " ".join(self.cleaned_data["size"].replace('"', "").split())
        InchesField().clean(size)
        return size

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        account = account_get(account_no=d["account_no"].strip())
        self.device = device = svc.device_register(
            account=account, type=d["type"], serial=d["serial"], size=d["size"], installed_on=d["installed_on"],
            actor=actor, make=d["make"], model=d["model"], location=d["location"])
        return (f"Device {device.type} {device.serial} registered at account {account.account_no}"
                + (f"; flagged: {device.flag_reason}." if device.flagged else "."))


class TesterChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, tester: Tester) -> str:
        lapsed = tester.certification_expires < today()
        return (f"{tester.name} ({tester.certification_no}), certification "
                + (f"LAPSED {tester.certification_expires}" if lapsed else f"until {tester.certification_expires}"))


class RecordTestForm(ServiceForm):
    submit = "Record test"
    aliases = {"check_valve_1_psid": "check_valve_1", "check_valve_2_psid": "check_valve_2",
               "relief_valve_opening_psid": "relief_valve"}
    serial = forms.CharField(label="Device serial", max_length=60)
    tester = TesterChoiceField(label="Tester", queryset=Tester.objects.order_by("name"))
    tested_on = DayField(label="Tested on")
    result = forms.ChoiceField(label="Result", choices=DeviceTest.Result.choices)
    check_valve_1 = forms.CharField(label="Check valve 1 (psid)", required=False, max_length=10)
    check_valve_2 = forms.CharField(label="Check valve 2 (psid)", required=False, max_length=10)
    relief_valve = forms.CharField(label="Relief valve opened at (psid)", required=False, max_length=10)
    repairs = forms.CharField(label="Repairs", required=False, widget=TEXT_WIDGET)
    by_department = forms.BooleanField(
        label="Performed by the Department's agents", required=False,
        help_text="Tick when the Water Department's own agents performed the test (Old Westbury: the test its $250 "
                  "fee is for), not a tester the owner hired.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.test: DeviceTest | None = None

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        device = svc.device_get(d["serial"])
        self.test = test = svc.test_record(
            device=device, tester=d["tester"], tested_on=d["tested_on"], result=d["result"], actor=actor,
            as_of=today(), check_valve_1=d["check_valve_1"], check_valve_2=d["check_valve_2"],
            relief_valve=d["relief_valve"], repairs=d["repairs"], by_department=d["by_department"])
        due = svc.device_due(device, as_of=today())
        return (f"Test of {device.serial} on {fmt_day(test.tested_on)} recorded: {test.get_result_display().lower()}; "
                f"next test due {fmt_day(due.due_on)} ({due.citation}).")


class ServeNoticeForm(ServiceForm):
    submit = "Serve notice"
    aliases = {"serial": "device"}
    account_no = forms.CharField(label="Account number", max_length=20)
    kind = forms.ChoiceField(label="Kind")
    method = forms.ChoiceField(label="How served", required=False,
                               choices=[("", "the first way the notice is served")]
                               + list(ComplianceNotice.Method.choices))
    served_on = DayField(label="Served on")
    received_on = DayField(label="Received on", required=False,
                           help_text="Personal delivery is received the day it is served; for mail, the day on "
                                     "the return receipt.")
    article_number = forms.CharField(label="Article number", max_length=40, required=False,
                                     help_text="The certified or registered mail article number.")
    largest_pipe = InchesField(label="Largest pipe (inches)", required=False,
                               widget=forms.TextInput(attrs={"size": 8, "maxlength": 10}),
                               help_text="The largest pipe supplying the premises, where the fine is counted by it.")
    per_day = forms.DecimalField(label="Fine per day ($)", required=False, max_digits=8, decimal_places=2,
                                 help_text="A daily fine imposed with the notice, where the preset has one.")
    device = forms.CharField(label="Device serial", max_length=60, required=False)

    def __init__(self, *args, policy: BackflowPolicy, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [(kind, _kind_words(kind)) for kind in policy.notices]
        self.fields["kind"].help_text = format_html_join(
            mark_safe("<br>"), "{}", ((_rule_words(kind, policy),) for kind in policy.notices))
        self.fields["served_on"].initial = today()
        if policy.fine is None:
            del self.fields["per_day"], self.fields["largest_pipe"]
        elif policy.fine.scheme == "per_day_pipe":
            del self.fields["per_day"]
            self.fields["largest_pipe"].help_text += f" ({policy.fine.citation})"
        else:
            del self.fields["largest_pipe"]
            self.fields["per_day"].help_text = (f"At most {fmt_dollars(policy.fine.per_day)} a day "
                                                f"({policy.fine.citation}).")
        self.notice: ComplianceNotice | None = None

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        account = account_get(account_no=d["account_no"].strip())
        device = svc.device_get(d["device"]) if d["device"].strip() else None
        self.notice = notice = svc.notice_serve(
            account=account, kind=d["kind"], served_on=d["served_on"], actor=actor, method=d["method"],
            as_of=today(), received_on=d["received_on"], article_number=d["article_number"], device=device,
            largest_pipe=d.get("largest_pipe"), per_day=d.get("per_day"))
        return (f"{notice.get_kind_display()} notice served on account {account.account_no} on "
                f"{fmt_day(notice.served_on)}" + (f"; act by {fmt_day(notice.deadline)}" if notice.deadline else "")
                + f" ({notice.citation}).")


class NoticeStepForm(ServiceForm):
    whole_fields = ("", "kind")

    def __init__(self, *args, notice: ComplianceNotice, **kwargs):
        self.notice = notice
        super().__init__(*args, **kwargs)


class ShortenForm(NoticeStepForm):
    submit = "Shorten window"
    to = forms.DateField(label="Shortened to", widget=DATE_WIDGET)
    by = forms.CharField(label="Shortened by", required=False, max_length=200, widget=LINE_WIDGET,
                         help_text="The Board of Trustees or the Superintendent.")
    reason = forms.CharField(label="Exigent circumstances", required=False, widget=TEXT_WIDGET,
                             help_text="What threatens health, safety or welfare.")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        notice = svc.notice_shorten(notice=self.notice, to=d["to"], by=d["by"], reason=d["reason"])
        return f"Window shortened: act by {fmt_day(notice.deadline)} ({notice.shortened_by})."


class HearingRequestForm(NoticeStepForm):
    submit = "Record the request"
    received_on = DayField(label="Written request received on")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["received_on"].initial = today()

    def perform(self, *, actor) -> str:
        notice = svc.notice_hearing_request(notice=self.notice, received_on=self.cleaned_data["received_on"],
                                            actor=actor, as_of=today())
        late = notice.deadline is not None and notice.hearing_requested_on > notice.deadline
        return (f"Written request for a hearing received {fmt_day(notice.hearing_requested_on)}"
                + (f", after the window closed on {fmt_day(notice.deadline)}." if late
                   else ": no test fee follows while the hearing is pending."))


class CureForm(NoticeStepForm):
    submit = "Record compliance"
    cured_on = DayField(label="Complied (or paid) on")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["cured_on"].initial = today()

    def perform(self, *, actor) -> str:
        notice = svc.notice_cure(notice=self.notice, cured_on=self.cleaned_data["cured_on"], actor=actor)
        return (f"Complied with on {fmt_day(notice.cured_on)}: no fine runs after it, and nothing more is charged "
                "for this notice.")


class TestStepForm(ServiceForm):
    whole_fields = ("", "status")

    def __init__(self, *args, test: DeviceTest, **kwargs):
        self.test = test
        super().__init__(*args, **kwargs)


class AcceptTestForm(TestStepForm):
    submit = "Accept test"

    def perform(self, *, actor) -> str:
        test = svc.test_review(test=self.test, accept=True, actor=actor, as_of=today())
        due = svc.device_due(test.device, as_of=today())
        return (f"Test of {test.device.serial} on {fmt_day(test.tested_on)} accepted: next test due "
                f"{fmt_day(due.due_on)} ({due.citation}).")


class RejectTestForm(TestStepForm):
    submit = "Reject test"
    note = forms.CharField(label="Why", required=False, widget=TEXT_WIDGET,
                           help_text="Told to the tester; a rejected test does not count toward the next test due.")

    def perform(self, *, actor) -> str:
        test = svc.test_review(test=self.test, accept=False, actor=actor, as_of=today(),
                               note=self.cleaned_data["note"])
        return f"Test of {test.device.serial} on {fmt_day(test.tested_on)} rejected: {test.review_note}"


class TesterForm(ServiceForm):
    submit = "Save"
    aliases = {"user": "login"}
    certification_no = forms.CharField(label="NYS certification number", max_length=40)
    name = forms.CharField(label="Name", max_length=200)
    company = forms.CharField(label="Company", max_length=200, required=False)
    certification_expires = forms.DateField(label="Certification expires", widget=DATE_WIDGET)
    gauge_calibrated_on = DayField(label="Gauge calibrated on", required=False)
    email = forms.EmailField(label="Email", required=False)
    phone = forms.CharField(label="Phone", max_length=40, required=False)
    login = forms.CharField(label="Login", max_length=150, required=False,
                            help_text="The username the tester signs in with to submit tests online; empty for "
                                      "none.")

    def __init__(self, *args, tester: Tester | None = None, **kwargs):
        self.tester = tester
        if tester is not None:
            kwargs.setdefault("initial", {
                "certification_no": tester.certification_no, "name": tester.name, "company": tester.company,
                "certification_expires": tester.certification_expires,
                "gauge_calibrated_on": tester.gauge_calibrated_on, "email": tester.email, "phone": tester.phone,
                "login": tester.user.get_username() if tester.user_id else ""})
        super().__init__(*args, **kwargs)

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        user = None
        if d["login"].strip():
            user = get_user_model().objects.filter(username=d["login"].strip()).first()
            if user is None:
                raise ApplicationError(f"no login '{d['login'].strip()}'", field="user")
        self.tester = svc.tester_save(
            tester=self.tester, certification_no=d["certification_no"], name=d["name"],
            certification_expires=d["certification_expires"], gauge_calibrated_on=d["gauge_calibrated_on"],
            company=d["company"], email=d["email"], phone=d["phone"], user=user)
        return f"Tester {self.tester} saved: certified until {fmt_day(self.tester.certification_expires)}."


class FineForm(ServiceForm):
    """The account and day of the fine; posted, it charges the days not yet charged."""

    submit = "Charge to the next bill"
    aliases = {"date": "as_of"}
    account_no = forms.CharField(label="Account number", max_length=20)
    as_of = DayField(label="As of", doing="charged")
    amount = forms.DecimalField(label="Fine to charge", required=False, max_digits=12, decimal_places=2,
                                help_text="Where the section sets only a maximum (Lansing § 141-11 B), the fine the "
                                          "clerk imposes, up to the maximum proposed.")

    def perform(self, *, actor) -> str:
        account = account_get(account_no=self.cleaned_data["account_no"].strip())
        posted = svc.fine_post(account=account, as_of=self.cleaned_data["as_of"], actor=actor,
                               amount=self.cleaned_data.get("amount"))
        if not posted:
            return (f"Nothing more to charge to account {account.account_no}: every day of fine through "
                    f"{fmt_day(self.cleaned_data['as_of'])} is already charged.")
        return (f"Charged to account {account.account_no}'s next bill: "
                + "; ".join(f"{fmt_dollars(c.charge.amount.amount)} ({c.computation})" for c in posted) + ".")


# --- shared page parts ------------------------------------------------------------------------------------


def _header_links(request) -> list[tuple[str, str]]:
    user, links = request.user, []
    if user.has_perm("backflow.view_device"):
        links.append(("Backflow reports", reverse("admin:backflow_device_reports")))
    if user.has_perm("backflow.view_compliancenotice"):
        links.append(("Noncompliance", reverse("admin:backflow_compliancenotice_noncompliance")))
        policy = _policy()
        if policy is not None and policy.fine is not None:
            links.append(("Fine accrued", reverse("admin:backflow_compliancenotice_fine")))
    return links


class BackflowAdmin(admin.ModelAdmin):
    """A backflow list with the backflow pages in its header, an add button that says what it does, and
    read-only pages whose buttons (``page_buttons``) lead to their forms."""

    add_label = "Add"

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        return super().changelist_view(request, {**(extra_context or {}), "add_label": self.add_label,
                                                 "header_links": _header_links(request)})

    def page_buttons(self, request, obj) -> list[tuple[str, str]]:
        return []

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, object_id) if str(object_id).isdigit() else None
        buttons = self.page_buttons(request, obj) if obj is not None and self.has_view_permission(request, obj) else []
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "page_buttons": buttons})

    def _context(self, request, **extra) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}

    def _form_page(self, request, form, *, title: str, intro: str = "", obj=None, facts=(), back: str = ""):
        return TemplateResponse(request, FORM_TEMPLATE, self._context(
            request, form=form, title=title, intro=intro, obj=obj, facts=facts, back=back,
            obj_url=reverse(f"admin:backflow_{self.model._meta.model_name}_change", args=[obj.pk]) if obj else ""))

    def _need(self, request, perm: str) -> None:
        if not request.user.has_perm(perm):
            raise PermissionDenied


# --- assessments -----------------------------------------------------------------------------------------


@admin.register(Assessment)
class AssessmentAdmin(BackflowAdmin):
    add_label = "Assess premises"
    list_display = ("account_no", "assessed_on", "answer", "citation", "conditions_shown", "assessed_by")
    list_filter = ("required",)
    search_fields = ("account__account_no", "account__owner__name", "account__premises__service_address")
    list_select_related = ("account", "assessed_by")
    date_hierarchy = "assessed_on"
    fields = readonly_fields = ("account_link", "assessed_on", "assessed_by", "answer", "citation", "trace_shown",
                                "conditions_shown", "note", "reason", "devices_shown")

    @admin.display(description="account", ordering="account__account_no")
    def account_no(self, obj):
        return obj.account.account_no

    @admin.display(description="account")
    def account_link(self, obj):
        return _account_link(obj.account)

    @admin.display(description="answer")
    def answer(self, obj):
        return f"Required: {', '.join(obj.allowed)}" if obj.required else "No device required"

    @admin.display(description="why")
    def trace_shown(self, obj):
        return format_html_join("", "<div>{}</div>", ((line,) for line in obj.trace)) or "—"

    @admin.display(description="conditions found")
    def conditions_shown(self, obj):
        policy = _policy()
        labels = {c.code: c.label for c in device_rule(policy.preset).conditions()} if policy else {}
        return format_html_join("", "<div>{}{}</div>", ((code, f": {labels[code]}" if code in labels else "")
                                                         for code in obj.conditions)) or "none"

    @admin.display(description="devices at the account")
    def devices_shown(self, obj):
        devices = obj.account.backflow_devices.exclude(status=Device.Status.REMOVED)
        return format_html_join("", '<div><a href="{}">{} {}</a>{}</div>', (
            (reverse("admin:backflow_device_change", args=[d.pk]), d.type, d.serial,
             f" — flagged: {d.flag_reason}" if d.flagged else "") for d in devices)) or "none"

    def has_add_permission(self, request):
        return request.user.has_perm("backflow.add_assessment")

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        policy = _policy()
        if policy is None:
            return _no_policy(request)
        form = AssessForm(request.POST or None, policy=policy,
                          initial={"account_no": request.GET.get("account_no", "")})
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:backflow_assessment_change", args=[form.assessment.pk]))
        return self._form_page(request, form, title="Assess premises", intro=(
            "Record the conditions found at the account's premises. The answer — whether a device is required, "
            "the types allowed, the citation and why — is recorded with them, and the account's devices are "
            "flagged again against it."))


# --- devices ---------------------------------------------------------------------------------------------


class DueFilter(admin.SimpleListFilter):
    title = "test"
    parameter_name = "test"

    def lookups(self, request, model_admin):
        return [("overdue", "Overdue"), ("due", "Due within 30 days"), ("current", "Current")]

    def queryset(self, request, queryset):
        if self.value() is None:
            return queryset
        as_of = today()
        due = svc.devices_due(as_of=as_of, within_days=30)
        overdue = {d.device.pk for d in due if d.overdue}
        soon = {d.device.pk for d in due if not d.overdue}
        if self.value() == "overdue":
            return queryset.filter(pk__in=overdue)
        if self.value() == "due":
            return queryset.filter(pk__in=soon)
        return queryset.filter(status=Device.Status.ACTIVE).exclude(pk__in=overdue | soon)


class DeviceChangeList(ChangeList):
    """Works out each listed device's next test once per page."""

    def get_results(self, request):
        super().get_results(request)
        if _policy() is None:
            return
        as_of = today()
        for device in self.result_list:
            device.due = svc.device_due(device, as_of=as_of)


class DeviceTestInline(ReadOnlyInline):
    model = DeviceTest
    fields = readonly_fields = ("tested_on", "tester", "result", "check_valve_1_psid", "check_valve_2_psid",
                                "relief_valve_opening_psid", "status", "page")
    verbose_name_plural = "tests"

    @admin.display(description="")
    def page(self, obj):
        return format_html('<a href="{}">Open</a>', reverse("admin:backflow_devicetest_change", args=[obj.pk]))


class DeviceNoticeInline(ReadOnlyInline):
    model = ComplianceNotice
    fields = readonly_fields = ("kind", "served_on", "method", "deadline", "cured_on", "page")
    verbose_name_plural = "notices"

    @admin.display(description="")
    def page(self, obj):
        return format_html('<a href="{}">Open</a>', reverse("admin:backflow_compliancenotice_change", args=[obj.pk]))


@admin.register(Device)
class DeviceAdmin(BackflowAdmin):
    add_label = "Register device"
    list_display = ("serial", "type_code", "size", "account_no", "service_address", "status", "flag_shown",
                    "next_due", "overdue")
    list_filter = ("type", "status", "flagged", DueFilter)
    search_fields = ("serial", "account__account_no", "account__owner__name", "account__premises__service_address")
    list_select_related = ("account", "account__premises", "account__owner")
    fieldsets = (
        (None, {"fields": ("serial", "type", "size", "make", "model", "location", "installed_on", "removed_on",
                           "status")}),
        ("Premises", {"fields": ("account_link", "assessment_shown", "type_allowed")}),
        ("Test schedule", {"fields": ("next_due_detail", "last_test")}),
    )
    inlines = (DeviceTestInline, DeviceNoticeInline)

    def get_readonly_fields(self, request, obj=None):
        return [name for _, options in self.fieldsets for name in options["fields"]]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("tests")

    def get_changelist(self, request, **kwargs):
        return DeviceChangeList

    def has_add_permission(self, request):
        return request.user.has_perm("backflow.add_device")

    # -- columns

    @admin.display(description="account", ordering="account__account_no")
    def account_no(self, obj):
        return obj.account.account_no

    @admin.display(description="service address", ordering="account__premises__service_address")
    def service_address(self, obj):
        return obj.account.premises.service_address

    @admin.display(description="type allowed by the premises' rule")
    def type_allowed(self, obj):
        # In words, true to the label: never a bare ✖ beside "type not allowed" on an allowed device.
        if obj.flagged:
            return format_html('<span class="flagged">No: {}</span>', obj.flag_reason)
        return "Yes"

    @admin.display(description="flagged")
    def flag_shown(self, obj):
        return format_html('<span class="flagged">{}</span>', obj.flag_reason) if obj.flagged else "—"

    @admin.display(description="next test due")
    def next_due(self, obj):
        due = getattr(obj, "due", None)
        return fmt_day(due.due_on) if due and obj.status == Device.Status.ACTIVE else "—"

    @admin.display(description="overdue")
    def overdue(self, obj):
        due = getattr(obj, "due", None)
        if due and due.overdue and obj.status == Device.Status.ACTIVE:
            return mark_safe('<span class="overdue">overdue</span>')
        return "—"

    @admin.display(description="type", ordering="type")
    def type_code(self, obj):
        return format_html('<abbr title="{}">{}</abbr>', obj.get_type_display(), obj.type)

    @admin.display(description="account")
    def account_link(self, obj):
        return _account_link(obj.account)

    @admin.display(description="the premises' assessment")
    def assessment_shown(self, obj):
        assessment = svc.current_assessment(obj.account)
        if assessment is None:
            return format_html('none: <a href="{}">assess the premises</a>',
                               _url("backflow_assessment_add", account_no=obj.account.account_no))
        answer = (f"required: {', '.join(assessment.allowed)}" if assessment.required else "no device required")
        return format_html('<a href="{}">{}</a>: {} ({}) · <a href="{}">all assessments of the account</a>',
                           reverse("admin:backflow_assessment_change", args=[assessment.pk]),
                           fmt_day(assessment.assessed_on), answer, assessment.citation,
                           _url("backflow_assessment_changelist", account__id__exact=obj.account_id))

    @admin.display(description="next test due")
    def next_due_detail(self, obj):
        if _policy() is None or obj.status != Device.Status.ACTIVE:
            return "—"
        due = svc.device_due(obj, as_of=today())
        return format_html('<span class="{}">{}{}</span> ({})', "overdue" if due.overdue else "",
                           fmt_day(due.due_on), " (overdue)" if due.overdue else "", due.citation)

    @admin.display(description="last accepted test")
    def last_test(self, obj):
        if _policy() is None:
            return "—"
        test = svc.device_due(obj, as_of=today()).last_test
        if test is None:
            return "none"
        return format_html('<a href="{}">{}</a>: {} by {}', reverse("admin:backflow_devicetest_change", args=[test.pk]),
                           fmt_day(test.tested_on), test.get_result_display().lower(), test.tester)

    # -- the pages

    def page_buttons(self, request, obj):
        buttons = []
        if request.user.has_perm("backflow.add_devicetest"):
            buttons.append(("Record test", _url("backflow_devicetest_add", serial=obj.serial)))
        if request.user.has_perm("backflow.add_compliancenotice"):
            buttons.append(("Serve notice", _url("backflow_compliancenotice_add", account_no=obj.account.account_no,
                                                 device=obj.serial)))
        return buttons

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("reports/", view(self.reports_view), name="backflow_device_reports"),
            path("reports/summary/", view(self.summary_view), name="backflow_device_summary"),
        ] + super().get_urls()

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        if _policy() is None:
            return _no_policy(request)
        form = RegisterDeviceForm(request.POST or None, initial={"account_no": request.GET.get("account_no", ""),
                                                                  "installed_on": today()})
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.WARNING if form.device.flagged else messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:backflow_device_change", args=[form.device.pk]))
        return self._form_page(request, form, title="Register device", intro=(
            "A device of a type the premises' assessment does not allow is registered and flagged, not refused: "
            "it is there whether or not it should be."))

    def reports_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        if _policy() is None:
            return _no_policy(request)
        as_of = min(_parse_day(request.GET.get("as_of")) or today(), today())
        month_end = date(as_of.year, as_of.month, monthrange(as_of.year, as_of.month)[1])
        due = svc.devices_due(as_of=as_of, within_days=(month_end - as_of).days)
        by_hazard = sorted(reports.devices_by_hazard(as_of=as_of).items())
        return TemplateResponse(request, "admin/backflow/reports.html", self._context(
            request, title="Backflow reports", as_of=as_of, month_end=month_end,
            overdue=[d for d in due if d.overdue], due_this_month=[d for d in due if not d.overdue],
            by_hazard=by_hazard, year=as_of.year, years=list(range(as_of.year, as_of.year - 6, -1))))

    def summary_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        if _policy() is None:
            return _no_policy(request)
        back = reverse("admin:backflow_device_reports")
        year, kind = request.GET.get("year", ""), request.GET.get("format", "csv")
        if not year.isdigit() or not 1900 <= int(year) <= today().year or kind not in ("csv", "pdf"):
            self.message_user(request, f"year: '{year}' is not a year up to {today().year} (and the format is csv "
                                       "or pdf)", messages.ERROR)
            return HttpResponseRedirect(back)
        name = f"backflow-summary-{year}.{kind}"
        if kind == "pdf":
            response = HttpResponse(reports.annual_summary_pdf(year=int(year), as_of=today()),
                                    content_type="application/pdf")
        else:
            response = HttpResponse(reports.annual_summary_csv(year=int(year), as_of=today()),
                                    content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


# --- testers ---------------------------------------------------------------------------------------------


class CertificationFilter(admin.SimpleListFilter):
    title = "certification"
    parameter_name = "certification"

    def lookups(self, request, model_admin):
        return [("current", "Current"), ("lapsed", "Lapsed")]

    def queryset(self, request, queryset):
        if self.value() == "current":
            return queryset.filter(certification_expires__gte=today())
        if self.value() == "lapsed":
            return queryset.filter(certification_expires__lt=today())
        return queryset


@admin.register(Tester)
class TesterAdmin(BackflowAdmin):
    add_label = "Add tester"
    list_display = ("name", "certification_no", "company", "certification", "gauge_calibrated_on", "email", "user")
    list_filter = (CertificationFilter,)
    search_fields = ("name", "certification_no", "company", "email")
    list_select_related = ("user",)
    fields = readonly_fields = ("name", "certification_no", "company", "certification", "gauge_calibrated_on",
                                "email", "phone", "user")

    @admin.display(description="certification expires", ordering="certification_expires")
    def certification(self, obj):
        if obj.certification_expires < today():
            return format_html('<span class="lapsed">lapsed {}</span>', fmt_day(obj.certification_expires))
        return fmt_day(obj.certification_expires)

    def has_add_permission(self, request):
        return request.user.has_perm("backflow.add_tester")

    def may_change(self, request) -> bool:
        return request.user.has_perm("backflow.change_tester")

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        return self._tester_form(request, None)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        if not self.may_change(request) or not str(object_id).isdigit():
            return super().change_view(request, object_id, form_url, extra_context)
        return self._tester_form(request, get_object_or_404(Tester.objects.select_related("user"), pk=object_id))

    def _tester_form(self, request, tester: Tester | None):
        form = TesterForm(request.POST or None, tester=tester)
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:backflow_tester_changelist"))
        lapsed = tester is not None and tester.certification_expires < today()
        return self._form_page(
            request, form, title=f"Change tester {tester}" if tester else "Add tester",
            intro=("The certification lapsed on " + fmt_day(tester.certification_expires) + ": a test on a later "
                   "day by this tester is refused until the renewal is recorded.") if lapsed else
            "A test counts only by a tester whose NYS certification has not lapsed on the test day.")


# --- tests -----------------------------------------------------------------------------------------------


@admin.register(DeviceTest)
class DeviceTestAdmin(BackflowAdmin):
    add_label = "Record test"
    list_display = ("tested_on", "device_serial", "account_no", "result", "readings", "tester", "status",
                    "submitted_online")
    list_filter = ("status", "result", "submitted_online")
    search_fields = ("device__serial", "device__account__account_no", "tester__name", "tester__certification_no")
    list_select_related = ("device", "device__account", "tester")
    date_hierarchy = "tested_on"
    fieldsets = (
        (None, {"fields": ("device_link", "account_link", "tester", "tested_on", "result", "check_valve_1_psid",
                           "check_valve_2_psid", "relief_valve_opening_psid", "repairs")}),
        ("Review", {"fields": ("status", "submitted_online", "submitted_at", "reviewed_by", "reviewed_on",
                               "review_note", "device_next_due")}),
    )

    def get_readonly_fields(self, request, obj=None):
        return [name for _, options in self.fieldsets for name in options["fields"]]

    def get_ordering(self, request):
        # Tests submitted online wait for the clerk: they come first.
        waiting = Case(When(status=DeviceTest.Status.SUBMITTED, then=Value(0)), default=Value(1),
                       output_field=IntegerField())
        return [waiting.asc(), "-tested_on", "-id"]

    def has_add_permission(self, request):
        return request.user.has_perm("backflow.add_devicetest")

    @admin.display(description="device", ordering="device__serial")
    def device_serial(self, obj):
        return f"{obj.device.type} {obj.device.serial}"

    @admin.display(description="account", ordering="device__account__account_no")
    def account_no(self, obj):
        return obj.device.account.account_no

    @admin.display(description="readings (psid)")
    def readings(self, obj):
        parts = [(label, value) for label, value in (("CV1", obj.check_valve_1_psid), ("CV2", obj.check_valve_2_psid),
                                                     ("RV", obj.relief_valve_opening_psid)) if value is not None]
        return " · ".join(f"{label} {value}" for label, value in parts) or "—"

    @admin.display(description="device")
    def device_link(self, obj):
        return format_html('<a href="{}">{} {}</a>, {}"', reverse("admin:backflow_device_change", args=[obj.device_id]),
                           obj.device.type, obj.device.serial, obj.device.size)

    @admin.display(description="account")
    def account_link(self, obj):
        return _account_link(obj.device.account)

    @admin.display(description="the device's next test due")
    def device_next_due(self, obj):
        if _policy() is None:
            return "—"
        due = svc.device_due(obj.device, as_of=today())
        return format_html('<span class="{}">{}{}</span> ({})', "overdue" if due.overdue else "", fmt_day(due.due_on),
                           " (overdue)" if due.overdue else "", due.citation)

    def may_review(self, request, test: DeviceTest) -> bool:
        return test.status == DeviceTest.Status.SUBMITTED and request.user.has_perm("backflow.change_devicetest")

    def change_view(self, request, object_id, form_url="", extra_context=None):
        test = DeviceTest.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        review = test is not None and self.may_review(request, test)
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "review_test": review})

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("<int:pk>/accept/", view(self.review_view), {"accept": True}, name="backflow_devicetest_accept"),
            path("<int:pk>/reject/", view(self.review_view), {"accept": False}, name="backflow_devicetest_reject"),
        ] + super().get_urls()

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        if _policy() is None:
            return _no_policy(request)
        form = RecordTestForm(request.POST or None, initial={"serial": request.GET.get("serial", ""),
                                                              "tested_on": today()})
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:backflow_device_change", args=[form.test.device_id]))
        return self._form_page(request, form, title="Record test", intro=(
            "A test by a tester whose NYS certification had lapsed on the test day is refused. A passing test "
            "moves the device's next test a year on; a failed one is due again at once."))

    def review_view(self, request, pk, accept: bool):
        self._need(request, "backflow.change_devicetest")
        test = get_object_or_404(DeviceTest.objects.select_related("device", "device__account", "tester"), pk=pk)
        page = reverse("admin:backflow_devicetest_change", args=[test.pk])
        if _policy() is None:
            return _no_policy(request)
        if test.status != DeviceTest.Status.SUBMITTED:
            self.message_user(request, f"This test is already {test.get_status_display().lower()}; only a test "
                                       "submitted online is accepted or rejected.", messages.WARNING)
            return HttpResponseRedirect(page)
        form = (AcceptTestForm if accept else RejectTestForm)(request.POST if request.method == "POST" else None,
                                                               test=test)
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.SUCCESS if accept else messages.WARNING)
                return HttpResponseRedirect(page)
        facts = [("Device", f"{test.device.type} {test.device.serial} at account {test.device.account.account_no}"),
                 ("Tested", f"{fmt_day(test.tested_on)} by {test.tester}: {test.get_result_display().lower()}")]
        return self._form_page(request, form, obj=test, facts=facts,
                               title=f"{'Accept' if accept else 'Reject'} test of {test.device.serial}",
                               intro="Only an accepted test counts toward the device's next test due.")


# --- compliance notices, fines and noncompliance --------------------------------------------------------


class NoticeChargeInline(ReadOnlyInline):
    model = NoticeCharge
    fields = readonly_fields = ("first_day", "last_day", "amount", "computation", "billed")
    verbose_name_plural = "charged to the bill"

    @admin.display(description="amount")
    def amount(self, obj):
        return fmt_dollars(obj.charge.amount.amount)

    @admin.display(description="bill")
    def billed(self, obj):
        return obj.charge.bill.number if obj.charge.bill_id else "waiting for the next bill"

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("charge", "charge__bill")


@admin.register(ComplianceNotice)
class ComplianceNoticeAdmin(BackflowAdmin):
    add_label = "Serve notice"
    list_display = ("served_on", "kind", "account_no", "device", "method", "deadline", "status", "cured_on", "citation")
    list_filter = ("kind", "method", ("cured_on", admin.EmptyFieldListFilter))
    search_fields = ("account__account_no", "account__owner__name", "device__serial", "article_number")
    list_select_related = ("account", "device")
    date_hierarchy = "served_on"
    fieldsets = (
        (None, {"fields": ("kind", "citation", "status", "account_link", "device_link", "due_for", "paper")}),
        ("Service", {"fields": ("served_on", "method", "article_number", "received_on", "served_by")}),
        ("Deadline", {"fields": ("deadline", "shortened_to", "shortened_by", "shortened_reason",
                                 "hearing_requested_on", "cured_on")}),
        ("Fine or fee", {"fields": ("largest_pipe_inches", "per_day", "amount", "test", "fine_link")}),
    )
    inlines = (NoticeChargeInline, StatusChangeInline)

    def get_readonly_fields(self, request, obj=None):
        return [name for _, options in self.fieldsets for name in options["fields"]]

    def has_add_permission(self, request):
        return request.user.has_perm("backflow.add_compliancenotice")

    @admin.display(description="account", ordering="account__account_no")
    def account_no(self, obj):
        return obj.account.account_no

    @admin.display(description="account")
    def account_link(self, obj):
        return _account_link(obj.account)

    @admin.display(description="device")
    def device_link(self, obj):
        if not obj.device_id:
            return "—"
        return format_html('<a href="{}">{} {}</a>', reverse("admin:backflow_device_change", args=[obj.device_id]),
                           obj.device.type, obj.device.serial)

    @admin.display(description="PDF")
    def paper(self, obj):
        return format_html('<a href="{}">Notice PDF</a>', reverse("admin:backflow_compliancenotice_pdf",
                                                                  args=[obj.pk]))

    @admin.display(description="fine accrued")
    def fine_link(self, obj):
        policy = _policy()
        if policy is None or policy.fine is None or obj.kind not in policy.fine.on_kinds:
            return "—"
        return format_html('<a href="{}">Fine accrued on the account\'s notices</a> ({})',
                           _url("backflow_compliancenotice_fine", account_no=obj.account.account_no),
                           policy.fine.citation)

    # -- the pages

    def _offered(self, notice: ComplianceNotice, policy: BackflowPolicy | None) -> dict[str, bool]:
        rule = policy.notices.get(notice.kind) if policy else None
        return {"shorten": bool(rule and rule.shortenable and notice.cured_on is None),
                "hearing": bool(rule and rule.shortenable and notice.status == ComplianceNotice.Status.OPEN),
                "cure": notice.cured_on is None}

    def page_buttons(self, request, obj):
        offered, buttons = self._offered(obj, _policy()), []
        if request.user.has_perm("backflow.change_compliancenotice"):
            if offered["shorten"]:
                buttons.append(("Shorten window", reverse("admin:backflow_compliancenotice_shorten", args=[obj.pk])))
            if offered["hearing"]:
                buttons.append(("Hearing requested",
                                reverse("admin:backflow_compliancenotice_hearing", args=[obj.pk])))
            if offered["cure"]:
                buttons.append(("Complied / paid", reverse("admin:backflow_compliancenotice_cure", args=[obj.pk])))
        return buttons

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("<int:pk>/pdf/", view(self.pdf_view), name="backflow_compliancenotice_pdf"),
            path("<int:pk>/shorten/", view(self.step_view), {"step": "shorten"},
                 name="backflow_compliancenotice_shorten"),
            path("<int:pk>/cure/", view(self.step_view), {"step": "cure"}, name="backflow_compliancenotice_cure"),
            path("<int:pk>/hearing/", view(self.step_view), {"step": "hearing"},
                 name="backflow_compliancenotice_hearing"),
            path("fine/", view(self.fine_view), name="backflow_compliancenotice_fine"),
            path("noncompliance/", view(self.noncompliance_view), name="backflow_compliancenotice_noncompliance"),
        ] + super().get_urls()

    def _notice(self, request, pk) -> ComplianceNotice:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return get_object_or_404(ComplianceNotice.objects.select_related("account", "account__owner",
                                                                         "account__premises", "device"), pk=pk)

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        policy = _policy()
        if policy is None:
            return _no_policy(request)
        initial = {name: request.GET.get(name, "") for name in ("account_no", "device", "kind")}
        form = ServeNoticeForm(request.POST or None, policy=policy, initial=initial)
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:backflow_compliancenotice_change", args=[form.notice.pk]))
        return self._form_page(request, form, title="Serve notice", intro=(
            "The deadline follows the preset, counted from the notice or its receipt as the kind says; the notice "
            "PDF is rendered for the file."))

    def step_view(self, request, pk, step: str):
        self._need(request, "backflow.change_compliancenotice")
        notice = self._notice(request, pk)
        policy = _policy()
        if policy is None:
            return _no_policy(request)
        page = reverse("admin:backflow_compliancenotice_change", args=[notice.pk])
        label = {"shorten": "Shorten window", "cure": "Complied / paid", "hearing": "Hearing requested"}[step]
        if not self._offered(notice, policy)[step]:
            self.message_user(request, f"“{label}” is not offered for this notice"
                                       + (f": it was complied with on {fmt_day(notice.cured_on)}." if notice.cured_on
                                          else f" ({notice.citation})."), messages.WARNING)
            return HttpResponseRedirect(page)
        form = {"shorten": ShortenForm, "cure": CureForm, "hearing": HearingRequestForm}[step](request.POST or None,
                                                                                             notice=notice)
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(page)
        facts = [("Notice", f"{notice.get_kind_display()} served {fmt_day(notice.served_on)} ({notice.citation})"),
                 ("Account", f"{notice.account.account_no}, {notice.account.premises.service_address}"),
                 ("Act by", fmt_day(notice.deadline) if notice.deadline else "—")]
        intro = {"shorten": "The Board of Trustees or the Superintendent may shorten the window for exigent "
                            "circumstances; who and why are recorded.",
                 "hearing": "The owner's written request for a hearing before the Board of Zoning Appeals, received "
                            "by the office: within the window, no test by the Department and no test fee follow.",
                 "cure": "The owner complied with the notice (or paid the fee demanded): a fine stops the day before, "
                         "and nothing more is charged for it."}[step]
        return self._form_page(request, form, obj=notice, facts=facts, title=f"{label}: notice {notice.pk}",
                               intro=intro)

    def pdf_view(self, request, pk):
        notice = self._notice(request, pk)
        if not notice.pdf:
            if _policy() is None:
                return _no_policy(request)
            notice_pdf_store(notice_id=notice.pk)
            notice.refresh_from_db()
        return FileResponse(notice.pdf.open("rb"), content_type="application/pdf",
                            filename=f"backflow-{notice.kind}-{notice.pk}.pdf")

    def fine_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        policy = _policy()
        if policy is None:
            return _no_policy(request)
        may_charge = request.user.has_perm("backflow.charge_compliancenotice")
        if request.method == "POST":
            self._need(request, "backflow.charge_compliancenotice")
            form = FineForm(request.POST)
            if form.is_valid():
                message = form.run(actor=request.user)
                if message is not None:
                    self.message_user(request, message, messages.SUCCESS)
                    return HttpResponseRedirect(_url(
                        "backflow_compliancenotice_fine", account_no=form.cleaned_data["account_no"].strip(),
                        as_of=form.cleaned_data["as_of"].isoformat()))
        else:
            form = FineForm(request.GET if "account_no" in request.GET else None, initial={"as_of": today()})
        account, lines, charges, uncharged = None, [], [], []
        if form.is_bound and form.is_valid():
            try:
                account = account_get(account_no=form.cleaned_data["account_no"].strip())
            except ApplicationError as exc:
                form.add_refusals(exc.errors)
            else:
                lines = svc.fine_lines(account=account, as_of=form.cleaned_data["as_of"])
                uncharged = svc.fine_lines(account=account, as_of=form.cleaned_data["as_of"], uncharged_only=True)
                charges = (NoticeCharge.objects.filter(notice__account=account)
                           .select_related("notice", "charge", "charge__bill").order_by("notice_id", "last_day"))
        shown = [{"notice": line.notice, "days": line.days, "per_day": fmt_dollars(line.per_day),
                  "inches": f"{line.inches.normalize():f}" if line.inches is not None else "—",
                  "amount": fmt_dollars(line.amount), "computation": line.computation, "citation": line.citation}
                 for line in lines]
        return TemplateResponse(request, "admin/backflow/fine.html", self._context(
            request, title="Fine accrued", form=form, account=account, lines=shown, policy=policy,
            charges=[(c, fmt_dollars(c.charge.amount.amount)) for c in charges], may_charge=may_charge,
            total=fmt_dollars(sum((line.amount for line in lines), ZERO)),
            uncharged=fmt_dollars(sum((line.amount for line in uncharged), ZERO)) if uncharged else "",
            proposed=f"{sum((line.amount for line in uncharged), ZERO):.2f}",
            as_of=form.cleaned_data["as_of"] if account else None))

    def _act_permissions(self, policy: BackflowPolicy) -> list[str]:
        return ["backflow.change_compliancenotice",
                "termination.add_interruption" if policy.emergency_kind else "termination.add_terminationcase"]

    def noncompliance_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        policy = _policy()
        if policy is None:
            return _no_policy(request)
        may_act = request.user.has_perms(self._act_permissions(policy))
        as_of = _parse_day(request.POST.get("as_of") or request.GET.get("as_of")) or today()
        try:
            refuse_future(as_of, field="as_of", doing="listed")
        except ApplicationError as exc:
            self.message_user(request, exc.errors[0].message, messages.ERROR)
            as_of = today()
        page = _url("backflow_compliancenotice_noncompliance", as_of=as_of.isoformat())
        if request.method == "POST":
            if not may_act:
                raise PermissionDenied
            self._act(request, request.POST.get("account_no", ""), as_of=as_of, policy=policy)
            return HttpResponseRedirect(page)
        rows = svc.noncompliance(as_of=as_of)
        return TemplateResponse(request, "admin/backflow/noncompliance.html", self._context(
            request, title=f"Noncompliance on {fmt_day(as_of)}", as_of=as_of, may_act=may_act, policy=policy,
            rows=[(row, _termination_link(policy, row.account.account_no)) for row in rows]))

    def _act(self, request, account_no: str, *, as_of: date, policy: BackflowPolicy) -> None:
        try:
            found = svc.noncompliance_act(account=account_get(account_no=account_no.strip()), as_of=as_of,
                                          actor=request.user)
        except ApplicationError as exc:
            self.message_user(request, f"{account_no}: nothing done: " + "; ".join(e.message for e in exc.errors),
                              messages.WARNING)
            return
        link = _termination_link(policy, found.account.account_no)
        what = ("the health hazard is logged as an emergency interruption" if policy.emergency_kind
                else "a termination case is opened on violation grounds")
        if link:
            self.message_user(request, format_html('Account {}: {} ({}). <a href="{}">See the {}</a>.',
                                                   found.account.account_no, what, found.section, link,
                                                   "interruption" if policy.emergency_kind else "case"),
                              messages.SUCCESS)
        else:
            self.message_user(request, f"Account {found.account.account_no}: {what} ({found.section}).",
                              messages.SUCCESS)


def _termination_link(policy: BackflowPolicy, account_no: str) -> str:
    """The termination app's list of what noncompliance opened for the account (it is beside this app, so it
    is reached by its address, not imported)."""
    name = "termination_interruption_changelist" if policy.emergency_kind else "termination_terminationcase_changelist"
    try:
        return _url(name, q=account_no)
    except NoReverseMatch:
        return ""
