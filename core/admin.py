"""Import jobs, to look at: each links to its page on the importing model's upload page."""

from django.contrib import admin

from .models import ImportJob


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
