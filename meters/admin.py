"""Meters, their installations and readings in the clerk's admin, each with its change history."""

from django.contrib import admin

from accounts.admin import HistoryAdmin

from .admin_imports import ReadingImportMixin
from .models import Installation, Meter, Reading


class InstallationInline(admin.TabularInline):
    model = Installation
    fields = ("account", "installed_on", "removed_on")
    autocomplete_fields = ("account",)
    ordering = ("-installed_on",)
    extra = 0


class ReadingInline(admin.TabularInline):
    model = Reading
    fields = ("read_on", "value", "read_type", "source", "note", "entered_by", "entered_at")
    readonly_fields = ("entered_by", "entered_at")
    ordering = ("-read_on", "-id")
    extra = 0
    show_change_link = True

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("entered_by")


@admin.register(Meter)
class MeterAdmin(HistoryAdmin):
    list_display = ("serial", "size", "unit", "make", "dials")
    list_filter = ("size", "unit", "make")
    search_fields = ("serial",)
    inlines = (InstallationInline, ReadingInline)

    def save_formset(self, request, form, formset, change):
        if formset.model is Reading:
            for reading in formset.save(commit=False):
                reading.entered_by = request.user
                reading.save()
            for gone in formset.deleted_objects:
                gone.delete()
            return
        super().save_formset(request, form, formset, change)


@admin.register(Installation)
class InstallationAdmin(HistoryAdmin):
    list_display = ("meter", "account", "installed_on", "removed_on")
    list_select_related = ("meter", "account")
    search_fields = ("meter__serial", "account__account_no")
    autocomplete_fields = ("meter", "account")
    date_hierarchy = "installed_on"


@admin.register(Reading)
class ReadingAdmin(ReadingImportMixin, HistoryAdmin):
    list_display = ("meter", "read_on", "value", "read_type", "source", "entered_by")
    list_select_related = ("meter", "entered_by")
    list_filter = ("read_type", "source")
    search_fields = ("meter__serial", "meter__installations__account__account_no")
    date_hierarchy = "read_on"
    show_full_result_count = False  # a search need not count every reading on file as well
    autocomplete_fields = ("meter",)
    readonly_fields = ("entered_by", "entered_at")
    fields = ("meter", "read_on", "value", "read_type", "source", "note", "entered_by", "entered_at")

    def save_model(self, request, obj, form, change):
        obj.entered_by = request.user
        super().save_model(request, obj, form, change)
