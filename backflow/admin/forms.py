"""The small forms of the backflow admin's buttons, each calling one service of ``backflow.services.compliance``."""


from django import forms
from django.contrib.auth import get_user_model
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from accounts.selectors import account_get
from core.admin import DATE_WIDGET, LINE_WIDGET, TEXT_WIDGET, DayField, ServiceForm
from core.clock import today
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import fmt_dollars

from ..models import Assessment, ComplianceNotice, Device, DeviceTest, Tester
from ..policy import BackflowPolicy, device_rule
from ..services import compliance as svc
from ..services import fines
from .common import InchesField, kind_words, rule_words


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
        rule = device_rule()
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
        self.fields["kind"].choices = [(kind, kind_words(kind)) for kind in policy.notices]
        self.fields["kind"].help_text = format_html_join(
            mark_safe("<br>"), "{}", ((rule_words(kind, policy),) for kind in policy.notices))
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
                                help_text="Where the section sets only a maximum (\"shall not exceed\"), the fine the "
                                          "clerk imposes, up to the maximum proposed.")

    def perform(self, *, actor) -> str:
        account = account_get(account_no=self.cleaned_data["account_no"].strip())
        posted = fines.fine_post(account=account, as_of=self.cleaned_data["as_of"], actor=actor,
                               amount=self.cleaned_data.get("amount"))
        if not posted:
            return (f"Nothing more to charge to account {account.account_no}: every day of fine through "
                    f"{fmt_day(self.cleaned_data['as_of'])} is already charged.")
        return (f"Charged to account {account.account_no}'s next bill: "
                + "; ".join(f"{fmt_dollars(c.charge.amount.amount)} ({c.computation})" for c in posted) + ".")
