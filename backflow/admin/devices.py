"""Devices: registering one, its tests and notices, when its next test is due, and the reports page."""

from calendar import monthrange
from datetime import date

from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from core.admin import ReadOnlyInline, parse_day
from core.clock import today
from core.dates import fmt_day

from .. import reports
from ..models import ComplianceNotice, Device, DeviceTest
from ..services import compliance as svc
from .common import BackflowAdmin, admin_url
from .forms import RegisterDeviceForm

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
        if self.model_admin.installed_rules() is None:
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

    @admin.display(description="the premises' assessment")
    def assessment_shown(self, obj):
        assessment = svc.current_assessment(obj.account)
        if assessment is None:
            return format_html('none: <a href="{}">assess the premises</a>',
                               admin_url("backflow_assessment_add", account_no=obj.account.account_no))
        answer = (f"required: {', '.join(assessment.allowed)}" if assessment.required else "no device required")
        return format_html('<a href="{}">{}</a>: {} ({}) · <a href="{}">all assessments of the account</a>',
                           reverse("admin:backflow_assessment_change", args=[assessment.pk]),
                           fmt_day(assessment.assessed_on), answer, assessment.citation,
                           admin_url("backflow_assessment_changelist", account__id__exact=obj.account_id))

    @admin.display(description="next test due")
    def next_due_detail(self, obj):
        if self.installed_rules() is None or obj.status != Device.Status.ACTIVE:
            return "—"
        due = svc.device_due(obj, as_of=today())
        return format_html('<span class="{}">{}{}</span> ({})', "overdue" if due.overdue else "",
                           fmt_day(due.due_on), " (overdue)" if due.overdue else "", due.citation)

    @admin.display(description="last accepted test")
    def last_test(self, obj):
        if self.installed_rules() is None:
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
            buttons.append(("Record test", admin_url("backflow_devicetest_add", serial=obj.serial)))
        if request.user.has_perm("backflow.add_compliancenotice"):
            buttons.append(("Serve notice", admin_url("backflow_compliancenotice_add",
                                                      account_no=obj.account.account_no, device=obj.serial)))
        return buttons

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("reports/", view(self.reports_view), name="backflow_device_reports"),
            path("reports/summary/", view(self.summary_view), name="backflow_device_summary"),
        ] + super().get_urls()

    def add_view(self, request, form_url="", extra_context=None):
        return self.service_add_page(
            request, lambda policy: RegisterDeviceForm(request.POST or None, initial={
                "account_no": request.GET.get("account_no", ""), "installed_on": today()}),
            done_url=lambda form: reverse("admin:backflow_device_change", args=[form.device.pk]),
            level=lambda form: messages.WARNING if form.device.flagged else messages.SUCCESS,
            title="Register device", intro=(
                "A device of a type the premises' assessment does not allow is registered and flagged, not "
                "refused: it is there whether or not it should be."))

    def reports_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        if self.installed_rules() is None:
            return self.no_rules_redirect(request)
        as_of = min(parse_day(request.GET.get("as_of")) or today(), today())
        month_end = date(as_of.year, as_of.month, monthrange(as_of.year, as_of.month)[1])
        due = svc.devices_due(as_of=as_of, within_days=(month_end - as_of).days)
        by_hazard = sorted(reports.devices_by_hazard(as_of=as_of).items())
        return TemplateResponse(request, "admin/backflow/reports.html", self.page_context(
            request, title="Backflow reports", as_of=as_of, month_end=month_end,
            overdue=[d for d in due if d.overdue], due_this_month=[d for d in due if not d.overdue],
            by_hazard=by_hazard, year=as_of.year, years=list(range(as_of.year, as_of.year - 6, -1))))

    def summary_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        if self.installed_rules() is None:
            return self.no_rules_redirect(request)
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
