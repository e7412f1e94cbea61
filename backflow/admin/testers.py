"""Certified testers, and the tests they submit (accepted or rejected by the clerk)."""


from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Case, IntegerField, Value, When
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html

from core.clock import today
from core.dates import fmt_day

from ..models import DeviceTest, Tester
from ..services import compliance as svc
from .common import BackflowAdmin, account_link
from .forms import AcceptTestForm, RecordTestForm, RejectTestForm, TesterForm

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
        lapsed = tester is not None and tester.certification_expires < today()
        return self.run_form(
            request, form, done_url=reverse("admin:backflow_tester_changelist"),
            title=f"Change tester {tester}" if tester else "Add tester",
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
        return account_link(obj.device.account)

    @admin.display(description="the device's next test due")
    def device_next_due(self, obj):
        if self.installed_rules() is None:
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
        return self.service_add_page(
            request, lambda policy: RecordTestForm(request.POST or None, initial={
                "serial": request.GET.get("serial", ""), "tested_on": today()}),
            done_url=lambda form: reverse("admin:backflow_device_change", args=[form.test.device_id]),
            title="Record test", intro=(
                "A test by a tester whose NYS certification had lapsed on the test day is refused. A passing test "
                "moves the device's next test a year on; a failed one is due again at once."))

    def review_view(self, request, pk, accept: bool):
        self.need(request, "backflow.change_devicetest")
        test = get_object_or_404(DeviceTest.objects.select_related("device", "device__account", "tester"), pk=pk)
        page = reverse("admin:backflow_devicetest_change", args=[test.pk])
        if self.installed_rules() is None:
            return self.no_rules_redirect(request)
        if test.status != DeviceTest.Status.SUBMITTED:
            self.message_user(request, f"This test is already {test.get_status_display().lower()}; only a test "
                                       "submitted online is accepted or rejected.", messages.WARNING)
            return HttpResponseRedirect(page)
        form = (AcceptTestForm if accept else RejectTestForm)(request.POST if request.method == "POST" else None,
                                                               test=test)
        facts = [("Device", f"{test.device.type} {test.device.serial} at account {test.device.account.account_no}"),
                 ("Tested", f"{fmt_day(test.tested_on)} by {test.tester}: {test.get_result_display().lower()}")]
        return self.run_form(request, form, done_url=page, level=messages.SUCCESS if accept else messages.WARNING,
                             obj=test, facts=facts,
                               title=f"{'Accept' if accept else 'Reject'} test of {test.device.serial}",
                               intro="Only an accepted test counts toward the device's next test due.")
