"""Online payments and the processor's events, autopay enrolments, debit files and their debits, for the clerk to
look at: read only (the webhook, the portal, the commands and billing's services write them). A bank account is
shown by its last four digits; the sealed number is never shown."""

from django.contrib import admin

from .models import AchFile, AutopayDebit, AutopayEnrolment, OnlinePayment, ProcessorEvent


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class EventInline(admin.TabularInline):
    model = ProcessorEvent
    fields = ("received_at", "kind", "event_id", "outcome")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(OnlinePayment)
class OnlinePaymentAdmin(ReadOnly):
    list_display = ("created_at", "account", "amount", "status", "processor", "payment", "receipt_email")
    list_filter = ("status", "processor")
    search_fields = ("account__account_no", "checkout_id", "payment_ref", "payment__reference", "receipt_email")
    list_select_related = ("account", "payment")
    date_hierarchy = "created_at"
    inlines = [EventInline]


@admin.register(ProcessorEvent)
class ProcessorEventAdmin(ReadOnly):
    list_display = ("received_at", "processor", "kind", "event_id", "outcome", "online_payment")
    list_filter = ("processor", "kind")
    search_fields = ("event_id", "outcome")
    list_select_related = ("online_payment__account",)


@admin.register(AutopayEnrolment)
class AutopayEnrolmentAdmin(ReadOnly):
    list_display = ("account", "status", "account_type", "account_last4", "email", "authorized_at")
    list_filter = ("status", "account_type")
    search_fields = ("account__account_no", "holder_name", "email")
    list_select_related = ("account",)
    exclude = ("account_number_sealed",)


class DebitInline(admin.TabularInline):
    model = AutopayDebit
    fields = ("trace_number", "account", "amount", "payment", "returned_code", "returned_on")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(AchFile)
class AchFileAdmin(ReadOnly):
    list_display = ("created_on", "modifier", "effective_on", "entries", "total", "entry_hash", "created_by")
    date_hierarchy = "created_on"
    inlines = [DebitInline]
