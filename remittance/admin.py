"""Online payments and the processor's events, for the clerk to look at: read only (the processor's webhook and
billing's services write them)."""

from django.contrib import admin

from .models import OnlinePayment, ProcessorEvent


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
