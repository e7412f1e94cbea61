"""Payment plans in the admin: a clerk enters one (the account, the amount, the down payment and installments),
sees each with its standing and schedule, prints its letter, and cancels one; the nightly job defaults a plan
whose installment is missed past the office's grace."""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html

from core.admin import ReadOnlyInline, ServicePagesAdmin
from core.clock import today
from core.money import fmt_dollars

from .documents import plan_letter_pdf
from .forms import PlanForm
from .models import PaymentPlan, PlanInstallment
from .services import plan_standing


class InstallmentInline(ReadOnlyInline):
    model = PlanInstallment
    fields = readonly_fields = ("number", "due_on", "amount")


@admin.register(PaymentPlan)
class PaymentPlanAdmin(ServicePagesAdmin):
    list_display = ("number", "account", "started_on", "total", "status", "standing")
    list_filter = ("status",)
    search_fields = ("account__account_no", "account__owner__name")
    list_select_related = ("account",)
    readonly_fields = ("account", "started_on", "total", "status", "status_note", "status_changed_on", "standing",
                       "letter", "note", "created_by")
    fields = readonly_fields
    inlines = [InstallmentInline]
    form_class = PlanForm
    add_label = "Enter a payment plan"
    intro = ("A deferred payment agreement: what the account owes today, paid by a down payment (0.00 for none) and "
             "monthly installments, each the rest divided evenly to the cent. While the customer keeps to it, a "
             "shut-off waits; an installment unpaid past the office's grace days ends it (the nightly job).")

    def add_title(self) -> str:
        return "Enter a payment plan"

    @admin.display(description="Plan")
    def number(self, obj):
        return obj.number

    @admin.display(description="Standing today")
    def standing(self, obj):
        if obj.status != PaymentPlan.Status.ACTIVE:
            return obj.get_status_display()
        s = plan_standing(obj, as_of=today())
        if not s.good:
            return f"Behind: {s.missed} is missed; the nightly job defaults it"
        nxt = f"; next: {s.next_due}" if s.next_due else ""
        return f"In good standing: {fmt_dollars(s.paid)} paid of {fmt_dollars(obj.total.amount)}{nxt}"

    @admin.display(description="Letter")
    def letter(self, obj):
        return format_html('<a href="{}">Plan letter (PDF)</a>', reverse("admin:arrears_paymentplan_letter",
                                                                          args=[obj.pk]))

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("<int:pk>/letter.pdf", view(self.letter_view), name="arrears_paymentplan_letter"),
                *super().get_urls()]

    def letter_view(self, request, pk):
        if not self.has_view_permission(request):
            raise PermissionDenied
        plan = get_object_or_404(PaymentPlan.objects.select_related("account__premises", "account__owner"), pk=pk)
        response = HttpResponse(plan_letter_pdf(plan), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="plan-{plan.number}.pdf"'
        return response

    def added_url(self, form) -> str:
        return self.object_url(form.plan)
