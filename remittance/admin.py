"""Online payments and the processor's events, autopay enrolments, debit files and their debits, for the clerk to
look at: read only (the webhook, the portal, the commands and billing's services write them). A bank account is
shown by its last four digits; the sealed number is never shown."""

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from accounts.models import Account
from core.admin import DATE_WIDGET, ReadOnlyAdmin, ReadOnlyInline, admin_page_register
from core.clock import today
from core.errors import ApplicationError

from .autopay import ach_export_again
from .bank import deposits_reconcile
from .lockbox import exception_post, exception_return
from .models import (
    AchFile,
    AutopayDebit,
    AutopayEnrolment,
    BankDeposit,
    OnlinePayment,
    PaymentException,
    ProcessorEvent,
)
from .processors import processor_configured


class EventInline(ReadOnlyInline):
    model = ProcessorEvent
    fields = ("received_at", "kind", "event_id", "outcome")
    readonly_fields = fields


@admin.register(OnlinePayment)
class OnlinePaymentAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "account", "amount", "status", "processor", "payment", "receipt_email")
    list_filter = ("status", "processor")
    search_fields = ("account__account_no", "checkout_id", "payment_ref", "payment__reference", "receipt_email")
    list_select_related = ("account", "payment")
    date_hierarchy = "created_at"
    inlines = [EventInline]


@admin.register(ProcessorEvent)
class ProcessorEventAdmin(ReadOnlyAdmin):
    list_display = ("received_at", "processor", "kind", "event_id", "outcome", "online_payment")
    list_filter = ("processor", "kind")
    search_fields = ("event_id", "outcome")
    list_select_related = ("online_payment__account",)


@admin.register(AutopayEnrolment)
class AutopayEnrolmentAdmin(ReadOnlyAdmin):
    list_display = ("account", "status", "account_type", "account_last4", "email", "authorized_at")
    list_filter = ("status", "account_type")
    search_fields = ("account__account_no", "holder_name", "email")
    list_select_related = ("account",)
    exclude = ("account_number_sealed",)


class DebitInline(ReadOnlyInline):
    model = AutopayDebit
    fields = ("trace_number", "account", "amount", "payment", "returned_code", "returned_on")
    readonly_fields = fields


@admin.register(AchFile)
class AchFileAdmin(ReadOnlyAdmin):
    """The debit files made: each kept sealed, so the file the bank did not get is downloaded again, identical."""

    list_display = ("created_on", "modifier", "effective_on", "same_day", "entries", "total", "written_at",
                    "download", "created_by")
    date_hierarchy = "created_on"
    exclude = ("sealed_text",)
    readonly_fields = ("download",)
    inlines = [DebitInline]

    def get_urls(self):
        return [path("<int:pk>/nacha/", self.admin_site.admin_view(self.nacha_view), name="remittance_achfile_nacha"),
                *super().get_urls()]

    @admin.display(description="The file for the bank")
    def download(self, obj):
        if not obj.sealed_text:
            return "not kept (made before files were kept)"
        return format_html('<a href="{}">Download again (identical)</a>',
                           reverse("admin:remittance_achfile_nacha", args=[obj.pk]))

    def nacha_view(self, request, pk):
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            exported = ach_export_again(file_id=pk)
        except ApplicationError as exc:
            messages.error(request, exc.errors[0].message)
            return redirect("admin:remittance_achfile_changelist")
        response = HttpResponse(exported.text, content_type="text/plain; charset=us-ascii")
        response["Content-Disposition"] = (f'attachment; filename="ach-{exported.file.created_on}-'
                                           f'{exported.file.modifier}.txt"')
        response["Cache-Control"] = "no-store"
        return response


class ResolveForm(forms.ModelForm):
    post_to = forms.CharField(label="Post it to account", required=False, max_length=20,
                              help_text="The account number the payment belongs to (from the check, the payer's "
                                        "letter or a call).")
    sent_back = forms.BooleanField(label="It was sent back to the payer", required=False)
    resolution = forms.CharField(label="Note", required=False, widget=forms.Textarea(attrs={"rows": 3}),
                                 help_text="How it was resolved; required when it was sent back.")

    class Meta:
        model = PaymentException
        fields: list[str] = []

    def clean(self):
        data = super().clean()
        post_to, sent_back = (data.get("post_to") or "").strip(), data.get("sent_back")
        if bool(post_to) == bool(sent_back):
            raise forms.ValidationError("Either name the account to post it to, or say it was sent back.")
        if post_to and not Account.objects.filter(account_no=post_to).exists():
            self.add_error("post_to", f"unknown account '{post_to}'")
        if sent_back and not (data.get("resolution") or "").strip():
            self.add_error("resolution", "is required: how it was sent back")
        return data


@admin.register(PaymentException)
class PaymentExceptionAdmin(admin.ModelAdmin):
    """The exceptions queue: payments the bank deposited that matched no account, each posted by a clerk to the
    account it belongs to or recorded as sent back."""

    form = ResolveForm
    list_display = ("received_on", "reference", "amount", "check_number", "reason", "status")
    list_filter = ("status", "source")
    search_fields = ("reference", "check_number", "read")
    readonly_fields = ("source", "reference", "received_on", "amount", "check_number", "read", "reason", "status",
                       "payment", "note", "resolved_at", "resolved_by")

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and (obj is None
                                                                 or obj.status == PaymentException.Status.OPEN)

    def get_fields(self, request, obj=None):
        fields = list(self.readonly_fields)
        if obj is not None and obj.status == PaymentException.Status.OPEN:
            fields += ["post_to", "sent_back", "resolution"]
        return fields

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if data.get("post_to"):
            exception_post(exception=obj, account_no=data["post_to"].strip(), note=data.get("resolution", ""),
                           actor=request.user)
            messages.success(request, f"{obj.reference} posted to account {data['post_to'].strip()}.")
        else:
            exception_return(exception=obj, note=data["resolution"], actor=request.user)


@admin.register(BankDeposit)
class BankDepositAdmin(ReadOnlyAdmin):
    list_display = ("posted_on", "channel", "type_code", "description", "amount", "bank_reference",
                    "customer_reference", "text", "payment")
    list_filter = ("channel", "type_code")
    list_select_related = ("payment",)
    date_hierarchy = "posted_on"
    search_fields = ("bank_reference", "customer_reference", "text")


class DayForm(forms.Form):
    on = forms.DateField(label="Day", widget=DATE_WIDGET)


def deposits_view(request):
    if not request.user.has_perm("billing.view_payment"):
        raise PermissionDenied
    form = DayForm(request.GET if "on" in request.GET else None, initial={"on": today()})
    result = None
    if form.is_bound and form.is_valid():
        result = deposits_reconcile(on=form.cleaned_data["on"], processor=processor_configured())
    return TemplateResponse(request, "admin/remittance/deposits.html", {
        **admin.site.each_context(request), "title": "Deposits reconciliation", "form": form, "result": result,
        "payout_days": settings.PROCESSOR_PAYOUT_DAYS})


admin_page_register(admin.site, "deposits/", deposits_view, "deposits")
