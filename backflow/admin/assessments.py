"""Assessments of premises: the conditions found and the device the preset's rule then requires."""


from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html_join

from ..models import Assessment, Device
from ..policy import device_rule
from .common import BackflowAdmin
from .forms import AssessForm

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

    @admin.display(description="answer")
    def answer(self, obj):
        return f"Required: {', '.join(obj.allowed)}" if obj.required else "No device required"

    @admin.display(description="why")
    def trace_shown(self, obj):
        return format_html_join("", "<div>{}</div>", ((line,) for line in obj.trace)) or "—"

    @admin.display(description="conditions found")
    def conditions_shown(self, obj):
        policy = self.installed_rules()
        labels = {c.code: c.label for c in device_rule().conditions()} if policy else {}
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
        return self.service_add_page(
            request, lambda policy: AssessForm(request.POST or None, policy=policy,
                                               initial={"account_no": request.GET.get("account_no", "")}),
            done_url=lambda form: reverse("admin:backflow_assessment_change", args=[form.assessment.pk]),
            title="Assess premises", intro=(
                "Record the conditions found at the account's premises. The answer — whether a device is required, "
                "the types allowed, the citation and why — is recorded with them, and the account's devices are "
                "flagged again against it."))
