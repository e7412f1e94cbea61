"""Payment plans in the admin: a clerk enters one (the account, the amount, the down payment and installments),
sees each with its standing and schedule, prints its letter, and cancels one; the nightly job defaults a plan
whose installment is missed past the office's grace."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from accounts.models import Account
from core.admin import ReadOnlyInline
from core.clock import today
from core.errors import ApplicationError
from core.money import fmt_dollars

from .documents import plan_letter_pdf
from .forms import PlanForm
from .models import PaymentPlan, PlanInstallment
from .services import plan_create, plan_standing


class InstallmentInline(ReadOnlyInline):
    model = PlanInstallment
    fields = readonly_fields = ("number", "due_on", "amount")


@admin.register(PaymentPlan)
class PaymentPlanAdmin(admin.ModelAdmin):
    list_display = ("number", "account", "started_on", "total", "status", "standing")
    list_filter = ("status",)
    search_fields = ("account__account_no", "account__owner__name")
    list_select_related = ("account",)
    readonly_fields = ("account", "started_on", "total", "status", "status_note", "status_changed_on", "standing",
                       "letter", "note", "created_by")
    fields = readonly_fields
    inlines = [InstallmentInline]

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

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

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = PlanForm(request.POST or None, initial={"account_no": request.GET.get("account", "")})
        if request.method == "POST" and form.is_valid():
            d = form.cleaned_data
            account = Account.objects.filter(account_no=d["account_no"].strip()).first()
            if account is None:
                form.add_error("account_no", f"unknown account '{d['account_no']}'")
            else:
                try:
                    plan = plan_create(account=account, total=d["total"], down_payment=d["down_payment"],
                                       down_due_on=d["down_due_on"], installments=d["installments"],
                                       first_due_on=d["first_due_on"], as_of=today(), actor=request.user,
                                       note=d["note"])
                except ApplicationError as exc:
                    for error in exc.errors:
                        form.add_error(error.field if error.field in form.fields else None, error.message)
                else:
                    messages.success(request, f"Payment plan {plan.number} made for account {account.account_no}: "
                                              "print its letter for the customer.")
                    return HttpResponseRedirect(reverse("admin:arrears_paymentplan_change", args=[plan.pk]))
        return TemplateResponse(request, "admin/arrears/paymentplan/add.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "title": "Enter a payment plan",
            "form": form}, status=400 if form.errors else 200)
