"""Rebilling after a late amendment: the requests an install made, approved or refused by a supervisor."""

from django.contrib import admin
from django.utils.html import format_html_join

from core.admin import ApprovalPagesMixin, ReadOnlyAdmin, act_on_each, action_page
from core.commands import today

from ..models import AmendmentRebill
from ..services.amendments import amendment_rebill_decide
from .penalties import DecideForm


@admin.register(AmendmentRebill)
class AmendmentRebillAdmin(ApprovalPagesMixin, ReadOnlyAdmin):
    list_display = ("requested_at", "effective_on", "reason", "bill_count", "status", "requested_by", "decided_by",
                    "decided_at")
    list_filter = ("status",)
    actions = ["approve", "refuse"]
    readonly_fields = ("installed", "effective_on", "reason", "bill_list", "status", "requested_by", "requested_at",
                       "decided_by", "decided_at", "decision_note", "outcome")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("installed", "requested_by", "decided_by")

    @admin.display(description="bills")
    def bill_count(self, obj):
        return obj.bills.count()

    @admin.display(description="bills to void and bill again")
    def bill_list(self, obj):
        return format_html_join(", ", "{} ({}, {})", ((b.number, b.bill_date, b.get_status_display())
                                                      for b in obj.bills.order_by("bill_date", "number"))) or "—"

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("billing.view_amendmentrebill")

    def has_decide_permission(self, request):
        return request.user.has_perm(AmendmentRebill.approval.permission)

    def _decide(self, request, queryset, *, approve: bool):
        form = DecideForm(request.POST if "apply" in request.POST else None, approve=approve)
        if not form.is_valid():
            return action_page(self, request, "admin/billing/amendmentrebill/decide.html", form=form,
                               requests=queryset, action="approve" if approve else "refuse", approve=approve,
                               title="Approve rebilling" if approve else "Refuse rebilling")
        act_on_each(self, request, queryset,
                    lambda row: amendment_rebill_decide(request=row, approve=approve, note=form.cleaned_data["note"],
                                                        actor=request.user, as_of=today()),
                    refused=lambda row, exc: f"Rebilling request {row.pk} is not decided: {exc}")
        return None

    @admin.action(description="Approve: void the bills and bill them again", permissions=["decide"])
    def approve(self, request, queryset):
        return self._decide(request, queryset, approve=True)

    @admin.action(description="Refuse: the bills stand as issued", permissions=["decide"])
    def refuse(self, request, queryset):
        return self._decide(request, queryset, approve=False)
