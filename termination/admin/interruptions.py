"""The log of emergency interruptions of service (never a case)."""


from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from ..models import Interruption
from .common import FORM_TEMPLATE, installed_policy, no_policy_redirect
from .forms import InterruptionForm

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
        policy = installed_policy()
        if policy is None:
            return no_policy_redirect(request)
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
