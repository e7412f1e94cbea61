"""The log of emergency interruptions of service (never a case)."""


from django.contrib import admin
from django.urls import reverse

from ..models import Interruption
from .common import TerminationAdmin
from .forms import InterruptionForm

# --- emergency interruptions ----------------------------------------------------------------------------

@admin.register(Interruption)
class InterruptionAdmin(TerminationAdmin):
    """Service interrupted without the hearing procedure because the ordinance allows it: logged here, never
    as a case or a shut-off order."""

    list_display = ("started_on", "account", "kind", "citation", "ended_on", "reason", "actor")
    list_filter = ("kind",)
    search_fields = ("account__account_no", "reason")
    list_select_related = ("account", "actor")
    date_hierarchy = "started_on"
    fields = readonly_fields = ("account", "kind", "citation", "started_on", "ended_on", "reason", "actor", "at")

    add_label = "Log an emergency interruption"

    def has_add_permission(self, request):
        return request.user.has_perm("termination.add_interruption")

    def add_form(self, request):
        return InterruptionForm(request.POST or None, policy=self.installed_rules())

    def add_title(self) -> str:
        return "Log an emergency interruption"

    def add_intro(self) -> str:
        policy = self.installed_rules()
        return ("An interruption the ordinance allows without the hearing procedure "
                f"({policy.emergency_citation}: {', '.join(k.replace('_', ' ') for k in policy.emergency_kinds)}). "
                "It is logged as its own event, never as a termination case or a shut-off order.")

    def added_url(self, form) -> str:
        return reverse("admin:termination_interruption_changelist")
