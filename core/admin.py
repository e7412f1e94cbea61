"""The admin's bases for every app (history with clerk's words, read-only pages and inlines), import jobs and
nightly jobs to look at, and the status history any model with a workflow shows.

An import job links to its page on the importing model's upload page.
"""

from django.contrib import admin
from django.contrib.auth import get_permission_codename
from django.contrib.contenttypes.admin import GenericTabularInline
from simple_history.admin import SimpleHistoryAdmin
from simple_history.template_utils import HistoricalRecordContextHelper

from .models import ImportJob, NightlyRun, NightlyStep, StatusChange


class _ClerkWords(HistoricalRecordContextHelper):
    """History deltas with choice labels instead of stored codes, and a dash for empty."""

    def prepare_delta_change_value(self, change, value):
        field = self.model._meta.get_field(change.field)
        if field.choices and not isinstance(value, list):
            value = dict(field.flatchoices).get(value, value)
        if value is None or value == "":
            return "—"
        return super().prepare_delta_change_value(change, value)


class HistoryAdmin(SimpleHistoryAdmin):
    """The base of every clerk admin for a model with history."""

    def get_historical_record_context_helper(self, request, historical_record):
        return _ClerkWords(self.model, historical_record)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("created_at", "file_name", "noun", "status", "rows_done", "rows_total", "created", "updated",
                    "skipped", "errors_total", "created_by")
    list_filter = ("status", "noun")
    search_fields = ("file_name",)
    exclude = ("content", "errors")
    readonly_fields = ("importer", "noun", "file_name", "file_size", "as_of", "created_by", "created_at", "status",
                       "stage", "rows_total", "rows_done", "started_at", "finished_at", "created", "updated",
                       "skipped", "errors_total", "error_lines", "failure")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class StatusChangeInline(GenericTabularInline):
    """The status history of the object on its admin page, oldest first, read-only. Seen by whoever may
    see the object: ``inlines = (StatusChangeInline,)`` in any admin whose model has a workflow."""

    model = StatusChange
    ct_field, ct_fk_field = "content_type", "object_id"
    fields = readonly_fields = ("at", "from_status", "to_status", "actor", "note")
    extra = 0
    can_delete = False
    verbose_name, verbose_name_plural = "status change", "status history"

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_view_permission(self, request, obj=None):
        opts = self.parent_model._meta
        return request.user.has_perm(f"{opts.app_label}.{get_permission_codename('view', opts)}")


class NightlyStepInline(ReadOnlyInline):
    model = NightlyStep
    fields = readonly_fields = ("position", "name", "status", "started_at", "finished_at", "counts", "error")


@admin.register(NightlyRun)
class NightlyRunAdmin(admin.ModelAdmin):
    """Each night's job, to look at: how far it got, what each step counted, where it stopped and why."""

    list_display = ("run_on", "status", "started_at", "finished_at")
    list_filter = ("status",)
    date_hierarchy = "run_on"
    fields = readonly_fields = ("run_on", "status", "started_at", "finished_at")
    inlines = (NightlyStepInline,)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
